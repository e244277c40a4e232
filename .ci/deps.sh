#!/bin/sh
# deps.sh — install the Debian packages shardcast builds and tests with, only those missing.
# Called by `make deps` (and so by `make check` and `make demo`) and by .ci/run.
# Usage: deps.sh [extra-package ...]
set -eu
PKGS="build-essential pkg-config libgsl-dev libjansson-dev check gnuplot-nox libopenmpi-dev openmpi-bin libopenblas-dev $*"
missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "deps: all present"
    exit 0
fi
echo "deps: installing:$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "deps: not root and no sudo; install these yourself: apt-get install$missing" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: installed:$missing"
