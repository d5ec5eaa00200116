#!/usr/bin/env bash
# Benchmarks the sandbox of shell commands (issue 22): what containment adds to a
# command, beside the peers' own sandboxes where they run on this machine.
#
# bench/sandboxtime runs each figure in one interleaved run (every round runs every
# variant once, in rotating order; median, p90 and minimum of each variant's runs, and
# the medians of each round's difference and ratio to the bare run of that round; the
# same for processor time, user and system, of the command and what it waited for,
# which load from other work on the machine disturbs less than wall time):
#   1. `true` bare; contained with Landlock alone and with the namespaces through the
#      agentls-sandbox helper (built with CGO_ENABLED=0, as `make build` does, and as a
#      plain `go build` makes it), through agentls itself as the helper (self re-exec),
#      and as `agentls sandbox -- true`; beside `unshare -rn true`, bare
#      `bwrap --ro-bind / / true` (Debian's bubblewrap), Codex CLI's sandbox (npm
#      @openai/codex, through its npm shim and its native binary) and Anthropic's
#      sandbox-runtime (`srt --settings FILE true`, npm @anthropic-ai/sandbox-runtime,
#      which needs bubblewrap and socat). The same again from a parent holding 16 MB of
#      heap, as agentls does in a session: a user namespace cannot be made with vfork,
#      so the namespaces' fork copies the parent's page tables.
#   2. `go test ./...` of a small generated module (4 packages with tests,
#      GOFLAGS=-count=1) bare and contained.
#   3. 50 MB of output streamed through a contained command: the SHA-256 of each run's
#      output must be the bare run's, and the times are compared.
# Targets (issue 22): contained `true` at most 3 ms over bare with Landlock alone and at
# most 6 ms with the namespaces; `go test ./...` at most 1.05× bare.
#
# The npm peers are installed on first use into $BENCH_CACHE (default
# ~/.cache/agentls-bench); a peer that is not installed or cannot run here is left out
# with the reason. Codex runs with CODEX_HOME in that cache.
#
# Usage: bench/sandbox.sh                 (ROUNDS=80 for `true`, SLOW_ROUNDS=15 for go test and 50 MB)
#        BENCH_QUICK=1 bench/sandbox.sh   (make benchcheck: one round of each figure (after
#                                          one not counted), no npm install, peers only if
#                                          already installed; targets printed, not enforced)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=${BENCH_QUICK:-}
rounds=${ROUNDS:-80}
slow_rounds=${SLOW_ROUNDS:-15}
if [ -n "$quick" ]; then
	rounds=1 slow_rounds=1
fi
cache=${BENCH_CACHE:-$HOME/.cache/agentls-bench}
codex_version=0.169.0
srt_version=0.0.83

