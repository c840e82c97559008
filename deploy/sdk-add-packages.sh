#!/usr/bin/env bash
# Adds the C libraries Tern builds against (libgpiod, SQLite: headers and libraries) to the sysroot
# of a Swift SDK for Debian aarch64, for deploy/build.sh --swift-sdk. A Swift SDK made by
# swift-sdk-generator carries glibc and the Swift runtime, not these.
#
#   deploy/sdk-add-packages.sh SYSROOT [bookworm|trixie] [arm64]
#
# Downloads the .debs straight from deb.debian.org (the release's Packages index, then each file;
# nothing is installed on this machine) and unpacks them into SYSROOT. bookworm has libgpiod 1.6
# (the v1 API), trixie libgpiod 2.x: build once per release, with a sysroot of that release.
set -euo pipefail
SYSROOT=${1:?usage: sdk-add-packages.sh SYSROOT [bookworm|trixie] [arm64]}
RELEASE=${2:-bookworm}
ARCH=${3:-arm64}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
case "$RELEASE" in
    bookworm) PACKAGES=(libgpiod-dev libgpiod2 libsqlite3-dev libsqlite3-0) ;;
    trixie) PACKAGES=(libgpiod-dev libgpiod3 libsqlite3-dev libsqlite3-0) ;;
    *) echo "sdk-add-packages.sh: release must be bookworm or trixie, got $RELEASE" >&2; exit 2 ;;
esac
[ -d "$SYSROOT" ] || { echo "sdk-add-packages.sh: no sysroot at $SYSROOT (the SDK's …/sysroot directory)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "==> $MIRROR $RELEASE main binary-$ARCH: Packages index" >&2
curl -fsSL "$MIRROR/dists/$RELEASE/main/binary-$ARCH/Packages.xz" | xz -d > "$work/Packages" ||
    { echo "sdk-add-packages.sh: cannot fetch the $RELEASE $ARCH index from $MIRROR (set MIRROR=…)" >&2; exit 1; }
for package in "${PACKAGES[@]}"; do
    file=$(awk -v p="$package" '$1 == "Package:" { hit = ($2 == p) } hit && $1 == "Filename:" { print $2; exit }' "$work/Packages")
    [ -n "$file" ] || { echo "sdk-add-packages.sh: $package is not in $RELEASE/$ARCH" >&2; exit 1; }
    echo "==> $package: $file" >&2
    curl -fsSL -o "$work/$package.deb" "$MIRROR/$file"
    dpkg-deb -x "$work/$package.deb" "$SYSROOT"
done
# -dev packages link lib*.so to the versioned library: keep those links relative to the sysroot.
for needed in usr/include/gpiod.h usr/include/sqlite3.h; do
    [ -f "$SYSROOT/$needed" ] || { echo "sdk-add-packages.sh: $needed is missing in $SYSROOT after unpacking" >&2; exit 1; }
done
echo "==> $SYSROOT has libgpiod and SQLite for $RELEASE $ARCH" >&2
