#!/usr/bin/env bash
# Tests of the Emacs package agentls.el, in batch Emacs: Debian's emacs-nox (28.2 on
# bookworm) and Emacs 30.1 built by scripts/build-emacs.sh (cached; about 15 minutes
# on 2 cores the first time), every case on each:
#
#   editors/emacs/tests/run.sh [CASE...]     (default: every case)
#
# Lint cases: the package byte-compiles with warnings as errors, checkdoc finds nothing,
# the generated autoloads define the commands, package-lint finds no error (SKIP when
# package-lint is not installed).  Then every
# ert-deftest of agentls-test.el, each in its own `emacs --batch -Q`, against the real
# agentls binary and the fake Gemini server (internal/fakegemini/cmd/fakegemini); the edit
# tests run once more with incremental document sync (AGENTLS_TEST_INCREMENTAL=1), and,
# with markdown-mode installed, the chat test once more with it.  Ends with
# "N passed, M failed" and exits nonzero if any case failed or none passed.
#
# Environment: EMACS (use only this emacs), AGENTLS_EMACS_VERSIONS (the Emacsen to run,
# default "system 30.1": "system" is the emacs on PATH, a version number is built by
# scripts/build-emacs.sh), AGENTLS_BIN and FAKEGEMINI_BIN (use these binaries instead of
# building them), AGENTLS_TEST_TIMEOUT (seconds per case, default 120), AGENTLS_TEST_VERBOSE=1
# (print every case's log), AGENTLS_TEST_LOAD_PATH (directories, colon-separated, put
# first on the tests' load path: for example a newer jsonrpc.el than Emacs's own).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pkg=$(cd "$here/.." && pwd)
repo=$(cd "$pkg/../.." && pwd)
export PATH="$PATH:/usr/local/go/bin"

"$here/deps.sh" || { echo "editors/emacs: could not install emacs-nox"; echo "0 passed, 1 failed"; exit 1; }

emacsen=()
if [ -n "${EMACS:-}" ]; then
	emacsen=("$EMACS")
else
	for v in ${AGENTLS_EMACS_VERSIONS:-system 30.1}; do
		if [ "$v" = system ]; then
			emacsen+=("$(command -v emacs)")
		else
			e=$("$repo/scripts/build-emacs.sh" "$v" | tail -n 1) && [ -x "$e" ] ||
				{ echo "editors/emacs: could not build Emacs $v (scripts/build-emacs.sh)"; echo "0 passed, 1 failed"; exit 1; }
			emacsen+=("$e")
		fi
	done
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-emacs-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
build() { # build NAME PACKAGE
	(cd "$repo" && go build -o "$tmp/$1" "$2") || { echo "editors/emacs: go build $2 failed"; echo "0 passed, 1 failed"; exit 1; }
}
# gopls, pinned, for the tests of the editor's diagnostics (scripts/gopls.sh). Go's caches
# stay the user's: the private home below would make gopls start from cold ones.
if [ -z "${AGENTLS_GOPLS:-}" ]; then
	AGENTLS_GOPLS=$("$repo/scripts/gopls.sh" | tail -n 1) || { echo "editors/emacs: could not install gopls (scripts/gopls.sh)"; echo "0 passed, 1 failed"; exit 1; }
fi
export AGENTLS_GOPLS GOCACHE="${GOCACHE:-$(go env GOCACHE)}" GOMODCACHE="${GOMODCACHE:-$(go env GOMODCACHE)}"
if [ -n "${AGENTLS_BIN:-}" ]; then cp "$AGENTLS_BIN" "$tmp/agentls"; else build agentls ./cmd/agentls; fi
if [ -n "${FAKEGEMINI_BIN:-}" ]; then cp "$FAKEGEMINI_BIN" "$tmp/fakegemini"; else build fakegemini ./internal/fakegemini/cmd/fakegemini; fi
export AGENTLS_BIN="$tmp/agentls" FAKEGEMINI_BIN="$tmp/fakegemini"

