#!/usr/bin/env bash
# Builds the `tern` binary a Pi runs: release, the Swift runtime linked in (--static-swift-stdlib),
# stripped, with its commit and build date (tern --version). The Pi then needs no Swift toolchain,
# only libgpiod and SQLite (the .deb depends on them).
#
#   deploy/build.sh                             native: on a Pi, any arm64 Debian machine, or x86_64
#   deploy/build.sh --arch arm64 --release trixie
#                                               cross, from x86_64, with Debian's own Swift: the
#                                               toolchain and the trixie arm64 sysroot come from
#                                               deploy/cross/toolchain.sh (cached; needs root)
#   deploy/build.sh --swift-sdk SDK_ID          cross with a Swift SDK of your own
#                                               (see deploy/README.md, "Cross-building")
#
# Writes dist/<arch>/tern, or dist/arm64-<release>/tern for --arch (override with --out FILE).
# A cross-built binary is checked against its release's glibc and libstdc++ (deploy/cross/
# glibc-floor.sh): the build fails when it needs a symbol version the release does not have.
# Needs: a Swift 6 toolchain, libgpiod-dev and libsqlite3-dev (deploy/install-deps.sh) for a native
# build. From the internet: the Swift packages named in Package.swift (pinned exactly), fetched by
# the first `swift build`; Debian's mirror for --arch.
set -euo pipefail
cd "$(dirname "$0")/.."
SDK=""
OUT=""
ARCH=""
RELEASE=trixie
while [ $# -gt 0 ]; do
    case "$1" in
        --swift-sdk) SDK=$2; shift 2 ;;
        --arch) ARCH=$2; shift 2 ;;
        --release) RELEASE=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$ARCH" in
    "" | arm64) ;;
    armhf | armel | arm)
        echo "build.sh: 32-bit ARM ($ARCH: Raspberry Pi OS 32-bit, Pi Zero/1) is not supported: Debian ships no Swift toolchain for it. Use the 64-bit Raspberry Pi OS (arm64) on a Pi 3, 4, 5 or Zero 2." >&2
        exit 2 ;;
    *) echo "build.sh: --arch must be arm64, got $ARCH" >&2; exit 2 ;;
esac
if [ "$ARCH" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then
    exec deploy/cross/build.sh --release "$RELEASE" ${OUT:+--out "$OUT"}
fi
# shellcheck source=deploy/lib/build-info.sh
. deploy/lib/build-info.sh
write_build_info .
trap 'remove_build_info .' EXIT
args=(-c release --product tern --static-swift-stdlib)
if [ -n "$SDK" ]; then
    args+=(--swift-sdk "$SDK")
    arch=aarch64
else
    arch=$(uname -m)
fi
echo "==> swift build ${args[*]}" >&2
swift build "${args[@]}"
bin=$(swift build "${args[@]}" --show-bin-path)/tern
OUT=${OUT:-dist/$arch/tern}
mkdir -p "$(dirname "$OUT")"
strip_tool="strip"
if [ -n "$SDK" ]; then strip_tool=$(command -v aarch64-linux-gnu-strip || command -v llvm-strip || echo strip); fi
"$strip_tool" -o "$OUT" "$bin"
echo "==> $OUT ($(du -h "$OUT" | cut -f1)); $( [ -z "$SDK" ] && "$OUT" --version || echo "built for aarch64")" >&2
