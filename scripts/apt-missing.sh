#!/bin/sh
# Install the Debian packages of a list that are missing, once; quiet when
# all are there. The one copy behind scripts/deps.d/*.sh and kernel/deps.sh.
#   scripts/apt-missing.sh [--no-recommends] PURPOSE PACKAGE...
opts=""
if [ "${1:-}" = --no-recommends ]; then opts=--no-install-recommends; shift; fi
purpose=$1; shift
missing=""
for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
echo "installing ($purpose):$missing"
$SUDO apt-get update -qq >/dev/null 2>&1 || true
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $opts $missing >/dev/null
