#!/usr/bin/env bash
# Builds the emulated Raspberry Pi's SD card from Debian's mirror, in the shape of a Raspberry Pi
# OS trixie (Lite, arm64) image, and caches it:
#
#   board/hil/pi/image.sh [--cache DIR]      prints the directory of the image (default
#                                            $TERN_PI_CACHE, or $TERN_CROSS_CACHE/pi-os-trixie, or
#                                            /var/cache/tern-cross/pi-os-trixie)
#   board/hil/pi/image.sh --status           prints "warm" (cached and current) or "cold"
#
# In it:
#   card.img     2 GiB (a power of two, as QEMU's SD card wants), an MBR with, as Raspberry Pi OS:
#     1 bootfs   FAT32 labelled "bootfs", mounted at /boot/firmware: kernel8.img and initramfs8
#                (Debian's arm64 kernel, pinned in deploy/cross/versions as PI_KERNEL),
#                bcm2710-rpi-3-b.dtb (the kernel's own broadcom/bcm2837-rpi-3-b.dtb, under the name
#                the firmware loads on a Pi 3 B), overlays/disable-bt.dtbo (board/hil/pi/disable-bt.dts),
#                config.txt, cmdline.txt (root=PARTUUID=…-02) and cloud-init's NoCloud seed files
#                (meta-data, user-data, network-config), read from the bootfs label
#     2 rootfs   ext4 labelled "rootfs": trixie arm64 by mmdebstrap (signed index, every file's
#                hash checked): systemd, cloud-init, systemd-networkd (DHCP on any Ethernet; Raspberry
#                Pi OS has NetworkManager, which ran no DHCP on QEMU's usb-net here), systemd-timesyncd, fake-hwclock,
#                openssh-server (disabled until the user's first boot enables it), sudo, python3,
#                gpiod; no user, no SSH host keys, no Tern and no chrony
#   id_ed25519   a key pair the rig gives flash-image.sh (--ssh-key) for the user it creates
# board/hil/pi/boot.sh boots a card as the firmware would, from what its bootfs holds. What a real
# Raspberry Pi OS image has and this one lacks (the firmware, Raspberry Pi's kernel, raspi-config,
# rpi-cloud-init-mods) is in docs/hil.md, "In CI (emulated Raspberry Pi)". Cold: ~30 minutes (package scripts run
# under qemu-user), ~500 MB. Needs root, qemu-user-static and binfmt_misc (registered here if missing).
set -euo pipefail
# Stdout carries the image's directory and nothing else (a caller captures it): every tool's chatter
# goes to stderr, the result to fd 3.
exec 3>&1 1>&2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
CACHE=${TERN_PI_CACHE:-${TERN_CROSS_CACHE:-/var/cache/tern-cross}/pi-os-trixie}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
STATUS=0
while [ $# -gt 0 ]; do
    case "$1" in
        --cache) CACHE=$2; shift 2 ;;
        --status) STATUS=1; shift ;;
        -h|--help) sed -n '2,28p' "$0" >&3; exit 0 ;;
        *) echo "image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
say() { echo "==> pi image: $*" >&2; }
fail() { echo "image.sh: $*" >&2; exit 1; }
# shellcheck disable=SC1091  # the pins, read as shell
. "$repo/deploy/cross/versions"
: "${PI_KERNEL:?deploy/cross/versions names no PI_KERNEL}"
# Raspberry Pi OS Lite's shape: its time (systemd-timesyncd, no RTC: fake-hwclock), first boot
# (cloud-init; e2fsprogs for its resizefs), and what the HIL suite runs in the guest (python3,
# gpiod). The network: systemd-networkd, not Raspberry Pi OS's NetworkManager (1.52 activated
# QEMU's usb-net without ever starting DHCP here: "CONNECTED_LOCAL", no dhcp4 transaction).
# Tern's dependencies and chrony are not here: flash-image.sh carries them.
PACKAGES="systemd-sysv udev kmod initramfs-tools $PI_KERNEL openssh-server sudo python3 gpiod procps iproute2
  passwd cloud-init systemd-timesyncd fake-hwclock dosfstools e2fsprogs ca-certificates"
