#!/usr/bin/env bash
# Reruns every benchmark recorded in BENCHMARKS.md, each beside its reference in the same
# run. Run from the repository root (make bench does).
#
# BENCH_QUICK=1 (make benchcheck, part of make test): every script and benchmark once, in
# its shortest form: one iteration, no Gemini CLI (no npm install), every run's own checks
# kept, the time and memory targets printed but not enforced. It keeps the scripts from
# rotting; its figures mean nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=${BENCH_QUICK:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# gobench ARGS...: go test's benchmarks; under BENCH_QUICK one iteration, one count. A
# pattern that matches no benchmark (one renamed or removed) fails.
gobench() {
	if [ -n "$quick" ]; then
		local args=() a
		for a in "$@"; do
			case $a in -benchtime=* | -count=*) ;; *) args+=("$a") ;; esac
		done
		set -- "${args[@]}" -benchtime=1x -count=1
	fi
	go test -run='^$' "$@" | tee "$out"
	grep -q '^Benchmark' "$out" || { echo "bench/run.sh: no benchmark ran: go test $*" >&2; exit 1; }
}
echo "== search"; bench/search.sh
echo "== shell"; bench/shell.sh
echo "== sandbox: true, go test, 50 MB, beside unshare, bwrap, Codex CLI and srt (npm install of the last two on first run)"; bench/sandbox.sh
echo "== replace in a 10 MB file"
gobench -bench='^BenchmarkReplace10MB' -benchtime=20x -count=3 ./tools/files
echo "== diffs, walking"
gobench -bench='BenchmarkUnifiedDiff10MB|BenchmarkTextEdits10MB|BenchmarkWalkGoroot' -count=3 ./workspace
echo "== scheduler, policy"
gobench -bench='BenchmarkSchedulerRun' -benchmem -count=3 ./tools
gobench -bench='BenchmarkDecideShell' -benchmem ./confirm
echo "== checkpoints of shell commands: 10 files changed in the 200,000-file tree, bare and checkpointed; the store of 500 turns"
gobench -bench='BenchmarkCheckpoint200k|BenchmarkWatchOverhead' -benchtime=30x ./checkpoint
gobench -bench='BenchmarkStore500Turns' -benchtime=1x ${quick:+-short} ./checkpoint
echo "== editor server"
gobench -bench=. -benchtime=2000x ./rpc
echo "== the editor's diagnostics: edit applied to gopls's (TypeScript's) report per client"
bench/diagnostics.sh
echo "== MCP: echo overhead, eight servers connecting in parallel"
bench/mcp.sh
echo "== agent session end to end, beside Gemini CLI (npm install of @google/gemini-cli on first run)"
bench/agent.sh
echo "== ACP: agentls acp beside Gemini CLI --acp, session/list over 1,000 sessions (npm install of @google/gemini-cli on first run)"
bench/acp.sh
