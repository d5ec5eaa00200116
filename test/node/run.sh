#!/usr/bin/env bash
# Runs the node protocol tests against agentls: npm ci when node_modules is missing (or
# older than package-lock.json), then node --test, whose summary lines end the output.
# AGENTLS_BIN names the binary under test, FAKEGEMINI_BIN the fake Gemini API; without them
# they are built from this checkout.
# Extra arguments go to node --test (e.g. --test-name-pattern=progress).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi
if [ -z "${AGENTLS_BIN:-}" ]; then
	bin_dir=$(mktemp -d)
	trap 'rm -rf "$bin_dir"' EXIT
	(cd ../.. && PATH="$PATH:/usr/local/go/bin" go build -o "$bin_dir/agentls" ./cmd/agentls)
	export AGENTLS_BIN="$bin_dir/agentls"
fi
# The prompt tests point agentls at a fake Gemini API (internal/fakegemini).
if [ -z "${FAKEGEMINI_BIN:-}" ]; then
	fake_dir=$(mktemp -d)
	trap 'rm -rf "${bin_dir:-}" "$fake_dir"' EXIT
	(cd ../.. && PATH="$PATH:/usr/local/go/bin" go build -o "$fake_dir/fakegemini" ./internal/fakegemini/cmd/fakegemini)
	export FAKEGEMINI_BIN="$fake_dir/fakegemini"
fi
# One test file at a time: every test starts its own server, and the machine has 2 cores.
node --test --test-concurrency=1 "$@" ./*.test.js