status=0
miss() {
	[ -n "$quick" ] && { echo "(BENCH_QUICK: not enforced)"; return; }
	status=1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/bin/" ./cmd/agentls ./bench/sandboxtime
CGO_ENABLED=0 go build -o "$tmp/bin/agentls-sandbox" ./cmd/agentls-sandbox
go build -o "$tmp/cgo/agentls-sandbox" ./cmd/agentls-sandbox
sandboxtime=$tmp/bin/sandboxtime

# Peers.
peers=()
peer() { peers+=(-peer "$1"); }
skip() { echo "left out: $1"; }
if unshare -rn true 2>/dev/null; then peer "unshare -rn=unshare -rn"; else skip "unshare -rn (user namespaces refused here)"; fi
if ! command -v bwrap >/dev/null; then
	skip "bwrap (install Debian's bubblewrap)"
elif bwrap --ro-bind / / true 2>/dev/null; then
	peer "bwrap=bwrap --ro-bind / /"
else
	skip "bwrap: $(bwrap --ro-bind / / true 2>&1 | head -1)"
fi
npmdir=$cache/npm
if [ -z "$quick" ] && command -v npm >/dev/null; then
	have() { node -p "require('$npmdir/node_modules/$1/package.json').version" 2>/dev/null || true; }
	if [ "$(have @openai/codex)" != "$codex_version" ] || [ "$(have @anthropic-ai/sandbox-runtime)" != "$srt_version" ]; then
		echo "installing @openai/codex@$codex_version @anthropic-ai/sandbox-runtime@$srt_version into $npmdir"
		mkdir -p "$npmdir"
		npm install --prefix "$npmdir" --no-audit --no-fund --loglevel=error \
			"@openai/codex@$codex_version" "@anthropic-ai/sandbox-runtime@$srt_version"
	fi
fi
mkdir -p "$cache/codex-home"
export CODEX_HOME=$cache/codex-home
codex=$npmdir/node_modules/.bin/codex
codex_native=$(ls "$npmdir"/node_modules/@openai/codex-*/vendor/*/bin/codex 2>/dev/null | head -1 || true)
codex_args='sandbox -c sandbox_mode="workspace-write" --'
for c in "codex (npm shim)=$codex" "codex (native)=$codex_native"; do
	name=${c%%=*} bin=${c#*=}
	if [ -z "$bin" ] || [ ! -x "$bin" ]; then
		skip "$name: not installed in $npmdir"
	elif out=$(cd "$tmp" && $bin $codex_args true 2>&1); then
		peer "$name=$bin $codex_args"
	else
		skip "$name: $(head -3 <<<"$out")"
	fi
done
srt=$npmdir/node_modules/.bin/srt
cat >"$tmp/srt-settings.json" <<'EOF'
{"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}, "network": {"allowedDomains": [], "deniedDomains": []}}
EOF
if [ ! -x "$srt" ]; then
	skip "srt: not installed in $npmdir"
elif ! command -v socat >/dev/null || ! command -v bwrap >/dev/null; then
	skip "srt: needs Debian's bubblewrap and socat"
elif out=$(cd "$tmp" && "$srt" --settings "$tmp/srt-settings.json" true 2>&1); then
	peer "srt=$srt --settings $tmp/srt-settings.json"
else
	skip "srt: $(head -3 <<<"$out")"
fi

# check NAME LIMIT TABLE: NAME's median over bare must be at most LIMIT ms.
check() {
	local d
	d=$(awk -v v="$1" 'index($0, v " ") == 1 { print $(NF-5) }' "$3")
	[ -n "$d" ] || { echo "no figure for $1" >&2; exit 1; }
	if awk -v d="$d" -v l="$2" 'BEGIN { exit !(d <= l) }'; then
		echo "$1: +$d ms over bare (target ≤ $2 ms): PASS"
	else
		echo "$1: +$d ms over bare (target ≤ $2 ms): FAIL"
		miss
	fi
}
work=$tmp/work
mkdir -p "$work"
helpers=(-helper "$tmp/bin/agentls-sandbox" -helper "helper-cgo=$tmp/cgo/agentls-sandbox" -agentls "$tmp/bin/agentls")

echo "== true: $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$sandboxtime" -n "$rounds" -dir "$work" "${helpers[@]}" "${peers[@]}" true | tee "$tmp/true.txt"
check helper/landlock 3 "$tmp/true.txt"
check helper/namespaces 6 "$tmp/true.txt"

echo "== true from a parent holding 16 MB of heap: $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$sandboxtime" -n "$rounds" -dir "$work" -ballast 16 -helper "$tmp/bin/agentls-sandbox" \
	"${peers[@]}" -variants helper/landlock,helper/namespaces,"unshare -rn" true |
	tee "$tmp/true16.txt"

# A small module: 4 packages, each with a few table-driven tests.
mod=$tmp/mod
mkdir -p "$mod"
printf 'module example.com/small\n\ngo 1.22\n' >"$mod/go.mod"
for p in strs nums sets text; do
	mkdir -p "$mod/$p"
	cat >"$mod/$p/$p.go" <<EOF
// Package $p is a package of the benchmark's small module.
package $p

import (
	"sort"
	"strings"
)

// Words splits s into sorted, distinct words.
func Words(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.Fields(s) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

// Sum adds xs.
func Sum(xs ...int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
EOF
	cat >"$mod/$p/${p}_test.go" <<EOF
package $p

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{{"", nil}, {"b a b", []string{"a", "b"}}, {"x  y\tz x", []string{"x", "y", "z"}}} {
		if got := Words(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSum(t *testing.T) {
	if got := Sum(1, 2, 3); got != 6 {
		t.Errorf("Sum = %d", got)
	}
}

// TestTempFile writes in the temporary directory, as many tests do.
func TestTempFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}
EOF
done
echo "== go test ./... of a 4-package module (GOFLAGS=-count=1): $slow_rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
(cd "$mod" && GOFLAGS=-count=1 GOPROXY=off GOTOOLCHAIN=local go test ./... >/dev/null) # warm the build cache
GOFLAGS=-count=1 GOPROXY=off GOTOOLCHAIN=local "$sandboxtime" -n "$slow_rounds" -dir "$mod" "${helpers[@]}" \
	-variants helper/landlock,helper/namespaces,"agentls sandbox --" go test ./... | tee "$tmp/gotest.txt"
for v in helper/landlock helper/namespaces; do
	r=$(awk -v v="$v" 'index($0, v " ") == 1 { sub(/x$/, "", $(NF-3)); print $(NF-3) }' "$tmp/gotest.txt")
	c=$(awk -v v="$v" 'index($0, v " ") == 1 { sub(/x$/, "", $NF); print $NF }' "$tmp/gotest.txt")
	[ -n "$r" ] && [ -n "$c" ] || { echo "no figure for go test, $v" >&2; exit 1; }
	if awk -v r="$r" 'BEGIN { exit !(r <= 1.05) }'; then
		echo "go test, $v: ${r}× bare in wall time (target ≤ 1.05×; processor time ${c}×): PASS"
	else
		echo "go test, $v: ${r}× bare in wall time (target ≤ 1.05×; processor time ${c}×): FAIL"
		miss
	fi
done

echo "== 50 MB of output (seq 1 7000000 | head -c 52428800): $slow_rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$sandboxtime" -n "$slow_rounds" -dir "$work" -hash "${helpers[@]}" -variants helper/landlock,helper/namespaces \
	bash -c 'seq 1 7000000 | head -c 52428800' | tee "$tmp/50mb.txt"
grep -q 'bytes (same as bare)' "$tmp/50mb.txt" || { echo "no checksum in the 50 MB run" >&2; exit 1; }
exit "$status"
