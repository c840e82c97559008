#!/usr/bin/env bash
# Builds the emulated Raspberry Pi (QEMU raspi3b) from Debian's mirror, and caches it:
#
#   board/hil/pi/image.sh [--cache DIR]      prints the directory of the image (default
#                                            $TERN_PI_CACHE, or $TERN_CROSS_CACHE/pi-trixie, or
#                                            /var/cache/tern-cross/pi-trixie)
#   board/hil/pi/image.sh --status           prints "warm" (cached and current) or "cold"
#
# In it:
#   rootfs.img   a trixie arm64 root file system (ext4, the whole SD card; 2 GiB, a power of two as
#                QEMU's SD card wants) made by mmdebstrap: systemd, Debian's arm64 kernel and its
#                initramfs, openssh-server, python3, gpiod, and the libraries tern's .deb depends on
#   vmlinuz, initrd.img   the kernel and initramfs installed in it (QEMU loads them directly)
#   rpi3b.dtb    the kernel's own broadcom/bcm2837-rpi-3-b.dtb with the PL011's Bluetooth node removed
#                (what dtoverlay=disable-bt does on a Pi): the PL011 is /dev/ttyAMA0, /dev/serial0
#   id_ed25519   the key root logs in with over SSH (the guest is reachable only through QEMU's
#                user-mode network, from this machine)
# Nothing of tern is in it: board/hil/pi/boot.sh boots a copy-on-write overlay of it and the HIL run
# installs the .deb with dpkg. mmdebstrap and apt check the signed index and every file's hash; the
# kernel is pinned in deploy/cross/versions (PI_KERNEL). Cold: ~12 minutes (package scripts run under
# qemu-user), ~400 MB. Needs root, qemu-user-static and binfmt_misc (registered here if missing).
set -euo pipefail
# Stdout carries the image's directory and nothing else (a caller captures it): every tool's chatter
# goes to stderr, the result to fd 3.
exec 3>&1 1>&2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
CACHE=${TERN_PI_CACHE:-${TERN_CROSS_CACHE:-/var/cache/tern-cross}/pi-trixie}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
STATUS=0
while [ $# -gt 0 ]; do
    case "$1" in
        --cache) CACHE=$2; shift 2 ;;
        --status) STATUS=1; shift ;;
        -h|--help) sed -n '2,22p' "$0" >&3; exit 0 ;;
        *) echo "image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
say() { echo "==> pi image: $*" >&2; }
fail() { echo "image.sh: $*" >&2; exit 1; }
# shellcheck disable=SC1091  # the pins, read as shell
. "$repo/deploy/cross/versions"
: "${PI_KERNEL:?deploy/cross/versions names no PI_KERNEL}"
PACKAGES="systemd-sysv udev kmod initramfs-tools $PI_KERNEL openssh-server python3 gpiod procps iproute2
  libgpiod3 libsqlite3-0 zlib1g libstdc++6 libgcc-s1 passwd"
layout=3  # bump when what the image is made of changes (the hooks below)
pins=$(echo "$layout $MIRROR $PACKAGES" | sha256sum | cut -c1-16)
cached=0
[ "$(cat "$CACHE/.tern-pins" 2>/dev/null)" = "$pins" ] && [ -f "$CACHE/rootfs.img" ] && cached=1
if [ "$STATUS" = 1 ]; then
    if [ "$cached" = 1 ]; then echo warm >&3; else echo cold >&3; fi
    exit 0
fi
[ "$cached" = 0 ] || { echo "$CACHE" >&3; exit 0; }
[ "$(id -u)" = 0 ] || fail "needs root (mmdebstrap, binfmt_misc): run it with sudo"

need=()
for tool in mmdebstrap:mmdebstrap arch-test:arch-test mke2fs:e2fsprogs fdtput:device-tree-compiler qemu-aarch64-static:qemu-user-static; do
    command -v "${tool%%:*}" > /dev/null || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null
