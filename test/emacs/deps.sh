#!/usr/bin/env bash
# Installs Emacs 28 and eglot 1.9 from Debian when they are missing (emacs-nox, elpa-eglot).
set -euo pipefail
have_eglot() {
	command -v emacs >/dev/null 2>&1 &&
		emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1
}
if have_eglot; then
	exit 0
fi
sudo=
if [ "$(id -u)" -ne 0 ]; then
	sudo=sudo
fi
echo "test/emacs: installing emacs-nox and elpa-eglot" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
	-o DPkg::Lock::Timeout=600 emacs-nox elpa-eglot >/dev/null
have_eglot