DISK_ID=0x7e2a0001   # the MBR's disk identifier: PARTUUIDs 7e2a0001-01 (bootfs) and -02 (rootfs)
layout=5  # bump when what the image is made of changes (the hooks below)
pins=$(echo "$layout $MIRROR $PACKAGES $(sha256sum < "$here/disable-bt.dts")" | sha256sum | cut -c1-16)  # not the path: a clone elsewhere shares the cache
cached=0
[ "$(cat "$CACHE/.tern-pins" 2>/dev/null)" = "$pins" ] && [ -f "$CACHE/card.img" ] && cached=1
if [ "$STATUS" = 1 ]; then
    if [ "$cached" = 1 ]; then echo warm >&3; else echo cold >&3; fi
    exit 0
fi
[ "$cached" = 0 ] || { echo "$CACHE" >&3; exit 0; }
[ "$(id -u)" = 0 ] || fail "needs root (mmdebstrap, binfmt_misc): run it with sudo"

need=()
for tool in mmdebstrap:mmdebstrap arch-test:arch-test mke2fs:e2fsprogs dtc:device-tree-compiler \
    qemu-aarch64-static:qemu-user-static mkfs.vfat:dosfstools mcopy:mtools sfdisk:fdisk; do
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

say "building a Raspberry Pi OS-shaped trixie arm64 card in $CACHE (cold: ~30 minutes)"
rm -rf "$CACHE"
mkdir -p "$CACHE"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ssh-keygen -q -t ed25519 -N '' -C tern-hil -f "$CACHE/id_ed25519"
boot=$work/boot
mkdir -p "$boot/overlays"
dtc -q -@ -I dts -O dtb -o "$boot/overlays/disable-bt.dtbo" "$here/disable-bt.dts" || fail "dtc cannot compile disable-bt.dts"
# Raspberry Pi OS's files, as its trixie image has them on the card:
#  - /etc/fstab by PARTUUID, the bootfs at /boot/firmware;
#  - cloud-init reads its NoCloud seed from the FAT labelled bootfs (rpi-cloud-init-mods does this
#    on Raspberry Pi OS) and renders the network for systemd-networkd;
#  - udev names the PL011 /dev/serial0 (raspberrypi-sys-mods' rule, for the mainline kernel's ttyAMA0);
#  - ssh is off until the user's first boot enables it; no SSH host keys (the first boot makes them).
# bcm2835_wdt is left out: QEMU resets the machine as soon as /dev/watchdog is opened. The
# initramfs is built once, by a customize hook once every package with an initramfs hook is in
# (INITRD=No: the kernel's postinst skips it, 4 minutes under qemu-user).
# shellcheck disable=SC2086,SC2016  # the package list is words; the hooks' $1 is mmdebstrap's
INITRD=No mmdebstrap --variant=apt --architectures=arm64 --include="$(echo $PACKAGES | tr ' ' ',')" \
    --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
    --setup-hook='mkdir -p "$1/etc/modprobe.d" "$1/etc/udev/rules.d" "$1/etc/cloud/cloud.cfg.d" "$1/etc/systemd/network"' \
    --setup-hook='printf "[Match]\nType=ether\n[Network]\nDHCP=yes\n" > "$1/etc/systemd/network/50-wired.network"' \
    --setup-hook='echo "blacklist bcm2835_wdt" > "$1/etc/modprobe.d/tern-hil-no-watchdog.conf"' \
    --setup-hook='printf "KERNEL==\"ttyAMA0\", SYMLINK+=\"serial0\", GROUP=\"dialout\", MODE=\"0660\"\n" > "$1/etc/udev/rules.d/90-serial0.rules"' \
    --setup-hook='printf "datasource_list: [NoCloud, None]\ndatasource:\n  NoCloud:\n    fs_label: bootfs\nsystem_info:\n  network:\n    renderers: [networkd]\n" > "$1/etc/cloud/cloud.cfg.d/99_raspberry-pi.cfg"' \
    --customize-hook='echo raspberrypi > "$1/etc/hostname"' \
    --customize-hook='printf "127.0.0.1\tlocalhost\n127.0.1.1\traspberrypi\n" > "$1/etc/hosts"' \
    --customize-hook="printf 'proc /proc proc defaults 0 0\nPARTUUID=${DISK_ID#0x}-01 /boot/firmware vfat defaults 0 2\nPARTUUID=${DISK_ID#0x}-02 / ext4 defaults,noatime 0 1\n' > \"\$1/etc/fstab\"" \
    --customize-hook='mkdir -p "$1/boot/firmware"' \
    --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*' \
    --customize-hook='chroot "$1" systemctl disable ssh.service' \
    --customize-hook='chroot "$1" systemctl enable systemd-networkd.service' \
    --customize-hook='chroot "$1" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer man-db.timer' \
    --customize-hook='[ -e "$1/initrd.img" ] || chroot "$1" update-initramfs -c -k all' \
    --customize-hook="cp \"\$1\"/boot/vmlinuz-* '$boot/kernel8.img'" \
    --customize-hook="cp \"\$1\"/boot/initrd.img-* '$boot/initramfs8'" \
    --customize-hook="cp \"\$1\"/usr/lib/linux-image-*/broadcom/bcm2837-rpi-3-b.dtb '$boot/bcm2710-rpi-3-b.dtb'" \
    trixie "$work/root" "$MIRROR" >&2 || fail "mmdebstrap trixie arm64 from $MIRROR failed (see above)"

