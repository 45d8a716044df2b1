#!/usr/bin/env bash
# Install the Debian packages that browser and distributed tests need, when missing.
set -euo pipefail
packages=(chromium redis-server)
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "system-deps: need root to install ${missing[*]} (apt-get install -y ${missing[*]})" >&2
        exit 1
    fi
else
    SUDO=""
fi
echo "system-deps: installing ${missing[*]} (${packages[*]} are needed)"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
