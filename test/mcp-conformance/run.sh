#!/usr/bin/env bash
# Runs the MCP client conformance suite (npm @modelcontextprotocol/conformance, pinned in
# package.json) against agentls: each client scenario starts its test server and runs
# `agentls mcp conformance-client URL`, which connects agentls's MCP client to it and
# makes the scenario's call; OAuth's browser step is done by browser.mjs as $BROWSER.
# Each scenario runs a second time in the user mode: user-client.sh reaches the server
# as a person does (a settings.json, `agentls mcp auth` where it needs authorization,
# then `agentls run` of the tool in a new process, or `agentls tools`). baseline.yml names the scenarios expected to fail in the first
# mode, baseline-user.yml in the user mode, each with the reason; a failure not named
# there, or a named one that passes, fails the run. MODES (default "client user")
# chooses the modes.
#
# The suite needs Node 22+ (fs.globSync): it runs on the Node 24 of the VS Code tests
# (editors/vscode/test/tools/node24), installed into the same cache when missing.
# AGENTLS_BIN names the binary under test (built from this checkout without it).
# Arguments name scenarios to run instead of all of them.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../editors/vscode/test/paths.sh"

if [ ! -f "$NODE24_DIR/.complete" ]; then
	echo "mcp-conformance: installing Node 24 into $NODE24_DIR" >&2
	rm -rf "$NODE24_DIR.tmp"
	mkdir -p "$NODE24_DIR.tmp"
	cp "$REPO/editors/vscode/test/tools/node24/package.json" "$REPO/editors/vscode/test/tools/node24/package-lock.json" "$NODE24_DIR.tmp/"
	(cd "$NODE24_DIR.tmp" && npm ci --no-audit --no-fund --loglevel=error >&2)
	touch "$NODE24_DIR.tmp/.complete"
	rm -rf "$NODE24_DIR"
	mv "$NODE24_DIR.tmp" "$NODE24_DIR"
fi
export PATH="$NODE24_BIN:$PATH"

cd "$HERE"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi
if [ -z "${AGENTLS_BIN:-}" ]; then
	bin_dir=$(mktemp -d)
	trap 'rm -rf "$bin_dir"' EXIT
	(cd "$REPO" && PATH="$PATH:/usr/local/go/bin" go build -o "$bin_dir/agentls" ./cmd/agentls)
	AGENTLS_BIN="$bin_dir/agentls"
fi
export BROWSER="$NODE24_BIN/node $HERE/browser.mjs"
out=$(mktemp -d)
trap 'rm -rf "${bin_dir:-}" "$out"' EXIT

conformance() { node node_modules/@modelcontextprotocol/conformance/dist/index.js "$@"; }
if [ $# -gt 0 ]; then
	scenarios=("$@")
else
	mapfile -t scenarios < <(conformance list | sed -n '/^Client scenarios/,$s/^  - \([^ ]*\).*/\1/p')
fi
[ ${#scenarios[@]} -gt 0 ] || { echo "mcp-conformance: the suite lists no client scenarios" >&2; exit 1; }

# One scenario at a time (the machine has 2 cores); each is bounded by --timeout.
export AGENTLS_BIN
failed=()
runs=0
run() { # mode scenario command baseline
	local mode=$1 s=$2 command=$3 baseline=$4
	runs=$((runs + 1))
	rm -rf "$out"/*
	if conformance client --command "$command" --scenario "$s" \
		--timeout 30000 --expected-failures "$baseline" -o "$out" >"$out/log" 2>&1; then
		if grep -q 'Expected failures (in baseline)' "$out/log"; then
			echo "ok   $mode $s (an expected failure: see $baseline)"
		else
			echo "ok   $mode $s"
		fi
	else
		echo "FAIL $mode $s"
		sed 's/^/    /' "$out/log" | tail -n 40
		for f in "$out/$s"-*/stderr.txt; do
			[ -f "$f" ] && { echo "    agentls's stderr:"; sed 's/^/      /' "$f" | tail -n 20; }
		done
		failed+=("$mode:$s")
	fi
}
for s in "${scenarios[@]}"; do
	for mode in ${MODES:-client user}; do
		case $mode in
		client) run client "$s" "$AGENTLS_BIN mcp conformance-client" baseline.yml ;;
		user) run user "$s" "$HERE/user-client.sh" baseline-user.yml ;;
		*) echo "mcp-conformance: unknown mode $mode; want client or user" >&2; exit 2 ;;
		esac
	done
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "mcp-conformance: ${#failed[@]} of $runs runs failed unexpectedly: ${failed[*]}" >&2
	exit 1
fi
echo "mcp-conformance: $runs runs of ${#scenarios[@]} client scenarios as expected (baseline.yml, baseline-user.yml)"
