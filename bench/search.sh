#!/usr/bin/env bash
# bench/search.sh — benchmarks of the search tools (package tools/search) over
# $(go env GOROOT)/src, each variant timed against the reference ripgrep command in the
# same benchmark binary and run:
#
#   grep_search  BenchmarkGrepGoroot/<pattern>/<cap>/{rg-raw,tool-rg,tool-go}
#                rg-raw is the exact rg command line the rg engine runs, output to
#                /dev/null; tool-rg and tool-go are the tool with each engine.
#                cap100 is the default total_max_matches (the tool may stop early);
#                cap100000 makes it search the whole tree, as rg-raw does.
#   glob         BenchmarkGlobGoroot/{rg-files,tool}: glob '**/*.go' against
#                rg --files -g '*.go' (rg's defaults otherwise).
#
#   .../paired   rg and the tool(s) run back to back, in rotating order, in every
#                iteration, reporting each tool's total time over rg's (rg/raw, go/raw,
#                tool/raw): both meet the same load, so these ratios hold on a busy
#                machine, where those of the separate sub-benchmarks swing.
#
# It prints go test's figures, then the median of the runs for each variant and its
# ratio to the reference, with the targets: tool-rg <= 1.15x, tool-go <= 3x,
# glob <= 1.5x.
#
# Usage: bench/search.sh            (COUNT=n to change -count, default 5)
#        BENCH=GrepGoroot/icase bench/search.sh
#        BENCH_QUICK=1 bench/search.sh   (make benchcheck: one run of one iteration each,
#                                         no hyperfine; the ratios are printed as always)
set -euo pipefail
cd "$(dirname "$0")/.."

count="${COUNT:-5}"
bench="${BENCH:-Goroot}"
benchtime=()
if [ -n "${BENCH_QUICK:-}" ]; then
	count=1 benchtime=(-benchtime=1x)
fi

if ! command -v rg >/dev/null; then
	echo "note: rg is not installed; only the pure-Go figures are measured" >&2
fi

cmd=(go test -run='^$' -bench="$bench" "${benchtime[@]}" -count="$count" ./tools/search)
echo "\$ ${cmd[*]}"
out="$("${cmd[@]}")"
echo "$out"
echo
# A benchmark renamed or gone would otherwise leave an empty table.
grep -q '^BenchmarkGrepGoroot/.*/tool-go' <<<"$out" && grep -q '^BenchmarkGlobGoroot/tool' <<<"$out" ||
	{ [ "$bench" != Goroot ] || { echo "bench/search.sh: the grep and glob benchmarks did not run" >&2; exit 1; }; }

echo "$out" | awk '
/^Benchmark/ && $4 == "ns/op" {
	name = $1
	sub(/-[0-9]+$/, "", name)          # the GOMAXPROCS suffix
	if (name ~ /\/paired$/) {
		# Custom metrics: value/unit pairs after ns/op, e.g. "1.12 rg/raw".
		for (f = 5; f + 1 <= NF; f += 2) {
			key = name " " $(f + 1)
			m = ++pcount[key]
			pval[key, m] = $f
			if (!(key in pseen)) { pseen[key] = 1; porder[++pkeys] = key }
		}
		next
	}
	n = ++count[name]
	ns[name, n] = $3
	if (!(name in seen)) { seen[name] = 1; order[++names] = name }
}
function median(arr, cnt, key,    n, i, j, t, v) {
	n = cnt[key]
	for (i = 1; i <= n; i++) v[i] = arr[key, i] + 0
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function target(variant, group) {
	if (variant == "tool-rg" || variant == "rg/raw") return 1.15
	if (variant == "tool-go" || variant == "go/raw") return 3
	if (group ~ /Glob/ && (variant == "tool" || variant == "tool/raw")) return 1.5
	return 0
}
END {
	print "separate sub-benchmarks (median ns/op of the runs; ratio to the reference in the same group)"
	printf "%-50s %10s %8s %8s\n", "benchmark", "ms/op", "ratio", "target"
	for (k = 1; k <= names; k++) {
		name = order[k]
		group = name; sub(/\/[^\/]*$/, "", group)
		variant = name; sub(/.*\//, "", variant)
		ref = (group ~ /Glob/) ? group "/rg-files" : group "/rg-raw"
		m = median(ns, count, name)
		t = target(variant, group)
		if (t > 0 && (ref in seen)) {
			r = m / median(ns, count, ref)
			printf "%-50s %10.1f %7.2fx %7.2fx %s\n", name, m / 1e6, r, t, (r <= t) ? "ok" : "OVER"
		} else {
			printf "%-50s %10.1f\n", name, m / 1e6
		}
	}
	if (pkeys > 0) {
		print ""
		print "paired (rg and the tool run back to back every iteration; median of the runs)"
		printf "%-50s %8s %8s\n", "benchmark and ratio", "ratio", "target"
		for (k = 1; k <= pkeys; k++) {
			key = porder[k]
			split(key, parts, " ")
			group = parts[1]; sub(/\/paired$/, "", group)
			r = median(pval, pcount, key)
			t = target(parts[2], group)
			printf "%-50s %7.2fx %7.2fx %s\n", group " " parts[2], r, t, (r <= t) ? "ok" : "OVER"
		}
	}
}'

if [ -z "${BENCH_QUICK:-}" ] && command -v hyperfine >/dev/null && command -v rg >/dev/null; then
	# A cross-check of the in-process reference figure with an outside timer.
	echo
	(cd "$(go env GOROOT)/src" && hyperfine --warmup 3 --style basic "rg --files -g '*.go'")
fi
