#!/usr/bin/env bash
# Runs the ACP tests of `agentls acp` with the official TypeScript SDK
# (@agentclientprotocol/sdk, pinned in package.json) as the client: npm ci when
# node_modules is missing (or older than package-lock.json), then node --test, then a
# summary line "N passed, N failed". Exits nonzero when a test fails.
# AGENTLS_BIN names the binary under test, FAKEGEMINI_BIN the fake Gemini API; without
# them they are built from this checkout. Extra arguments go to node --test (e.g.
# --test-name-pattern=cancel).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${AGENTLS_BIN:-}" ]; then
	(cd ../.. && PATH="$PATH:/usr/local/go/bin" go build -o "$tmp/agentls" ./cmd/agentls)
	export AGENTLS_BIN="$tmp/agentls"
fi
if [ -z "${FAKEGEMINI_BIN:-}" ]; then
	(cd ../.. && PATH="$PATH:/usr/local/go/bin" go build -o "$tmp/fakegemini" ./internal/fakegemini/cmd/fakegemini)
	export FAKEGEMINI_BIN="$tmp/fakegemini"
fi
# One test at a time: each starts its own agent, and the machine has 2 cores.
status=0
node --test --test-concurrency=1 "$@" ./*.test.js | tee "$tmp/out" || status=$?
pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tmp/out" | tail -1)
fail=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tmp/out" | tail -1)
echo "acp: ${pass:-0} passed, ${fail:-0} failed"
if [ "$status" -eq 0 ] && [ "${pass:-0}" -eq 0 ]; then
	echo "acp: no test ran" >&2
	status=1
fi
exit "$status"
