#!/usr/bin/env bash
# Installs what editors/emacs/tests needs from the distribution's archive, when missing:
# emacs-nox (Emacs 28 on Debian bookworm), elpa-eglot where Emacs has no eglot of its own
# (before 29; the test beside eglot needs it), and, when the archive has them,
# elpa-package-lint (for the lint case) and elpa-markdown-mode (the chat's Markdown faces).
# Packages are named, never pinned to a revision.
set -euo pipefail
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
want=()
command -v emacs >/dev/null 2>&1 || want+=(emacs-nox)
emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1 || want+=(elpa-eglot)
for p in elpa-package-lint elpa-markdown-mode; do
	have "$p" || want+=("$p")
done
[ ${#want[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || { command -v emacs >/dev/null 2>&1; exit; }
sudo=
[ "$(id -u)" -ne 0 ] && sudo=sudo
echo "editors/emacs: installing ${want[*]}" >&2
$sudo apt-get update -qq || true
# The optional packages may be missing from the archive: install what exists.
avail=()
for p in "${want[@]}"; do
	apt-cache show "$p" >/dev/null 2>&1 && avail+=("$p")
done
[ ${#avail[@]} -gt 0 ] && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
	-o DPkg::Lock::Timeout=600 "${avail[@]}" >/dev/null
command -v emacs >/dev/null 2>&1
