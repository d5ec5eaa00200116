#!/usr/bin/env bash
# The VS Code extension's tests: unit tests under node, then the end-to-end scenarios in
# a real VS Code (code-server + Chromium + puppeteer-core) with the extension installed
# from its .vsix, against the agentls binary and the fake Gemini API.
#
# usage: editors/vscode/test/run.sh [SCENARIO...]   (default: all; names as printed)
#
# Runs deps.sh first (installs what is missing; cached). Builds agentls and fakegemini
# from this checkout unless AGENTLS_BIN / FAKEGEMINI_BIN name them. Prints
# "N passed, M failed" last and exits nonzero when anything failed or nothing ran.
# E2E_ARTIFACTS=DIR keeps screenshots and logs of failed scenarios there (default: a
# temporary directory, printed); E2E_VERBOSE=1 narrates; E2E_KEEP=1 keeps the temporary
# directories; E2E_SKIP_UNIT=1 runs the end-to-end scenarios alone.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/paths.sh"
export PATH="$PATH:/usr/local/go/bin"

"$HERE/deps.sh"
export PATH="$NODE24_BIN:$PATH"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentls-vscode-test.XXXXXX")
cleanup() { [ "${E2E_KEEP:-}" = 1 ] || rm -rf "$TMP"; }
trap cleanup EXIT

if [ -n "${AGENTLS_BIN:-}" ]; then
  cp "$AGENTLS_BIN" "$TMP/agentls"
else
  (cd "$REPO" && go build -o "$TMP/agentls" ./cmd/agentls)
fi
if [ -n "${FAKEGEMINI_BIN:-}" ]; then
  cp "$FAKEGEMINI_BIN" "$TMP/fakegemini"
else
  (cd "$REPO" && go build -o "$TMP/fakegemini" ./internal/fakegemini/cmd/fakegemini)
fi
export AGENTLS_BIN="$TMP/agentls" FAKEGEMINI_BIN="$TMP/fakegemini" CODE_SERVER_BIN

# Build, unit-test and package the extension.
cd "$VSCODE_DIR"
npm run --silent build
passed=0 failed=0
if [ "${E2E_SKIP_UNIT:-}" != 1 ]; then
  echo "== unit tests (node --test)"
  set +e
  node --test test/unit/*.test.js >"$TMP/unit.log" 2>&1
  unit_rc=$?
  set -e
  cat "$TMP/unit.log"
  up=$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$TMP/unit.log" | tail -n 1)
  uf=$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$TMP/unit.log" | tail -n 1)
  passed=$((passed + ${up:-0})); failed=$((failed + ${uf:-0}))
  if [ "$unit_rc" -ne 0 ] && [ "${uf:-0}" -eq 0 ]; then failed=$((failed + 1)); fi
fi
npx --no-install vsce package --no-dependencies --skip-license -o "$TMP/agentls.vsix" >"$TMP/vsce.log" 2>&1 \
  || { cat "$TMP/vsce.log"; echo "run.sh: vsce package failed"; exit 1; }

# Install the .vsix the way a user does, into an extensions directory the scenarios copy,
# with the test probe beside it.
(cd test/e2e/probe && "$VSCODE_DIR/node_modules/.bin/vsce" package --skip-license --allow-missing-repository \
  -o "$TMP/probe.vsix" >>"$TMP/vsce.log" 2>&1) || { cat "$TMP/vsce.log"; echo "run.sh: packaging the probe failed"; exit 1; }
mkdir -p "$TMP/extensions" "$TMP/user-data" "$TMP/home"
HOME="$TMP/home" XDG_CONFIG_HOME="$TMP/home/.config" XDG_DATA_HOME="$TMP/home/.local/share" \
  "$CODE_SERVER_BIN" --extensions-dir "$TMP/extensions" --user-data-dir "$TMP/user-data" \
  --install-extension "$TMP/agentls.vsix" --install-extension "$TMP/probe.vsix" >"$TMP/install.log" 2>&1 \
  || { cat "$TMP/install.log"; echo "run.sh: installing the .vsix into code-server failed"; exit 1; }
for ext in agentls.agentls- agentls-test.probe-; do
  ls "$TMP/extensions" | grep -q "^$ext" || { cat "$TMP/install.log"; echo "run.sh: ${ext%-} did not install"; exit 1; }
done
export E2E_EXTENSIONS="$TMP/extensions" E2E_TMP="$TMP"
# The real MCP server of the MCP scenario (test/mcp, installed by deps.sh).
export MCP_EVERYTHING="$REPO/test/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if [ -z "${E2E_ARTIFACTS:-}" ]; then
  E2E_ARTIFACTS=$(mktemp -d "${TMPDIR:-/tmp}/agentls-vscode-artifacts.XXXXXX")
fi
export E2E_ARTIFACTS

echo "== end-to-end scenarios (code-server $("$CODE_SERVER_BIN" --version | head -n 1 | cut -d' ' -f1), $(chromium --version 2>/dev/null | head -n 1))"
set +e
timeout 900 node test/e2e/run.js "$@" | tee "$TMP/e2e.log"
e2e_rc=${PIPESTATUS[0]}
set -e
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$TMP/e2e.log" | tail -n 1 || true)
if [ -n "$line" ]; then
  read -r ep _ ef _ <<<"$line"
  passed=$((passed + ep)); failed=$((failed + ef))
  if [ "$e2e_rc" -ne 0 ] && [ "$ef" -eq 0 ]; then failed=$((failed + 1)); fi
else
  echo "run.sh: the end-to-end run did not finish (exit $e2e_rc)"
  failed=$((failed + 1))
fi
if [ "$failed" -gt 0 ]; then
  echo "screenshots and logs of failures: $E2E_ARTIFACTS"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
