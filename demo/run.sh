#!/usr/bin/env bash
# The main job (make demo): agentls working on a small Go package whose test fails.
#
# With a terminal, Neovim opens on a copy of demo/sample with the agentls plugin and the
# prompt already sent: the chat streams the answer, the edit arrives in the diff tab for
# you to accept, the shell output streams as progress. Without a terminal the same
# session runs headless (edits and commands approved by --approval-mode yolo, in the
# temporary copy only) and its transcript is printed.
#
# With GEMINI_API_KEY (or GOOGLE_API_KEY) set, the model is Gemini and your own agentls
# settings apply. Without one, a recorded model replays demo/script.json — the demo says
# so — while the tools, the diff and the shell are real.
#
# Environment: NVIM (a Neovim 0.10+ to use), AGENTLS_DEMO_HEADLESS=1 (never open Neovim).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
PROMPT="The test of this Go package fails. Find out why, fix it, and run the tests."

(cd "$REPO" && go build -o bin/agentls ./cmd/agentls)
AGENTLS="$REPO/bin/agentls"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/agentls-demo.XXXXXX")
cp -R "$HERE/sample" "$WORK/greet"
if [ -n "${GEMINI_API_KEY:-}${GOOGLE_API_KEY:-}" ]; then
  echo "agentls demo: talking to Gemini (GEMINI_API_KEY is set)." >&2
else
  echo "agentls demo: no GEMINI_API_KEY set — this is a SCRIPTED demo: a recorded model" >&2
  echo "replays demo/script.json; the tools, the diff and the shell are real." >&2
  # A private configuration, so the recorded model never meets your own settings.
  export XDG_CONFIG_HOME="$WORK/config" XDG_STATE_HOME="$WORK/state"
  mkdir -p "$XDG_CONFIG_HOME/agentls"
  printf '{"provider": {"type": "scripted", "script": "%s"}}\n' "$HERE/script.json" \
    >"$XDG_CONFIG_HOME/agentls/settings.json"
fi
echo "agentls demo: working in $WORK/greet" >&2

find_nvim() {
  local n
  for n in "${NVIM:-}" "$(command -v nvim || true)"; do
    if [ -n "$n" ] && "$n" --headless -u NONE -c 'if !has("nvim-0.10") | cquit 1 | endif' -c 'qall!' 2>/dev/null; then
      echo "$n"; return
    fi
  done
  if [ -x "$REPO/scripts/build-nvim.sh" ]; then
    "$REPO/scripts/build-nvim.sh" 0.10.4 | tail -n 1
  fi
}

if [ -t 0 ] && [ -t 1 ] && [ -z "${AGENTLS_DEMO_HEADLESS:-}" ]; then
  NVIM_BIN=$(find_nvim)
  if [ -n "$NVIM_BIN" ]; then
    AGENTLS_BIN="$AGENTLS" AGENTLS_NVIM_PLUGIN="$REPO/editors/nvim" AGENTLS_DEMO_PROMPT="$PROMPT" \
      exec "$NVIM_BIN" -u "$HERE/init.lua" "$WORK/greet/greet.go"
  fi
  echo "agentls demo: no Neovim 0.10+ found (set NVIM); running headless." >&2
fi

cd "$WORK/greet"
echo "\$ agentls prompt --approval-mode yolo \"$PROMPT\"" >&2
set +e
"$AGENTLS" prompt --approval-mode yolo "$PROMPT"
rc=$?
set -e
echo >&2
echo "agentls demo: what changed:" >&2
diff -u "$HERE/sample/greet.go" "$WORK/greet/greet.go" | sed "s#$HERE/sample/#a/#; s#$WORK/greet/#b/#" || true
exit $rc
