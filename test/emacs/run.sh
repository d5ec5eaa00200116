#!/usr/bin/env bash
# Runs agentls under stock eglot in batch mode, one Emacs process per case, on each Emacs:
# Debian's (28.2 on bookworm, with elpa-eglot 1.9) and Emacs 30.1 built by
# scripts/build-emacs.sh (its built-in eglot 1.17; cached, about 15 minutes on 2 cores the
# first time). Ends with "N passed, M failed" (exit status 1 when any case failed).
# AGENTLS_BIN names the binary under test; without it one is built from this checkout.
# EMACS (use only this emacs) and AGENTLS_EMACS_VERSIONS (default "system 30.1": "system"
# is the emacs on PATH, a version number is built) choose the Emacsen.
# Arguments, if any, name the cases to run (default: all).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/deps.sh" || { echo "test/emacs: could not install emacs-nox and elpa-eglot"; echo "0 passed, 1 failed"; exit 1; }

emacsen=()
if [ -n "${EMACS:-}" ]; then
	emacsen=("$EMACS")
else
	for v in ${AGENTLS_EMACS_VERSIONS:-system 30.1}; do
		if [ "$v" = system ]; then
			emacsen+=("$(command -v emacs)")
		else
			e=$("$here/../../scripts/build-emacs.sh" "$v" | tail -n 1) && [ -x "$e" ] ||
				{ echo "test/emacs: could not build Emacs $v (scripts/build-emacs.sh)"; echo "0 passed, 1 failed"; exit 1; }
			emacsen+=("$e")
		fi
	done
fi

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
	[shell-progress]=""
)
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
	cases=(list-tools edit-undo setmode-confirm eglot-refuses back-to-back shell-progress)
fi

passed=0
failed=0
for E in "${emacsen[@]}"; do
ev="Emacs $("$E" -Q --batch --eval '(princ emacs-version)' 2>/dev/null)"
echo "=== $ev ($E)"
for c in "${cases[@]}"; do
	rm -rf "$tmp/$c" && mkdir -p "$tmp/$c/home" "$tmp/$c/tmp"
	log="$tmp/$c/log"
	if [ -n "${answers[$c]:-}" ]; then
		input=$(printf '%s\n' "${answers[$c]}")
	else
		input=""
	fi
	# No -Q: on Debian's Emacs 28 its site-start must run so that elpa-eglot is found
	# (a built Emacs has no Debian site-start and uses its own eglot).
	printf '%s' "$input" | HOME="$tmp/$c/home" TMPDIR="$tmp/$c/tmp" timeout 120 \
		"$E" --batch -l "$here/agentls-eglot-test.el" -f agentls-test-main "$c" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -Eq "(^|[[:space:]])PASS $c\$" "$log"; then
		echo "PASS $c ($ev)"
		passed=$((passed + 1))
	else
		[ $rc -eq 124 ] && echo "FAIL $c ($ev): timed out after 120 s"
		echo "FAIL $c ($ev) (exit $rc)"
		# The case's own verdict first, then the end of the log (server stderr, eglot events).
		sed -n "/^FAIL $c:/,/^--- /p" "$log" | sed -e '$d' -e 's/^/    /'
		echo "    --- log (tail) ---"
		sed -e 's/^/    /' "$log" | tail -n 60
		failed=$((failed + 1))
	fi
done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
