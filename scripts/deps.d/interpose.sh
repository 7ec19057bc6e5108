#!/bin/sh
# Programs the interposition tests run under the preload library.
pkgs="pigz pbzip2 lbzip2 xz-utils zstd sqlite3 nodejs python3 g++"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
echo "installing (interposition tests):$missing"
$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
