#!/bin/sh
# Spin model checker for verify/cna.pml (CNA hand-over model). Idempotent, quiet when present.
command -v spin >/dev/null 2>&1 && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "installing: spin"
$SUDO apt-get update -qq >/dev/null 2>&1 || true
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq spin >/dev/null