# The bootfs as Raspberry Pi OS trixie ships it (its config.txt, trimmed to what a Pi 3 B reads).
cat > "$boot/config.txt" <<'TXT'
# For more options and information see
# https://rpf.io/configtxt
# Some settings may impact device functionality. See link above for details

# Automatically load initramfs files, if found
auto_initramfs=1

# Enable DRM VC4 V3D driver
dtoverlay=vc4-kms-v3d
max_framebuffers=2

# Don't have the firmware create an initial video= setting in cmdline.txt.
# Use the kernel's default instead.
disable_fw_kms_setup=1

# Run in 64-bit mode
arm_64bit=1

# Disable compensation for displays with overscan
disable_overscan=1

# Run as fast as firmware / board allows
arm_boost=1

[all]
TXT
echo "console=serial0,115200 console=tty1 root=PARTUUID=${DISK_ID#0x}-02 rootfstype=ext4 fsck.repair=yes rootwait quiet" > "$boot/cmdline.txt"
printf 'instance-id: rpios-image\n' > "$boot/meta-data"
printf '#cloud-config\n# See https://cloudinit.readthedocs.io/ (Raspberry Pi OS: set by Raspberry Pi Imager)\n' > "$boot/user-data"
printf 'network:\n  version: 2\n' > "$boot/network-config"

# The card: bootfs (512 MiB from 4 MiB) and rootfs (the rest), filled without loop devices.
size_mib=2048 boot_start=8192 boot_sectors=$((512 * 2048))
root_start=$((boot_start + boot_sectors)) root_sectors=$((size_mib * 2048 - boot_start - boot_sectors))
mkfs.vfat -F 32 -n bootfs -C "$work/boot.fat" $((boot_sectors / 2)) > /dev/null || fail "mkfs.vfat failed"
MTOOLS_SKIP_CHECK=1 mcopy -s -i "$work/boot.fat" "$boot"/* ::/ || fail "mcopy into the bootfs failed"
mke2fs -q -t ext4 -L rootfs -d "$work/root" "$work/root.ext4" $((root_sectors / 2))k || fail "mke2fs -d failed"
truncate -s "${size_mib}M" "$work/card.img"
printf 'label: dos\nlabel-id: %s\n%s,%s,c\n%s,%s,83\n' "$DISK_ID" "$boot_start" "$boot_sectors" "$root_start" "$root_sectors" \
    | sfdisk -q "$work/card.img" || fail "sfdisk failed"
dd if="$work/boot.fat" of="$work/card.img" bs=512 seek="$boot_start" conv=notrunc,sparse status=none
dd if="$work/root.ext4" of="$work/card.img" bs=512 seek="$root_start" conv=notrunc,sparse status=none
mv "$work/card.img" "$CACHE/card.img"
echo "$pins" > "$CACHE/.tern-pins"
say "done: $(du -sh "$CACHE" | cut -f1) in $CACHE"
echo "$CACHE" >&3
