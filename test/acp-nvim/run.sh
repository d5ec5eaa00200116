#!/usr/bin/env bash
# A real ACP editor client driving `agentls acp`: CodeCompanion.nvim (vendored under
# vendor/, see VENDORED.md) in headless Neovim 0.12.4, through the README matrix's
# scenario (codecompanion_test.lua) against the fake Gemini server.
#
# usage: test/acp-nvim/run.sh
#
# Gets Neovim 0.12.4 through scripts/build-nvim.sh (cached), the Markdown tree-sitter
# grammar CodeCompanion's chat buffer needs from the npm registry (pinned in
# package-lock.json; npm ci when node_modules is missing or older than the lock) and
# compiles its two parsers with cc into the cache (a few seconds, once). Builds agentls
# and internal/fakegemini/cmd/fakegemini unless AGENTLS_BIN and FAKEGEMINI_BIN name
# them. Prints a PASS or FAIL line per case and "acp-nvim: N passed, M failed"; exits
# nonzero when a case failed or none ran. Environment: NVIM (a Neovim 0.12 to use
# instead), ACP_NVIM_VERBOSE=1 (the chat buffer at the end, CodeCompanion's debug log),
# ACP_NVIM_TIMEOUT (milliseconds per wait, default 20000).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/agentls-test

TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentls-acp-nvim.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

NVIM=${NVIM:-$("$REPO/scripts/build-nvim.sh" 0.12.4 | tail -n 1)}
"$NVIM" --headless -u NONE -c 'if !has("nvim-0.12") | cquit 1 | endif' -c 'qall!' \
  || { echo "acp-nvim: $NVIM is not Neovim 0.12 or later" >&2; exit 2; }

# The Markdown grammar (markdown and markdown_inline), compiled for Neovim once per
# version of the package: Neovim's own build here has no parsers.
(
  cd "$HERE"
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --ignore-scripts --omit=peer --no-audit --no-fund --loglevel=error
  fi
)
GRAMMAR=$HERE/node_modules/@tree-sitter-grammars/tree-sitter-markdown
GVER=$(node -p "require('$GRAMMAR/package.json').version")
PARSERS=$CACHE/tree-sitter-markdown-$GVER
if [ ! -s "$PARSERS/parser/markdown.so" ] || [ ! -s "$PARSERS/parser/markdown_inline.so" ]; then
  if ! command -v cc >/dev/null && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev >/dev/null
  fi
  command -v cc >/dev/null || { echo "acp-nvim: no C compiler (cc) for the Markdown parsers" >&2; exit 2; }
  mkdir -p "$PARSERS/parser"
  for lang in markdown markdown_inline; do
    src=$GRAMMAR/tree-sitter-${lang//_/-}/src
    cc -O2 -fPIC -shared -I"$src" "$src/parser.c" "$src/scanner.c" -o "$TMP/$lang.so"
    mv "$TMP/$lang.so" "$PARSERS/parser/$lang.so"
  done
fi

if [ -n "${AGENTLS_BIN:-}" ]; then
  cp "$AGENTLS_BIN" "$TMP/agentls"
  [ ! -x "$(dirname "$AGENTLS_BIN")/agentls-sandbox" ] || cp "$(dirname "$AGENTLS_BIN")/agentls-sandbox" "$TMP/"
else
  (cd "$REPO" && go build -o "$TMP/agentls" ./cmd/agentls)
fi
if [ -n "${FAKEGEMINI_BIN:-}" ]; then
  cp "$FAKEGEMINI_BIN" "$TMP/fakegemini"
else
  (cd "$REPO" && go build -o "$TMP/fakegemini" ./internal/fakegemini/cmd/fakegemini)
fi

# A private home: no user settings, sessions, keys or CodeCompanion state play a part.
mkdir -p "$TMP/home" "$TMP/config" "$TMP/state" "$TMP/data" "$TMP/tmp" "$TMP/work"
export HOME="$TMP/home" XDG_CONFIG_HOME="$TMP/config" XDG_STATE_HOME="$TMP/state" XDG_DATA_HOME="$TMP/data"
unset GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_GEMINI_BASE_URL GOOGLE_GENAI_USE_VERTEXAI OPENAI_API_KEY AGENTLS_TRUST_WORKSPACE
export AGENTLS_BIN="$TMP/agentls" FAKEGEMINI_BIN="$TMP/fakegemini" ACP_NVIM_VENDOR="$HERE/vendor" ACP_NVIM_PARSERS="$PARSERS" ACP_NVIM_WORK="$TMP/work"
export TMPDIR="$TMP/tmp"

echo "=== $("$NVIM" --version | head -n 1) ($NVIM), CodeCompanion.nvim $(sed -n 's/^- codecompanion.nvim at commit `\([0-9a-f]*\)`.*/\1/p' "$HERE/VENDORED.md")"
log=$TMP/out.log
set +e
timeout "${ACP_NVIM_FILE_TIMEOUT:-300}" "$NVIM" --headless -n -u NONE -i NONE \
  -c "luafile $HERE/codecompanion_test.lua" </dev/null >"$log" 2>"$log.err"
rc=$?
set -e
cat "$log"
passed=0 failed=0
line=$(grep '^RESULT ' "$log" | tail -n 1 || true)
if [ -n "$line" ]; then
  read -r _ passed failed <<<"$line"
  if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; echo "FAIL nvim exited $rc"; fi
else
  failed=$((failed + 1))
  echo "FAIL codecompanion_test.lua did not finish (exit $rc)"
fi
if [ "$rc" -ne 0 ]; then
  [ ! -s "$log.err" ] || { echo "-- stderr:"; tail -n 40 "$log.err"; }
  for f in "$TMP"/work/*.agentls.log; do [ -f "$f" ] && { echo "-- agentls log:"; tail -n 40 "$f"; }; done
  [ ! -f "$TMP/state/nvim/codecompanion.log" ] || { echo "-- CodeCompanion log:"; tail -n 40 "$TMP/state/nvim/codecompanion.log"; }
fi
echo "acp-nvim: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
