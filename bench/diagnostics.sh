#!/usr/bin/env bash
# The editor's diagnostics for the agent (issue 24): from an edit applied in the editor
# to the language server's diagnostics in the model's next request, per client, with a
# real language server beside agentls: gopls v0.23.0 (scripts/gopls.sh) in headless
# Neovim 0.12.4 and in Emacs 30.1 under eglot, VS Code's built-in TypeScript in
# code-server. Each client's run makes EDITS edits in one prompt (default 20), each
# breaking or fixing one line; the server logs every edit's settledMs (the edit applied
# to the editor's report, which the model's next request carries at once), and Neovim's
# run also times the edit applied to the model request arriving (end to end). Prints the
# median and p95 per client. Then the cost to a client without the capability:
# BenchmarkRunToolEdit (runTool replace of an open document, applied by the client).
#
# Usage: bench/diagnostics.sh [nvim] [emacs] [vscode]   (default: all three)
#        EDITS=N; BENCH_QUICK=1 (make benchcheck): 2 edits, Neovim only, and the Go
#        benchmark once.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
quick=${BENCH_QUICK:-}
edits=${EDITS:-20}
clients=("$@")
[ ${#clients[@]} -gt 0 ] || clients=(nvim emacs vscode)
if [ -n "$quick" ]; then edits=2 clients=(nvim); fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-bench-diag.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/agentls" ./cmd/agentls
go build -o "$tmp/fakegemini" ./internal/fakegemini/cmd/fakegemini
AGENTLS_GOPLS=$(scripts/gopls.sh | tail -n 1)
export AGENTLS_GOPLS AGENTLS_BIN="$tmp/agentls" FAKEGEMINI_BIN="$tmp/fakegemini" AGENTLS_BENCH_EDITS=$edits

# stats NAME FILE: the median and p95 of the numbers in FILE, one a line.
stats() {
	sort -n "$2" | awk -v name="$1" '{ v[NR] = $1 } END {
		if (NR == 0) { print name ": no samples"; exit 1 }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		p = v[int(0.95 * NR + 0.999)]
		printf "%s: median %.0f ms, p95 %.0f ms, min %.0f, max %.0f (%d edits)\n", name, m, p, v[1], v[NR], NR }'
}
settled() { grep -o 'settledMs=[0-9.]*' "$1" | cut -d= -f2; }

for c in "${clients[@]}"; do
	log="$tmp/$c.log"
	: >"$log"
	case $c in
	nvim)
		AGENTLS_BENCH_LOG=$log AGENTLS_NVIM_VERSIONS=0.12.4 editors/nvim/tests/run.sh editors/nvim/tests/bench_diagnostics.lua >"$tmp/nvim.out" 2>&1 ||
			{ cat "$tmp/nvim.out"; exit 1; }
		settled "$log" >"$tmp/nvim.settled"
		stats "Neovim 0.12.4 + gopls, edit applied to the report (server)" "$tmp/nvim.settled"
		grep -o 'BENCH nvim e2e ms [0-9.]*' "$tmp/nvim.out" | awk '{ print $5 }' >"$tmp/nvim.e2e"
		stats "Neovim 0.12.4 + gopls, edit applied to the model's next request (end to end)" "$tmp/nvim.e2e" ;;
	emacs)
		AGENTLS_BENCH_LOG=$log AGENTLS_EMACS_VERSIONS=30.1 editors/emacs/tests/run.sh bench-diagnostics >"$tmp/emacs.out" 2>&1 ||
			{ cat "$tmp/emacs.out"; exit 1; }
		settled "$log" >"$tmp/emacs.settled"
		stats "Emacs 30.1, eglot + gopls, edit applied to the report (server)" "$tmp/emacs.settled" ;;
	vscode)
		AGENTLS_BENCH_LOG=$log E2E_SKIP_UNIT=1 editors/vscode/test/run.sh bench_diagnostics >"$tmp/vscode.out" 2>&1 ||
			{ cat "$tmp/vscode.out"; exit 1; }
		settled "$log" >"$tmp/vscode.settled"
		stats "VS Code 1.139 (code-server), TypeScript, edit applied to the report (server)" "$tmp/vscode.settled" ;;
	*) echo "bench/diagnostics.sh: unknown client $c (nvim, emacs, vscode)" >&2; exit 2 ;;
	esac
done

echo "== a client without the capability: runTool replace of an open document"
benchtime=2000x
[ -z "$quick" ] || benchtime=1x
go test -run='^$' -bench='^BenchmarkRunToolEdit$' -benchtime=$benchtime -count=${COUNT:-3} ./rpc | grep -E '^Benchmark|^ok|FAIL'
