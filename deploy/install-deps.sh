#!/usr/bin/env bash
# Installs the system packages Tern builds against (Debian / Raspberry Pi OS): libgpiod and SQLite
# headers. Only what is missing; uses sudo when not root. Safe to re-run.
set -euo pipefail
PACKAGES=(libgpiod-dev libsqlite3-dev pkg-config)
missing=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
if ! command -v swift >/dev/null 2>&1; then
    echo "install-deps.sh: no swift on PATH: install a Swift 6 toolchain first (swift.org/install)" >&2
fi
SUDO=()
if [ "$(id -u)" != 0 ]; then SUDO=(sudo); fi
echo "==> installing ${missing[*]}" >&2
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
