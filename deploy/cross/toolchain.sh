#!/usr/bin/env bash
# Assembles Tern's arm64 cross toolchain from Debian's packages only, and caches it.
#
#   deploy/cross/toolchain.sh [--release trixie] [--cache DIR]      prints the toolchain's directory
#   deploy/cross/toolchain.sh --status [--release trixie]   prints "warm" (cached and current) or
#                                                           "cold" (this run would build it), builds nothing
#
# In DIR (default /var/cache/tern-cross, or $TERN_CROSS_CACHE):
#   sid/                                 a Debian sid chroot (amd64, debootstrap --variant=minbase)
#                                        with sid's swiftlang: the compiler (Debian's newest Swift;
#                                        trixie's 6.0 is too old for the pinned packages, and a
#                                        compiler must match the target's stdlib version exactly)
#   sdk/tern-arm64-RELEASE.artifactbundle  a SwiftPM Swift SDK: RELEASE's arm64 glibc, libstdc++,
#                                        libgpiod, SQLite and zlib, plus the aarch64 Swift runtime
#                                        from sid's arm64 swiftlang (static archives); beside its
#                                        sysroot/, debian-control/PACKAGE/ keeps each target
#                                        package's control files (symbols, shlibs) for Depends
#
# Every package comes through apt or debootstrap, which check the mirror's signed index (InRelease,
# Debian's archive keyring) and each file's SHA256 against it. Versions are pinned in
# deploy/cross/versions (a pin the mirror no longer has fails with that name). A toolchain whose
# pins changed is rebuilt; otherwise the cached one is reused (a cold build downloads ~1.3 GB).
# Needs root (debootstrap, chroot). MIRROR overrides http://deb.debian.org/debian.
set -euo pipefail
# Stdout carries the cache's directory and nothing else (deploy/cross/build.sh captures it): every
# tool's chatter goes to stderr, the result to fd 3.
exec 3>&1 1>&2
here=$(cd "$(dirname "$0")" && pwd)
RELEASE=trixie
STATUS=0
CACHE=${TERN_CROSS_CACHE:-/var/cache/tern-cross}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
while [ $# -gt 0 ]; do
    case "$1" in
        --release) RELEASE=$2; shift 2 ;;
        --cache) CACHE=$2; shift 2 ;;
        --status) STATUS=1; shift ;;
        -h|--help) sed -n '2,24p' "$0" >&3; exit 0 ;;
        *) echo "toolchain.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
say() { echo "==> toolchain: $*" >&2; }
fail() { echo "toolchain.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap and chroot): run it with sudo"
case "$RELEASE" in
    trixie) ;;
    bookworm) fail "bookworm: Debian's Swift runtime needs GLIBC_2.38, bookworm has 2.36 (see docs/raspberry-pi.md, 'Which Pi, which OS')" ;;
    *) fail "release must be trixie, got $RELEASE" ;;
esac
# shellcheck disable=SC1091  # the pins, read as shell
. "$here/versions"
host_pins=$(echo "$MIRROR $HOST_PACKAGES" | sha256sum | cut -c1-16)
layout=3  # bump when the layout of the SDK changes
pins=$(echo "$layout $MIRROR $HOST_PACKAGES $TARGET_PACKAGES $TARGET_SWIFT" | sha256sum | cut -c1-16)
sid=$CACHE/sid
bundle=$CACHE/sdk/tern-arm64-$RELEASE.artifactbundle
sysroot=$bundle/tern-arm64-$RELEASE/aarch64-unknown-linux-gnu/sysroot
if [ "$STATUS" = 1 ]; then
    if [ "$(cat "$sid/.tern-pins" 2>/dev/null)" = "$host_pins" ] && [ "$(cat "$bundle/.tern-pins" 2>/dev/null)" = "$pins" ]; then
        echo warm >&3
    else
        echo cold >&3
    fi
    exit 0
fi

for tool in debootstrap chroot dpkg-deb; do
    command -v "$tool" >/dev/null || missing_tools=1
done
if [ -n "${missing_tools:-}" ]; then
    say "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

