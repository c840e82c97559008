#!/usr/bin/env bash
# Adds the C libraries Tern builds against (libgpiod, SQLite: headers and libraries) to the sysroot
# of a Swift SDK for Debian aarch64, for deploy/build.sh --swift-sdk. A Swift SDK made by
# swift-sdk-generator carries glibc and the Swift runtime, not these.
#
#   deploy/sdk-add-packages.sh SYSROOT [bookworm|trixie] [arm64]
#
# Downloads the .debs straight from deb.debian.org and unpacks them into SYSROOT (nothing is
# installed on this machine), verifying them as apt does: the release's InRelease must carry a
# good signature by a key of Debian's archive keyring (gpgv), the Packages.xz index must have the
# SHA256 and size that the signed InRelease names, and each .deb the SHA256 and size its Packages
# entry names. Anything else is refused before it is unpacked. bookworm has libgpiod 1.6 (the v1
# API), trixie libgpiod 2.x: build once per release, with a sysroot of that release.
#
# Needs: curl, xz-utils, gpgv, dpkg, and debian-archive-keyring (apt-get install curl xz-utils gpgv
# debian-archive-keyring).
# env: MIRROR   the Debian mirror (default http://deb.debian.org/debian; file:// works too)
#      KEYRING  the keyring InRelease must be signed by (default: Debian's archive keyring,
#               /usr/share/keyrings/debian-archive-keyring.{pgp,gpg})
set -euo pipefail
die() { echo "sdk-add-packages.sh: $*" >&2; exit 1; }
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
for tool in curl xz gpgv dpkg-deb sha256sum; do
    command -v "$tool" >/dev/null || die "$tool not found: apt-get install curl xz-utils gpgv dpkg coreutils"
done
if [ -z "${KEYRING:-}" ]; then
    for candidate in /usr/share/keyrings/debian-archive-keyring.pgp /usr/share/keyrings/debian-archive-keyring.gpg; do
        [ -f "$candidate" ] && { KEYRING=$candidate; break; }
    done
    [ -n "${KEYRING:-}" ] ||
        die "Debian's archive keyring is not installed (no /usr/share/keyrings/debian-archive-keyring.{pgp,gpg}): apt-get install debian-archive-keyring"
fi
[ -f "$KEYRING" ] || die "no keyring at $KEYRING"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch() { # URL FILE
    curl -fsSL -o "$2" "$1" || die "cannot fetch $1 (set MIRROR=… for another mirror)"
}
# check FILE SHA256 SIZE WHAT: refuses FILE unless it has that hash and size.
check() {
    local file=$1 want_sha=$2 want_size=$3 what=$4 sha size
    sha=$(sha256sum "$file" | cut -d' ' -f1)
    size=$(stat -c %s "$file")
    if [ "$sha" != "$want_sha" ] || [ "$size" != "$want_size" ]; then
        die "REFUSED $what: its SHA256 is $sha ($size bytes) but $5 says $want_sha ($want_size bytes). The mirror $MIRROR or the connection to it served a corrupt or altered file: nothing was unpacked; try again or another MIRROR"
    fi
}

echo "==> $MIRROR $RELEASE: InRelease, checked against $KEYRING" >&2
fetch "$MIRROR/dists/$RELEASE/InRelease" "$work/InRelease"
if ! gpgv --quiet --keyring "$KEYRING" --output "$work/Release" "$work/InRelease" 2>"$work/gpgv.log"; then
    sed 's/^/    /' "$work/gpgv.log" >&2
    die "REFUSED $MIRROR/dists/$RELEASE/InRelease: no good signature by a key of $KEYRING (gpgv, above). Nothing was unpacked; is debian-archive-keyring up to date (apt-get install debian-archive-keyring)?"
fi
suite=$(sed -n 's/^\(Suite\|Codename\): *//p' "$work/Release" | tr '\n' ' ')
[[ " $suite " == *" $RELEASE "* ]] ||
    die "REFUSED $MIRROR/dists/$RELEASE/InRelease: signed, but for '$suite', not $RELEASE"

index="main/binary-$ARCH/Packages.xz"
# The SHA256 section of Release: " <sha256> <size> <path>" lines.
read -r index_sha index_size < <(awk -v want="$index" '
    /^[^ ]/ { in_sha = ($1 == "SHA256:") ; next }
    in_sha && $3 == want { print $1, $2; exit }' "$work/Release") ||
    die "$RELEASE's signed Release names no $index: is $ARCH an architecture of $RELEASE?"
echo "==> $index" >&2
fetch "$MIRROR/dists/$RELEASE/$index" "$work/Packages.xz"
check "$work/Packages.xz" "$index_sha" "$index_size" "$MIRROR/dists/$RELEASE/$index" "the signed InRelease"
xz -d <"$work/Packages.xz" >"$work/Packages" || die "$index does not decompress"

for package in "${PACKAGES[@]}"; do
    read -r file sha size < <(awk -v p="$package" '
        $1 == "Package:" { hit = ($2 == p); f = s = z = "" }
        hit && $1 == "Filename:" { f = $2 }
        hit && $1 == "SHA256:" { s = $2 }
        hit && $1 == "Size:" { z = $2 }
        hit && f != "" && s != "" && z != "" { print f, s, z; exit }' "$work/Packages") ||
        die "$package is not in $RELEASE/$ARCH (or its entry has no Filename, SHA256 and Size)"
    echo "==> $package: $file" >&2
    fetch "$MIRROR/$file" "$work/$package.deb"
    check "$work/$package.deb" "$sha" "$size" "$MIRROR/$file" "the Packages index"
done
# Unpacked only once every file has been verified.
for package in "${PACKAGES[@]}"; do
    dpkg-deb -x "$work/$package.deb" "$SYSROOT"
done
# -dev packages link lib*.so to the versioned library: keep those links relative to the sysroot.
for needed in usr/include/gpiod.h usr/include/sqlite3.h; do
    [ -f "$SYSROOT/$needed" ] || { echo "sdk-add-packages.sh: $needed is missing in $SYSROOT after unpacking" >&2; exit 1; }
done
echo "==> $SYSROOT has libgpiod and SQLite for $RELEASE $ARCH (signature and checksums verified)" >&2
