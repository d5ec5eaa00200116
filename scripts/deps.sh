#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine: ripgrep for grep_search's rg
# engine (the pure-Go engine is tested either way), script(1), and the npm MCP servers
# of test/mcp.
# Needs root for apt-get, as on CI; on a machine that already has everything it does
# nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v bash >/dev/null 2>&1 || missing+=(bash)
# script(1), the terminal of the MCP conformance suite's user mode (bsdutils is essential
# in Debian, but a trimmed image may lack it).
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps.sh: please install: ${missing[*]} (needs root)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v go >/dev/null 2>&1 || { echo "deps.sh: Go 1.26 is needed (https://go.dev/dl)" >&2; exit 1; }
# The real MCP servers of the tools/mcp tests (and the Neovim chat's MCP prompt test).
command -v npm >/dev/null 2>&1 || { echo "deps.sh: npm is needed for the MCP servers of the tests" >&2; exit 1; }
if [ ! -f test/mcp/node_modules/.package-lock.json ] || [ test/mcp/package-lock.json -nt test/mcp/node_modules/.package-lock.json ]; then
  (cd test/mcp && npm ci --no-audit --no-fund --loglevel=error)
fi
