#!/usr/bin/env bash
# Installs gopls, pinned, for the editor tests that run a real language server beside
# agentls (the editor's diagnostics, issue 24): `go install` from the Go module proxy
# into a cache directory, reused once there.
#
# usage: scripts/gopls.sh [PREFIX]
#   PREFIX: where bin/gopls goes (default: ${XDG_CACHE_HOME:-$HOME/.cache}/agentls-test/gopls-VERSION)
# Prints the path of the gopls binary on its last line. About 90 s on 2 cores the first
# time (downloads and builds), nothing afterwards.
set -euo pipefail
VERSION=v0.23.0
PREFIX=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/agentls-test/gopls-$VERSION}
export PATH="$PATH:/usr/local/go/bin"
if [ -x "$PREFIX/bin/gopls" ] && "$PREFIX/bin/gopls" version 2>/dev/null | grep -qF "gopls $VERSION"; then
  echo "$PREFIX/bin/gopls"; exit 0
fi
mkdir -p "$PREFIX/bin"
# GOFLAGS of the caller (such as -mod=vendor) must not apply to gopls's own module.
GOFLAGS= GOBIN="$PREFIX/bin" go install "golang.org/x/tools/gopls@$VERSION" >&2
"$PREFIX/bin/gopls" version | grep -qF "gopls $VERSION" || { echo "gopls.sh: $PREFIX/bin/gopls is not gopls $VERSION" >&2; exit 1; }
echo "$PREFIX/bin/gopls"
