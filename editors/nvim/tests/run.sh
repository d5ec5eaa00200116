#!/usr/bin/env bash
# Headless Neovim tests of the agentls plugin against the real agentls binary.
#
# usage: editors/nvim/tests/run.sh [TEST_FILE...]   (default: every tests/*_test.lua)
#
# Builds agentls from the repository, gets Neovim 0.10.4 and 0.12.4 through
# scripts/build-nvim.sh (cached; about two minutes each the first time), runs each test
# file in its own `nvim --headless -n -u NONE -i NONE` on each version, and prints
# "N passed, M failed".
# Exits nonzero if any test failed, a file did not finish, or nothing ran.
# Builds internal/fakegemini/cmd/fakegemini too, for the prompt tests (which report SKIP
# without it), and installs gopls (scripts/gopls.sh, AGENTLS_GOPLS to use another). Environment: NVIM (use only this nvim instead of building them),
# AGENTLS_NVIM_VERSIONS (the versions to build and run, default "0.10.4 0.12.4"), AGENTLS_BIN and
# FAKEGEMINI_BIN (use these binaries instead of building them), AGENTLS_TEST_VERBOSE=1
# (print notifications), AGENTLS_TEST_FILE_TIMEOUT (seconds per file, default 180).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PLUGIN=$(cd "$HERE/.." && pwd)
REPO=$(cd "$PLUGIN/../.." && pwd)
export PATH="$PATH:/usr/local/go/bin"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentls-nvim-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

NVIMS=()
if [ -n "${NVIM:-}" ]; then
  NVIMS=("$NVIM")
else
  BUILD="$REPO/scripts/build-nvim.sh"
  [ -x "$BUILD" ] || { echo "run.sh: $BUILD not found; set NVIM to a Neovim 0.10+ binary" >&2; exit 2; }
  for v in ${AGENTLS_NVIM_VERSIONS:-0.10.4 0.12.4}; do
    NVIMS+=("$("$BUILD" "$v" | tail -n 1)")
  done
fi
for n in "${NVIMS[@]}"; do
  "$n" --headless -u NONE -c 'if !has("nvim-0.10") | cquit 1 | endif' -c 'qall!' \
    || { echo "run.sh: $n is not Neovim 0.10 or later" >&2; exit 2; }
done

if [ -n "${AGENTLS_BIN:-}" ]; then
  cp "$AGENTLS_BIN" "$TMP/agentls"
else
  (cd "$REPO" && go build -o "$TMP/agentls" ./cmd/agentls)
fi
# The fake Gemini server the prompt tests script (they are skipped without it).
unset AGENTLS_FAKEGEMINI
if [ -n "${FAKEGEMINI_BIN:-}" ]; then
  cp "$FAKEGEMINI_BIN" "$TMP/fakegemini"
  export AGENTLS_FAKEGEMINI="$TMP/fakegemini"
elif compgen -G "$REPO/internal/fakegemini/cmd/fakegemini/*.go" >/dev/null; then
  (cd "$REPO" && go build -o "$TMP/fakegemini" ./internal/fakegemini/cmd/fakegemini)
  export AGENTLS_FAKEGEMINI="$TMP/fakegemini"
fi

# gopls, pinned, for the tests of the editor's diagnostics (scripts/gopls.sh). Go's caches
# stay the user's: the private home below would make gopls start from cold ones.
if [ -z "${AGENTLS_GOPLS:-}" ]; then
  AGENTLS_GOPLS=$("$REPO/scripts/gopls.sh" | tail -n 1)
fi
export AGENTLS_GOPLS GOCACHE="${GOCACHE:-$(go env GOCACHE)}" GOMODCACHE="${GOMODCACHE:-$(go env GOMODCACHE)}"

# A private home, so user settings, memories and swap files play no part.
mkdir -p "$TMP/home" "$TMP/config" "$TMP/state" "$TMP/data"
export HOME="$TMP/home" XDG_CONFIG_HOME="$TMP/config" XDG_STATE_HOME="$TMP/state" XDG_DATA_HOME="$TMP/data"
unset GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_GEMINI_BASE_URL AGENTLS_TRUST_WORKSPACE
export AGENTLS_BIN="$TMP/agentls" AGENTLS_NVIM_PLUGIN="$PLUGIN"
export TMPDIR="$TMP"

if [ $# -gt 0 ]; then files=("$@"); else files=("$HERE"/*_test.lua); fi
passed=0 failed=0 skipped=0
for NVIM in "${NVIMS[@]}"; do
ver=$("$NVIM" --version | head -n 1)
echo "=== $ver ($NVIM)"
for f in "${files[@]}"; do
  f=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
  echo "== $(basename "$f") on $ver"
  log="$TMP/$(basename "$f").log"
  set +e
  timeout "${AGENTLS_TEST_FILE_TIMEOUT:-180}" "$NVIM" --headless -n -u NONE -i NONE \
    -c "luafile $f" </dev/null >"$log" 2>"$log.err"
  rc=$?
  set -e
  cat "$log"
  skipped=$((skipped + $(grep -c '^SKIP ' "$log" || true)))
  line=$(grep '^RESULT ' "$log" | tail -n 1 || true)
  if [ -n "$line" ]; then
    read -r _ p m <<<"$line"
    passed=$((passed + p)); failed=$((failed + m))
    if [ "$rc" -ne 0 ] && [ "$m" -eq 0 ]; then failed=$((failed + 1)); echo "FAIL $(basename "$f"): nvim exited $rc"; fi
  else
    failed=$((failed + 1))
    echo "FAIL $(basename "$f"): did not finish (exit $rc)"
  fi
  if [ "$rc" -ne 0 ] && [ -s "$log.err" ]; then
    echo "-- stderr of $(basename "$f"):"; tail -n 40 "$log.err"
  fi
done
done
[ "$skipped" -eq 0 ] || echo "$skipped skipped (see SKIP above)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
