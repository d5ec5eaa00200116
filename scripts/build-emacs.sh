#!/usr/bin/env bash
# Builds a newer Emacs for the batch editor tests on Debian bookworm (whose Emacs is 28.2),
# from Debian's own source package only (no other download). Terminal only, no native
# compilation, no image, sound, D-Bus or mail support: just what `emacs --batch` needs.
#
# usage: build-emacs.sh [VERSION] [PREFIX]
#   VERSION: 30.1 (default: Debian trixie's Emacs; trixie is a stable release, so this
#            builds whatever 30.x trixie holds and refuses anything else)
#   PREFIX:  install prefix (default: ${XDG_CACHE_HOME:-$HOME/.cache}/agentls-test/emacs-VERSION)
# The source package is taken by suite, not by exact Debian revision: a security upload
# (e.g. 30.1+1-6 -> 30.1+1-6+deb13u1) replaces the old revision on the archive, and a
# pinned revision then no longer downloads. Debian's orig tarball of emacs is a git tree
# with the manuals Debian deems non-free removed, which only builds with Debian's patches
# (debian/patches, all applied; they also carry Debian's security fixes). It has no
# configure script, manuals or compiled Lisp: autogen.sh runs, makeinfo builds the few
# manuals kept, and all Lisp is compiled. The built emacs's own version is checked.
# Prints the path of the emacs binary on its last line. A finished build is reused.
# Needs root for apt-get (as on CI and developer machines).
set -euo pipefail
VER=${1:-30.1}
PREFIX=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/agentls-test/emacs-$VER}
case $VER in
  30.1) SRC="emacs/trixie"; WANT="30." ;;
  *) echo "build-emacs.sh: unknown version $VER (known: 30.1)" >&2; exit 2 ;;
esac
# A finished build: it starts, is the wanted major version and has its compiled Lisp.
ok() {
  [ -x "$PREFIX/bin/emacs" ] && "$PREFIX/bin/emacs" -Q --batch \
    --eval "(unless (and (string-prefix-p \"$WANT\" emacs-version) (locate-library \"jsonrpc.elc\") (locate-library \"eglot.elc\")) (kill-emacs 1))" \
    >/dev/null 2>&1
}
if ok; then echo "$PREFIX/bin/emacs"; exit 0; fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/build-emacs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export DEBIAN_FRONTEND=noninteractive
log=$WORK/log
echo "build-emacs.sh: building Emacs $VER into $PREFIX (about 15 minutes on 2 cores)" >&2
{
  apt-get update -qq
  apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 build-essential \
    dpkg-dev autoconf automake patch pkg-config libncurses-dev libgnutls28-dev libxml2-dev \
    zlib1g-dev libgmp-dev libacl1-dev texinfo xz-utils
} >"$log" 2>&1 || { cat "$log" >&2; exit 1; }

# A private apt configuration that only adds a source line for the newer suite, on the
# same Debian archive the machine already uses; the system's own sources stay untouched.
MIRROR=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$MIRROR" ] || MIRROR=$(awk '$1=="deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$MIRROR" ] || { echo "build-emacs.sh: no Debian archive found in the apt sources" >&2; exit 1; }
A=$WORK/apt; mkdir -p "$A/lists/partial" "$A/cache/archives/partial"
printf 'deb-src %s %s main\n' "$MIRROR" "${SRC#*/}" >"$A/sources.list"
cat >"$A/apt.conf" <<CONF
Dir::Etc::SourceList "$A/sources.list";
Dir::Etc::SourceParts "/dev/null";
Dir::State::Lists "$A/lists";
Dir::Cache "$A/cache";
CONF
S=$WORK/src; mkdir -p "$S"
# The orig and Debian tarballs are used, not the .dsc, so the package builds even when
# the archive (or a mirror) lacks the revision's .dsc.
(
  cd "$S"
  APT_CONFIG=$A/apt.conf apt-get update -qq
  APT_CONFIG=$A/apt.conf apt-get source --download-only "$SRC" || true
  tarball=$(ls emacs_*.orig.tar.* 2>/dev/null | head -n 1)
  debian=$(ls emacs_*.debian.tar.* 2>/dev/null | head -n 1)
  [ -n "$tarball" ] && [ -n "$debian" ] || { echo "build-emacs.sh: no orig or Debian tarball of $SRC on the archive"; exit 1; }
  mkdir emacs && tar -xf "$tarball" --strip-components=1 -C emacs && tar -xf "$debian" -C emacs &&
  cd emacs && while read -r p _; do
    case $p in ''|'#'*) continue ;; esac
    patch -p1 -s -N <"debian/patches/$p" || { echo "build-emacs.sh: Debian's $p does not apply"; exit 1; }
  done <debian/patches/series
) >>"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }

# Each step is chained with &&: under `||`, set -e does not stop a failing step.
{
  cd "$S/emacs" &&
  ./autogen.sh autoconf &&
  # Everything graphical or otherwise unused by batch tests is left out; gnutls, libxml2,
  # zlib and GMP are cheap and what a terminal user has.
  ./configure --prefix="$PREFIX" --without-x --without-ns --with-x-toolkit=no \
    --with-native-compilation=no --without-sound --without-gif --without-tiff --without-xpm \
    --without-png --without-jpeg --without-rsvg --without-webp --without-imagemagick \
    --without-lcms2 --without-cairo --without-harfbuzz --without-libotf --without-m17n-flt \
    --without-dbus --without-gsettings --without-gconf --without-selinux --without-gpm \
    --without-mailutils --without-pop --without-sqlite3 --without-tree-sitter \
    --without-libsystemd --without-compress-install \
    --with-gnutls --with-xml2 --with-zlib &&
  make -j2 &&
  make install
} >>"$log" 2>&1 || { tail -60 "$log" >&2; exit 1; }
got=$("$PREFIX/bin/emacs" -Q --batch --eval '(princ emacs-version)' 2>/dev/null || true)
case $got in
  "$WANT"*) ;;
  *) echo "build-emacs.sh: asked for $VER but got '${got:-an emacs that does not start}'" >&2; exit 1 ;;
esac
ok || { echo "build-emacs.sh: the built emacs lacks its compiled Lisp" >&2; exit 1; }
echo "$PREFIX/bin/emacs"
