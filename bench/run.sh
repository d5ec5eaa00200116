#!/usr/bin/env bash
# Reruns every benchmark recorded in BENCHMARKS.md, each beside its reference in the same
# run. Run from the repository root (make bench does).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== search"; bench/search.sh
echo "== shell"; bench/shell.sh
echo "== replace in a 10 MB file"
go test -run='^$' -bench='^BenchmarkReplace10MB' -benchtime=20x -count=3 ./tools/files
echo "== diffs, walking"
go test -run='^$' -bench='BenchmarkUnifiedDiff10MB|BenchmarkTextEdits10MB|BenchmarkWalkGoroot' -count=3 ./workspace
echo "== scheduler, policy"
go test -run='^$' -bench='BenchmarkSchedulerRun' -benchmem -count=3 ./tools
go test -run='^$' -bench='BenchmarkDecideShell' -benchmem ./confirm
echo "== editor server"
go test -run='^$' -bench=. -benchtime=2000x ./rpc
echo "== MCP: echo overhead, eight servers connecting in parallel"
bench/mcp.sh
echo "== agent session end to end, beside Gemini CLI (npm install of @google/gemini-cli on first run)"
bench/agent.sh