# A private home: no user settings, sessions or trusted folders play a part.
mkdir -p "$tmp/home" "$tmp/config" "$tmp/state" "$tmp/data" "$tmp/t"
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state" XDG_DATA_HOME="$tmp/data"
export TMPDIR="$tmp/t"
unset GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_GEMINI_BASE_URL AGENTLS_TRUST_WORKSPACE
timeout_s=${AGENTLS_TEST_TIMEOUT:-120}

# Debian's site-start puts the elpa-* packages on the load path; -Q runs skip it.  The
# system emacs finds them; another Emacs is given the same directories.
site_dir() { emacs --batch --eval "(let ((f (locate-library \"$1\"))) (when f (princ (file-name-directory f))))" 2>/dev/null; }
markdown_dir=$(site_dir markdown-mode)
package_lint_dir=$(site_dir package-lint)
elpa_eglot_dir=$(site_dir eglot)

passed=0 failed=0 skipped=0
report() { # report NAME RC LOG
	if [ "$2" -eq 0 ]; then
		echo "PASS $1 ($ev)"; passed=$((passed + 1))
		[ -n "${AGENTLS_TEST_VERBOSE:-}" ] && sed 's/^/    /' "$3"
	else
		[ "$2" -eq 124 ] && echo "FAIL $1 ($ev): timed out after ${timeout_s} s"
		echo "FAIL $1 ($ev) (exit $2)"
		sed 's/^/    /' "$3" | tail -n 80
		failed=$((failed + 1))
	fi
	return 0
}

lint() {
	local c=$1 log="$tmp/$1.log" rc
	rm -rf "$tmp/lint" && mkdir -p "$tmp/lint" && cp "$pkg/agentls.el" "$tmp/lint/"
	case $c in
	byte-compile)
		(cd "$tmp/lint" && "$E" -Q --batch --eval '(setq byte-compile-error-on-warn t)' \
			-f batch-byte-compile agentls.el) >"$log" 2>&1
		rc=$? ;;
	checkdoc)
		(cd "$tmp/lint" && "$E" -Q --batch --eval '(progn (require (quote checkdoc)) (checkdoc-file "agentls.el"))') >"$log" 2>&1
		rc=$?
		[ $rc -eq 0 ] && grep -q . "$log" && rc=1 ;;
	autoloads)
		# The autoloads a package manager makes: the commands are known before the
		# package loads, and loading it defines them.
		(cd "$tmp/lint" && "$E" -Q --batch --eval '(progn
		  (require (if (locate-library "loaddefs-gen") (quote loaddefs-gen) (quote autoload))) ; autoload: deprecated from 29
		  (let ((generated-autoload-file (expand-file-name "agentls-autoloads.el")))
		    (if (fboundp (quote loaddefs-generate))
		        (loaddefs-generate "." generated-autoload-file)
		      (update-file-autoloads (expand-file-name "agentls.el") t generated-autoload-file))))' \
			&& "$E" -Q --batch -L . -l agentls-autoloads.el --eval '(progn
		  (dolist (f (quote (agentls agentls-cancel agentls-sessions agentls-set-approval-mode agentls-chat agentls-menu agentls-show-pending agentls-turn-diff agentls-undo-turn agentls-redo-turn)))
		    (unless (autoloadp (symbol-function f)) (error "%s is not autoloaded" f)))
		  (when (featurep (quote agentls)) (error "the autoloads loaded the package"))
		  (require (quote agentls))
		  (unless (commandp (quote agentls-diff-accept)) (error "not defined after loading")))') >"$log" 2>&1
		rc=$? ;;
	package-lint)
		if [ -z "$package_lint_dir" ]; then
			echo "SKIP package-lint ($ev): not installed (elpa-package-lint)"; skipped=$((skipped + 1)); return 0
		fi
		# package-lint 0.16 (Debian bookworm) predates Emacs 28 and warns that a package
		# needing it installs nowhere; only errors count.
		(cd "$tmp/lint" && "$E" -Q --batch -L "$package_lint_dir" --eval "(require 'package-lint)" \
			--eval '(setq package-lint-batch-fail-on-warnings nil)' -f package-lint-batch-and-exit agentls.el) >"$log" 2>&1
		rc=$?
		[ $rc -eq 0 ] && grep -q ': error:' "$log" && rc=1 ;;
	esac
	report "$c" "$rc" "$log"
}