fi
# Foreign package scripts run through binfmt_misc (F: the interpreter is opened now, usable in a chroot).
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || fail "cannot mount binfmt_misc (a container without it?)"
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    conf=/usr/lib/binfmt.d/qemu-aarch64.conf
    [ -f "$conf" ] || fail "$conf missing: apt-get install qemu-user-static"
    cat "$conf" > /proc/sys/fs/binfmt_misc/register
fi

say "building a trixie arm64 root file system in $CACHE (cold: ~12 minutes)"
rm -rf "$CACHE"
mkdir -p "$CACHE"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ssh-keygen -q -t ed25519 -N '' -C tern-hil -f "$CACHE/id_ed25519"
# The image, as a Pi with Raspberry Pi OS is set up for a UART receiver: /dev/serial0 for the PL011,
# the serial console on the mini UART; DHCP on the (USB) Ethernet; root over SSH with the rig's key.
# bcm2835_wdt is left out: QEMU resets the machine as soon as /dev/watchdog is opened. The files
# the initramfs must see (that blacklist) are written before any package is installed. The initramfs
# is built once, by a customize hook once every package with an initramfs hook is in: the kernel's
# postinst hook skips it (INITRD=No, which that hook reads; left alone, it and initramfs-tools'
# trigger both built it, 4 minutes each under qemu-user). Without an initrd at its postinst the
# kernel gets no /initrd.img link: the files are taken from /boot.
# shellcheck disable=SC2086,SC2016  # the package list is words; the hooks' $1 is mmdebstrap's
INITRD=No mmdebstrap --variant=apt --architectures=arm64 --include="$(echo $PACKAGES | tr ' ' ',')" \
    --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
    --setup-hook='mkdir -p "$1/etc/modprobe.d" "$1/etc/udev/rules.d" "$1/etc/systemd/network"' \
    --setup-hook='echo "blacklist bcm2835_wdt" > "$1/etc/modprobe.d/tern-hil-no-watchdog.conf"' \
    --setup-hook='printf "KERNEL==\"ttyAMA0\", SYMLINK+=\"serial0\", GROUP=\"dialout\", MODE=\"0660\"\n" > "$1/etc/udev/rules.d/90-serial0.rules"' \
    --setup-hook='printf "[Match]\nType=ether\n[Network]\nDHCP=yes\n" > "$1/etc/systemd/network/50-wired.network"' \
    --customize-hook='echo tern-pi > "$1/etc/hostname"' \
    --customize-hook='echo "/dev/mmcblk0 / ext4 rw,noatime 0 1" > "$1/etc/fstab"' \
    --customize-hook='chroot "$1" systemctl enable systemd-networkd.service' \
    --customize-hook='mkdir -p -m 700 "$1/root/.ssh"' \
    --customize-hook="cp '$CACHE/id_ed25519.pub' \"\$1/root/.ssh/authorized_keys\"" \
    --customize-hook='chroot "$1" passwd -d root' \
    --customize-hook='chroot "$1" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer man-db.timer' \
    --customize-hook='[ -e "$1/initrd.img" ] || chroot "$1" update-initramfs -c -k all' \
    --customize-hook="cp \"\$1\"/boot/vmlinuz-* '$CACHE/vmlinuz'" \
    --customize-hook="cp \"\$1\"/boot/initrd.img-* '$CACHE/initrd.img'" \
    --customize-hook="cp \"\$1\"/usr/lib/linux-image-*/broadcom/bcm2837-rpi-3-b.dtb '$work/rpi3b.dtb'" \
    trixie "$work/root" "$MIRROR" >&2 || fail "mmdebstrap trixie arm64 from $MIRROR failed (see above)"
fdtput -r "$work/rpi3b.dtb" /soc/serial@7e201000/bluetooth
cp "$work/rpi3b.dtb" "$CACHE/rpi3b.dtb"
mke2fs -q -t ext4 -L tern-pi -d "$work/root" "$CACHE/rootfs.img" 2G || fail "mke2fs -d failed"
echo "$pins" > "$CACHE/.tern-pins"
say "done: $(du -sh "$CACHE" | cut -f1) in $CACHE"
echo "$CACHE" >&3