in_sid() { chroot "$sid" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
mount_sid() {  # /proc and /dev for the compiler; unmounted by unmount_sid
    mountpoint -q "$sid/proc" || mount -t proc proc "$sid/proc"
    mountpoint -q "$sid/dev" || mount --bind /dev "$sid/dev"
}
unmount_sid() {
    for m in dev proc; do mountpoint -q "$sid/$m" && umount -l "$sid/$m"; done
    return 0
}

# 1. The build host: sid with swiftlang, lld and the aarch64 binutils (strip, readelf).
if [ "$(cat "$sid/.tern-pins" 2>/dev/null)" != "$host_pins" ]; then
    say "building the sid chroot in $sid (cold: ~5 minutes, ~800 MB)"
    unmount_sid 2>/dev/null || true
    rm -rf "$sid"
    mkdir -p "$CACHE"
    debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
        sid "$sid" "$MIRROR" >&2 || fail "debootstrap sid from $MIRROR failed (see above)"
    # The mirror's sid index may be past its Valid-Until (a frozen snapshot): the signature is still checked.
    echo 'Acquire::Check-Valid-Until "false";' > "$sid/etc/apt/apt.conf.d/99tern-valid-until"
    cat > "$sid/etc/apt/sources.list" <<EOF
deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR sid main
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $RELEASE main
EOF
    in_sid dpkg --add-architecture arm64
    trap unmount_sid EXIT
    mount_sid
    in_sid apt-get update -qq >&2
    # shellcheck disable=SC2086
    in_sid env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $HOST_PACKAGES >&2 ||
        fail "installing the pinned host packages in sid failed: is every pin in deploy/cross/versions still on $MIRROR?"
    echo "$host_pins" > "$sid/.tern-pins"
fi

# 2. The target: RELEASE's arm64 libraries and sid's arm64 Swift runtime, unpacked into a sysroot.
if [ "$(cat "$bundle/.tern-pins" 2>/dev/null)" != "$pins" ]; then
    say "building the arm64 $RELEASE sysroot in $sysroot"
    trap unmount_sid EXIT
    mount_sid
    rm -rf "$bundle" "$sid/tmp/debs"
    mkdir -p "$sysroot" "$sid/tmp/debs" "$(dirname "$sysroot")/debian-control"
    # apt-get download checks each file's hash against the signed index.
    chmod 0777 "$sid/tmp/debs"  # apt downloads as _apt
    # shellcheck disable=SC2086  # the package lists are words
    in_sid sh -c 'cd /tmp/debs && exec apt-get download -qq "$@"' sh $TARGET_PACKAGES $TARGET_SWIFT >&2 ||
        fail "downloading the pinned arm64 packages failed: is every pin in deploy/cross/versions still on $MIRROR?"
    for deb in "$sid"/tmp/debs/*.deb; do
        case "$(basename "$deb")" in
            swiftlang_*) dpkg-deb -x "$deb" "$sid/tmp/debs/swiftlang" ;;
            *)  # the files, and the control files (symbols, shlibs) that deploy/cross/depends.py reads
                dpkg-deb -x "$deb" "$sysroot"
                dpkg-deb -e "$deb" "$(dirname "$sysroot")/debian-control/$(dpkg-deb -f "$deb" Package)" ;;
        esac
    done
    runtime=$sid/tmp/debs/swiftlang/usr/libexec/swift/lib
    [ -f "$runtime/swift_static/linux/libswiftCore.a" ] || fail "the arm64 swiftlang has no static runtime at usr/libexec/swift/lib/swift_static"
    for dir in swift swift_static clang; do
        rm -rf "${sysroot:?}/usr/lib/$dir"
        cp -a "$runtime/$dir" "$sysroot/usr/lib/$dir"
    done
    rm -rf "$sid/tmp/debs"
    # Merged /usr, as on the target: the linker scripts (libc.so, libm.so) name /lib/... paths.
    for d in lib bin sbin; do [ -e "$sysroot/$d" ] || ln -s "usr/$d" "$sysroot/$d"; done
    # Absolute symlinks (lib*.so -> /lib/...) must point into the sysroot.
    find "$sysroot" -type l -lname '/*' | while read -r link; do
        ln -sfn "$sysroot$(readlink "$link")" "$link"
    done
    triple_dir=$(dirname "$sysroot")
    cat > "$triple_dir/swift-sdk.json" <<'EOF'
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "aarch64-unknown-linux-gnu": {
      "sdkRootPath": "sysroot",
      "swiftResourcesPath": "sysroot/usr/lib/swift",
      "swiftStaticResourcesPath": "sysroot/usr/lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
EOF
    cat > "$triple_dir/toolset.json" <<'EOF'
{
  "schemaVersion": "1.0",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld"] },
  "cCompiler": { "extraCLIOptions": ["-fuse-ld=lld"] },
  "cxxCompiler": { "extraCLIOptions": ["-fuse-ld=lld"] }
}
EOF
    cat > "$bundle/info.json" <<EOF
{
  "schemaVersion": "1.0",
  "artifacts": {
    "tern-arm64-$RELEASE": {
      "type": "swiftSDK",
      "version": "$pins",
      "variants": [{ "path": "tern-arm64-$RELEASE/aarch64-unknown-linux-gnu" }]
    }
  }
}
EOF
    echo "$pins" > "$bundle/.tern-pins"
fi
say "ready: swiftlang $(in_sid dpkg-query -W -f "\${Version}" swiftlang), SDK $bundle"
echo "$CACHE" >&3
