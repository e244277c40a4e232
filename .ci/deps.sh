#!/bin/sh
# deps.sh — install the Debian packages shardcast builds and tests with (iproute2: make emulate's
# ip and tc; python3: make archcheck and make readme-check), only those missing.
# Called by `make deps` (and so by `make check` and `make demo`) and by .ci/run.
# Usage: deps.sh [extra-package ...]
set -eu
PKGS="build-essential pkg-config libgsl-dev libjansson-dev libyaml-dev check gnuplot-nox libopenmpi-dev openmpi-bin libopenblas-dev iproute2 python3 $*"
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
# progress for the minute or so this takes on a fresh machine: each step, then each package set up
echo "deps: apt-get update (package lists)..."
$SUDO apt-get update -qq
echo "deps: apt-get install (downloads, then one line per package set up)..."
status=$(mktemp)
# shellcheck disable=SC2086
{ $SUDO apt-get install -y -q --no-install-recommends $missing 2>&1 && echo 0 >"$status" || echo $? >"$status"; } | while IFS= read -r line; do
    case "$line" in
        "Setting up "*) echo "deps:   ${line%% (*}" ;;
        "Fetched "*|E:*) echo "deps:   $line" ;;
    esac
done
rc=$(cat "$status")
rm -f "$status"
if [ "$rc" != 0 ]; then
    echo "deps: apt-get install failed (exit $rc); run it yourself: apt-get install$missing" >&2
    exit 1
fi
echo "deps: installed:$missing"
