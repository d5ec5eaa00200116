#!/usr/bin/env bash
# Benchmarks run_shell_command on 50 MiB of output.
#
# Time: BenchmarkShell50MB (and BenchmarkShell50MBYes) run the same command raw (os/exec,
# output to io.Discard) and through the tool, in ROUNDS alternating rounds so that load
# from other work on the machine hits both alike; the verdict uses the median of the
# per-round ratios tool/raw, which must be at most 1.2.
#
# Memory: bench/shellrss runs one tool call in a fresh process and reports its peak
# resident set (VmHWM), which must be under 50 MB; /usr/bin/time -v, when present, gives
# the same figure from outside. The raw run is the baseline of a Go process doing nothing
# but discarding the output.
#
# Usage: bench/shell.sh            (ROUNDS=7 BENCHTIME=5x by default)
#        BENCH_QUICK=1 bench/shell.sh  (make benchcheck: one round of one iteration; the
#                                       limits are printed, not enforced, but every figure
#                                       must be there)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=${BENCH_QUICK:-}
rounds=${ROUNDS:-7}
benchtime=${BENCHTIME:-5x}
if [ -n "$quick" ]; then
	rounds=1 benchtime=1x
fi
# miss: a limit was missed; it fails the script unless BENCH_QUICK is set.
miss() {
	[ -n "$quick" ] && { echo "(BENCH_QUICK: not enforced)"; return; }
	status=1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go test -c -o "$tmp/shell.test" ./tools/shell
go build -o "$tmp/shellrss" ./bench/shellrss

status=0
for bench in BenchmarkShell50MB BenchmarkShell50MBYes; do
	echo "== $bench: $rounds rounds of -test.benchtime $benchtime"
	for _ in $(seq "$rounds"); do
		"$tmp/shell.test" -test.run '^$' -test.bench "^$bench\$" -test.benchtime "$benchtime"
	done | grep "^$bench/" | tee "$tmp/$bench.txt"
	# Pair each raw line with the tool line after it; print the median ratio.
	ratio=$(awk '
		/\/raw/  { raw = $3 }
		/\/tool/ { if (raw) { r[n++] = $3 / raw; raw = 0 } }
		END {
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
			printf "%.3f", (n % 2) ? r[int(n / 2)] : (r[n / 2 - 1] + r[n / 2]) / 2
		}' "$tmp/$bench.txt")
	medians=$(awk '
		{ split($1, a, "/"); sub(/-[0-9]+$/, "", a[2]); v[a[2]] = v[a[2]] " " $3 }
		END {
			for (k in v) {
				n = split(v[k], x, " ")
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
				m = (n % 2) ? x[int(n / 2) + 1] : (x[n / 2] + x[n / 2 + 1]) / 2
				printf "%s median %.1f ms/op; ", k, m / 1e6
			}
		}' "$tmp/$bench.txt")
	awk -v r="$ratio" 'BEGIN { exit !(r > 0) }' || { echo "$bench: no tool/raw ratio" >&2; exit 1; }
	verdict=PASS
	if awk -v r="$ratio" 'BEGIN { exit !(r > 1.2) }'; then verdict=FAIL; fi
	echo "$bench: ${medians}median ratio tool/raw $ratio (limit 1.2): $verdict"
	[ "$verdict" = PASS ] || miss
done

echo "== peak resident memory of one call (limit 50 MB)"
for command in "head -c 52428800 /dev/zero | tr '\\0' 'x' | fold -w 100" "yes | head -c 52428800"; do
	echo "command: $command"
	"$tmp/shellrss" -raw -command "$command"
	line=$("$tmp/shellrss" -command "$command")
	echo "$line"
	hwm=$(sed -n 's/.*vm_hwm_kb=\([0-9]*\).*/\1/p' <<<"$line")
	[ -n "$hwm" ] || { echo "no vm_hwm_kb in shellrss's report" >&2; exit 1; }
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -v "$tmp/shellrss" -command "$command" 2>"$tmp/time.txt" >/dev/null
		echo "/usr/bin/time -v: $(grep 'Maximum resident set size' "$tmp/time.txt" | sed 's/^[[:space:]]*//')"
	fi
	if [ "$hwm" -ge $((50 * 1000)) ]; then
		echo "peak RSS ${hwm} kB: FAIL"
		miss
	else
		echo "peak RSS ${hwm} kB: PASS"
	fi
done
exit "$status"
