#!/usr/bin/env bash
# Cross-builds the release `tern` for arm64 with Debian's own Swift (deploy/build.sh --arch arm64
# runs this): sid's swiftlang in the cached chroot, the release's arm64 sysroot as a Swift SDK
# (deploy/cross/toolchain.sh), this checkout bind-mounted into the chroot.
#
#   deploy/cross/build.sh [--release trixie] [--out FILE]      default FILE: dist/arm64-RELEASE/tern
#
# The binary is stripped and checked against the release's glibc and libstdc++ (glibc-floor.sh).
# Build products stay in the toolchain's cache (build-arm64-RELEASE/, seen as .build-arm64-RELEASE/).
# Needs root (chroot, bind mounts).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
RELEASE=trixie
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --release) RELEASE=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "cross/build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
cache=$(deploy/cross/toolchain.sh --release "$RELEASE")
if [ ! -f "$cache/sid/.tern-pins" ] || [ ! -e "$cache/sid/usr/libexec/swift/bin/swift" ]; then
    echo "cross/build.sh: toolchain.sh answered '$cache', which holds no sid chroot with swift" >&2
    exit 1
fi
sid=$cache/sid
sdk=tern-arm64-$RELEASE
sysroot=$cache/sdk/$sdk.artifactbundle/$sdk/aarch64-unknown-linux-gnu/sysroot
OUT=${OUT:-dist/arm64-$RELEASE/tern}

mounts=()
bind() {  # bind SOURCE TARGET-IN-CHROOT
    mkdir -p "$sid$2"
    mount --bind "$1" "$sid$2"
    mounts=("$sid$2" "${mounts[@]}")
}
# shellcheck source=deploy/lib/build-info.sh
. "$repo/deploy/lib/build-info.sh"
cleanup() {
    for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done
    remove_build_info "$repo"
}
trap cleanup EXIT
mountpoint -q "$sid/proc" || { mount -t proc proc "$sid/proc"; mounts=("$sid/proc" "${mounts[@]}"); }
mountpoint -q "$sid/dev" || bind /dev /dev
bind "$repo" /src
bind "$cache/sdk" /sdk
# The build products live in the cache (a fresh clone reuses the packages' objects: the sources are
# always at /src in the chroot), mounted where SwiftPM looks for them.
mkdir -p "$cache/build-arm64-$RELEASE" "$repo/.build-arm64-$RELEASE"
bind "$cache/build-arm64-$RELEASE" "/src/.build-arm64-$RELEASE"
# Where this machine's git finds github.com (a local mirror of the packages, say), the chroot does too.
git config --get-regexp '^url\..*\.insteadof$' > "$sid/root/.gitconfig.tern" 2>/dev/null || true
: > "$sid/root/.gitconfig"
while read -r key value; do
    base=${key#url.}
    base=${base%.insteadof}
    if [ -d "$base" ] && ! mountpoint -q "$sid$base"; then bind "$base" "$base"; fi
    git config --file "$sid/root/.gitconfig" --add "url.$base.insteadOf" "$value"
done < "$sid/root/.gitconfig.tern"
git config --file "$sid/root/.gitconfig" --add safe.directory '*'

write_build_info "$repo"
args=(-c release --product tern --static-swift-stdlib --swift-sdks-path /sdk --swift-sdk "$sdk"
      --scratch-path ".build-arm64-$RELEASE")
in_sid() { chroot "$sid" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
echo "==> (sid chroot) swift build ${args[*]}" >&2
start=$SECONDS
in_sid sh -c 'cd /src && exec "$@"' sh swift build "${args[@]}"
bin=$(in_sid sh -c 'cd /src && exec "$@"' sh swift build "${args[@]}" --show-bin-path)/tern
mkdir -p "$(dirname "$OUT")"
in_sid aarch64-linux-gnu-strip -o "/src/$OUT" "/src/${bin#/src/}"
echo "==> $OUT ($(du -h "$OUT" | cut -f1)), built in $((SECONDS - start)) s with $(in_sid swift --version 2>/dev/null | head -1)" >&2
deploy/cross/glibc-floor.sh "$OUT" "$sysroot"