run_test() { # run_test CASE-NAME ERT-NAME [EXTRA-EMACS-ARGS...]
	local c=$1 t=$2 log="$tmp/$1.log" rc
	shift 2
	local extra=() d
	IFS=: read -ra dirs <<<"${AGENTLS_TEST_LOAD_PATH:-}"
	for d in "${dirs[@]}"; do [ -n "$d" ] && extra+=(-L "$d"); done
	(cd "$tmp/t" && timeout "$timeout_s" "$E" --batch -Q "${extra[@]}" "$@" -L "$pkg" -l "$here/agentls-test.el" \
		--eval "(ert-run-tests-batch-and-exit '$t)") </dev/null >"$log" 2>&1
	rc=$?
	[ $rc -eq 0 ] && ! grep -q "^Ran 1 tests, 1 results as expected" "$log" && rc=1
	report "$c" "$rc" "$log"
}

all_tests=$(sed -n 's/^(ert-deftest \(agentls-test-[a-z0-9-]*\).*/\1/p' "$here/agentls-test.el")
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
	cases=(byte-compile checkdoc autoloads package-lint)
	for t in $all_tests; do cases+=("${t#agentls-test-}"); done
	[ -n "$markdown_dir" ] && cases+=("prompt-streams+markdown")
	# The edit paths again, with every buffer sending its changes instead of its text.
	cases+=(edit-accept-undo+incremental edit-modified+incremental non-ascii+incremental ten-approvals+incremental beside-eglot+incremental)
fi

start=$(date +%s)
for E in "${emacsen[@]}"; do
ev="Emacs $("$E" -Q --batch --eval '(princ emacs-version)' 2>/dev/null)"
echo "=== $ev ($E)"
# eglot: built in from Emacs 29, elpa-eglot on Debian's Emacs 28.
eglot_dir=
"$E" -Q --batch --eval "(require 'eglot)" >/dev/null 2>&1 || eglot_dir=$elpa_eglot_dir
for c in "${cases[@]}"; do
	case $c in
	byte-compile | checkdoc | autoloads | package-lint) lint "$c" ;;
	*+incremental)
		AGENTLS_TEST_INCREMENTAL=1 run_test "$c" "agentls-test-${c%+incremental}" \
			${eglot_dir:+-L "$eglot_dir"} ;;
	*+markdown)
		if [ -z "$markdown_dir" ]; then echo "SKIP $c ($ev): markdown-mode is not installed"; skipped=$((skipped + 1)); continue; fi
		run_test "$c" "agentls-test-${c%+markdown}" -L "$markdown_dir" ;;
	beside-eglot | diagnostics-gopls | diagnostics-off)
		run_test "$c" "agentls-test-$c" ${eglot_dir:+-L "$eglot_dir"} ;;
	bench-diagnostics) # bench/diagnostics.sh, by name only
		run_test "$c" "agentls-$c" ${eglot_dir:+-L "$eglot_dir"} ;;
	*)
		if ! grep -qx "agentls-test-$c" <<<"$all_tests"; then echo "FAIL $c ($ev): no such case"; failed=$((failed + 1)); continue; fi
		run_test "$c" "agentls-test-$c" ;;
	esac
done
done
echo "($(( $(date +%s) - start )) s)"
[ "$skipped" -eq 0 ] || echo "$skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
