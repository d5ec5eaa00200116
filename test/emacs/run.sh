#!/usr/bin/env bash
# Runs agentls under stock Emacs 28 + eglot 1.9 in batch mode, one Emacs process per case,
# and ends with "N passed, M failed" (exit status 1 when any case failed).
# AGENTLS_BIN names the binary under test; without it one is built from this checkout.
# Arguments, if any, name the cases to run (default: all).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/deps.sh" || { echo "test/emacs: could not install emacs-nox and elpa-eglot"; echo "0 passed, 1 failed"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${AGENTLS_BIN:-}" ]; then
	if ! (cd "$here/../.." && PATH="$PATH:/usr/local/go/bin" go build -o "$tmp/agentls" ./cmd/agentls); then
		echo "test/emacs: go build failed"
		echo "0 passed, 1 failed"
		exit 1
	fi
	AGENTLS_BIN="$tmp/agentls"
fi
export AGENTLS_BIN
AGENTLS_BIN=$(cd "$(dirname "$AGENTLS_BIN")" && pwd)/$(basename "$AGENTLS_BIN")

# case name and what the user types at eglot's prompts (one answer a line; empty: none).
declare -A answers=(
	[edit-undo]=""
	[setmode-confirm]="y"
	[eglot-refuses]="n"
	[list-tools]=""
	[back-to-back]=""
)
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
	cases=(list-tools edit-undo setmode-confirm eglot-refuses back-to-back)
fi

passed=0
failed=0
for c in "${cases[@]}"; do
	mkdir -p "$tmp/$c/home" "$tmp/$c/tmp"
	log="$tmp/$c/log"
	if [ -n "${answers[$c]:-}" ]; then
		input=$(printf '%s\n' "${answers[$c]}")
	else
		input=""
	fi
	# No -Q: Debian's site-start must run so that the elpa-eglot package is found.
	printf '%s' "$input" | HOME="$tmp/$c/home" TMPDIR="$tmp/$c/tmp" timeout 120 \
		emacs --batch -l "$here/agentls-eglot-test.el" -f agentls-test-main "$c" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -Eq "(^|[[:space:]])PASS $c\$" "$log"; then
		echo "PASS $c"
		passed=$((passed + 1))
	else
		[ $rc -eq 124 ] && echo "FAIL $c: timed out after 120 s"
		echo "FAIL $c (exit $rc)"
		# The case's own verdict first, then the end of the log (server stderr, eglot events).
		sed -n "/^FAIL $c:/,/^--- /p" "$log" | sed -e '$d' -e 's/^/    /'
		echo "    --- log (tail) ---"
		sed -e 's/^/    /' "$log" | tail -n 60
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
