#!/usr/bin/env bash
# Tests deploy/flash-image.sh on synthetic Raspberry Pi OS images (bookworm with firstrun.sh,
# trixie with cloud-init): builds a two-partition image (FAT32 bootfs + ext4 rootfs), flashes it,
# and reads both partitions back (mtools; the ext4 root mounted read-only).
#
# usage: sudo deploy/test/flash-test.sh      (root: apt-get, losetup, mount; ~1 minute)
# Prints one line per check (ok / FAIL / skip … (reason)) and "N passed, N failed, N skipped";
# exits 1 on any FAIL, 0 with "skip" when this machine has no loop devices.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FLASH=$REPO/deploy/flash-image.sh
TERN_BIN=${TERN:-$REPO/.build/debug/tern}

if [ "$(id -u)" != 0 ]; then
    echo "flash-test.sh: run as root (sudo $0): it installs packages, attaches loop devices and mounts ext4" >&2
    exit 77
fi

# ---------------------------------------------------------------- packages
need=()
for pair in mcopy:mtools mkfs.vfat:dosfstools sfdisk:fdisk mkfs.ext4:e2fsprogs xz:xz-utils \
    dpkg-deb:dpkg losetup:mount blkid:util-linux; do
    command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
if [ "${#need[@]}" -gt 0 ]; then
    echo "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 || {
        apt-get update -qq >/dev/null &&
            apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    } || { echo "flash-test.sh: cannot install ${need[*]}: apt-get update, then apt-get install them" >&2; exit 69; }
fi
export MTOOLS_SKIP_CHECK=1

if ! probe=$(losetup -f 2>&1); then
    echo "skip flash-image.sh tests (no loop device: losetup -f says '$probe'; run on a machine or privileged container with /dev/loop*)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi

T=$(mktemp -d /tmp/tern-flash-test.XXXXXX)
MNT=$T/mnt
mkdir -p "$MNT"
TEST_LOOPS=()
cleanup() {
    set +e
    mountpoint -q "$MNT" && umount "$MNT"
    local loop
    for loop in "${TEST_LOOPS[@]}"; do losetup -d "$loop" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT

PASSED=0 FAILED=0 SKIPPED=0
ok() { echo "ok   $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
skip() { echo "skip $*"; SKIPPED=$((SKIPPED + 1)); }
check() { # description command…
    local what=$1; shift
    if "$@" >"$T/check.out" 2>&1; then ok "$what"; else fail "$what: $(head -c 400 "$T/check.out" | tr '\n' ' ')"; fi
}

# ---------------------------------------------------------------- fixtures
SSH_PUB="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlcm5mbGFzaHRlc3RrZXlub3RyZWFsbHlhbmVkMjU1 tern@test"
printf '%s\n' "$SSH_PUB" >"$T/key.pub"
mkdir -p "$T/deb/DEBIAN" "$T/deb/usr/share/doc/tern"
cat >"$T/deb/DEBIAN/control" <<'EOF'
Package: tern
Version: 0.0.0~flashtest
Architecture: arm64
Maintainer: Tern tests <tern@example.com>
Description: fake Tern package for deploy/test/flash-test.sh
EOF
echo "not the real thing" >"$T/deb/usr/share/doc/tern/README"
dpkg-deb --root-owner-group -Zxz --build "$T/deb" "$T/tern_0.0.0_arm64.deb" >/dev/null

CMDLINE_REST="console=tty1 root=PARTUUID=6c586e13-02 rootfstype=ext4 fsck.repair=yes rootwait quiet init=/usr/lib/raspberrypi-sys-mods/firstboot"
FIRSTRUN_TOKENS="systemd.run=/boot/firmware/firstrun.sh systemd.run_success_action=reboot systemd.unit=kernel-command-line.target"

# make_image CODENAME FILE: a 300 MiB Raspberry Pi OS-like image (bootfs 128 MiB FAT32, rootfs ext4).
make_image() {
    local codename=$1 out=$2 dir=$T/src-$1
    rm -rf "$dir"; mkdir -p "$dir/boot" "$dir/root/etc" "$dir/root/usr/bin" "$dir/root/boot/firmware" "$dir/root/home/pi"
    cat >"$dir/boot/config.txt" <<'EOF'
# For more options and information see
# http://rptl.io/configtxt
# Some settings may impact device functionality. See link above for details

# Uncomment some or all of these to enable the optional hardware interfaces
#dtparam=i2c_arm=on
#dtparam=i2s=on
#dtparam=spi=on

# Enable audio (loads snd_bcm2835)
dtparam=audio=on

# Automatically load overlays for detected cameras
camera_auto_detect=1

# Automatically load overlays for detected DSI displays
display_auto_detect=1

# Automatically load initramfs files, if found
auto_initramfs=1

# Enable DRM VC4 V3D driver
dtoverlay=vc4-kms-v3d
max_framebuffers=2

# Run in 64-bit mode
arm_64bit=1

# Disable compensation for displays with overscan
disable_overscan=1

# Run as fast as firmware / UART allows
arm_boost=1

[cm4]
# Enable host mode on the 2711 built-in XHCI USB controller.
otg_mode=1

[cm5]
dtoverlay=dwc2,dr_mode=host

[all]
EOF
    echo "console=serial0,115200 $CMDLINE_REST" >"$dir/boot/cmdline.txt"
    echo "placeholder kernel" >"$dir/boot/kernel8.img"
    local version=12
    [ "$codename" = trixie ] && version=13
    cat >"$dir/root/etc/os-release" <<EOF
PRETTY_NAME="Debian GNU/Linux $version ($codename)"
NAME="Debian GNU/Linux"
VERSION_ID="$version"
VERSION="$version ($codename)"
VERSION_CODENAME=$codename
ID=debian
EOF
    echo raspberrypi >"$dir/root/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\traspberrypi\n' >"$dir/root/etc/hosts"
    cat >"$dir/root/etc/fstab" <<'EOF'
proc            /proc           proc    defaults          0       0
PARTUUID=6c586e13-01  /boot/firmware  vfat    defaults          0       2
PARTUUID=6c586e13-02  /               ext4    defaults,noatime  0       1
EOF
    echo 'pi:x:1000:1000:,,,:/home/pi:/bin/bash' >"$dir/root/etc/passwd"
    if [ "$codename" = trixie ]; then
        mkdir -p "$dir/root/etc/cloud"
        echo "datasource_list: [ NoCloud, None ]" >"$dir/root/etc/cloud/cloud.cfg"
        printf '#!/bin/sh\n' >"$dir/root/usr/bin/cloud-init"; chmod 755 "$dir/root/usr/bin/cloud-init"
        printf '#cloud-config\n# the image default\n' >"$dir/boot/user-data"
        printf 'instance-id: rpios-image\n' >"$dir/boot/meta-data"
        printf 'network:\n  version: 2\n' >"$dir/boot/network-config"
    fi
    mkfs.vfat -F 32 -n bootfs -C "$dir/boot.fat" $((128 * 1024)) >/dev/null 2>&1
    mcopy -i "$dir/boot.fat" "$dir/boot/"* ::/
    mkfs.ext4 -q -F -L rootfs -d "$dir/root" "$dir/root.ext4" 160M >/dev/null 2>&1
    rm -f "$out"; truncate -s 300M "$out"
    printf 'label: dos\nlabel-id: 0x6c586e13\nstart=8192, size=262144, type=c\nstart=270336, type=83\n' | sfdisk -q "$out"
    dd if="$dir/boot.fat" of="$out" bs=1M seek=4 conv=notrunc,sparse status=none
    dd if="$dir/root.ext4" of="$out" bs=1M seek=132 conv=notrunc,sparse status=none
}

BOOT_OFFSET=$((8192 * 512)) ROOT_OFFSET=$((270336 * 512))
# boot_cat IMG NAME: a file of the FAT partition.
boot_cat() { mtype -i "$1@@$BOOT_OFFSET" "::/$2"; }
# read_back IMG DIR: every file of both partitions into DIR/boot and DIR/root (ro mount).
read_back() {
    local img=$1 dir=$2 loop
    rm -rf "$dir"; mkdir -p "$dir/boot" "$dir/root"
    mcopy -s -n -i "$img@@$BOOT_OFFSET" ::/ "$dir/boot/" 2>/dev/null
    loop=$(losetup -f --show -r -o "$ROOT_OFFSET" "$img"); TEST_LOOPS+=("$loop")
    mount -t ext4 -o ro,noload "$loop" "$MNT"
    cp -a "$MNT/." "$dir/root/"
    umount "$MNT"; losetup -d "$loop"
}
# manifest DIR: checksums, modes and link targets of every file read back.
manifest() {
    (cd "$1" && find . \( -type f -o -type l \) -printf '%p %m %l\n' | sort &&
        find . -type f -print0 | sort -z | xargs -0 sha256sum)
}
count_line() { grep -cxF -- "$2" "$1" || true; }

WIFI_PSK='pa$$ "word\x'   # quotes, dollars and a backslash: quoting must survive
printf '%s' "$WIFI_PSK" >"$T/psk"
flash() { "$FLASH" --ssh-key "$T/key.pub" --wifi-ssid "Home Net" --wifi-psk "$WIFI_PSK" --wifi-country gb \
    --deb "$T/tern_0.0.0_arm64.deb" --no-offline-packages "$@"; }

tern_check() { # file: tern config check exits 0 or 2
    local status=0
    "$TERN_BIN" config check "$1" >"$T/tern-check.out" 2>&1 || status=$?
    [ "$status" = 0 ] || [ "$status" = 2 ] || { cat "$T/tern-check.out"; return 1; }
}
TERN_OK=0
if [ -x "$TERN_BIN" ] && "$TERN_BIN" --version >/dev/null 2>&1; then TERN_OK=1; fi

check "flash-image.sh and this test are shellcheck-clean" \
    bash -c "! command -v shellcheck >/dev/null || shellcheck '$FLASH' '$REPO/deploy/test/flash-test.sh'"

# ---------------------------------------------------------------- both first-boot mechanisms
for codename in bookworm trixie; do
    make_image "$codename" "$T/$codename.img"
    source_image=$T/$codename.img
    if [ "$codename" = bookworm ]; then
        xz -T0 -1 -k "$T/$codename.img"; source_image=$T/$codename.img.xz
    fi
    out=$T/$codename-tracker.img
    check "$codename: flash-image.sh from $(basename "$source_image") exits 0" \
        flash --image "$source_image" --out "$out" --board adafruit-ultimate-gps --hostname tracker-07
    [ -f "$out" ] || { fail "$codename: no output image, later checks skipped"; continue; }
    read_back "$out" "$T/$codename-read"
    B=$T/$codename-read/boot R=$T/$codename-read/root

    check "$codename: config.txt has enable_uart=1 once" test "$(count_line "$B/config.txt" enable_uart=1)" = 1
    check "$codename: config.txt has dtoverlay=disable-bt once" test "$(count_line "$B/config.txt" dtoverlay=disable-bt)" = 1
    check "$codename: config.txt keeps its lines ([cm5], dtparam=audio=on)" \
        bash -c "grep -qxF '[cm5]' '$B/config.txt' && grep -qxF 'dtparam=audio=on' '$B/config.txt'"
    check "$codename: config.txt gets no dtparam=uart0=on without --pi5" test "$(count_line "$B/config.txt" dtparam=uart0=on)" = 0
    check "$codename: cmdline.txt is one line" test "$(wc -l <"$B/cmdline.txt")" = 1
    if [ "$codename" = bookworm ]; then
        check "bookworm: cmdline.txt loses console=serial0, keeps the rest, ends with the firstrun tokens" \
            test "$(cat "$B/cmdline.txt")" = "$CMDLINE_REST $FIRSTRUN_TOKENS"
        check "bookworm: firstrun.sh present and parses (bash -n)" bash -n "$B/firstrun.sh"
        check "bookworm: firstrun.sh sets host name, key, Wi-Fi and cleans up after itself" bash -c "
            grep -q '^NEW_HOSTNAME=tracker-07\$' '$B/firstrun.sh' && grep -qF 'AAAAC3NzaC1lZDI1NTE5' '$B/firstrun.sh' &&
            grep -q '^WIFI_COUNTRY=GB\$' '$B/firstrun.sh' && grep -qF \"sed -i 's| systemd.run.*||g' /boot/firmware/cmdline.txt\" '$B/firstrun.sh'"
        check "bookworm: firstrun.sh keeps the PSK with its quotes, dollars and backslash" bash -c "
            eval \"\$(grep '^WIFI_PSK=' '$B/firstrun.sh')\"; test \"\$WIFI_PSK\" = '$WIFI_PSK'"
        check "bookworm: no cloud-init files" bash -c "test ! -e '$B/user-data' && test ! -e '$B/meta-data'"
    else
        check "trixie: cmdline.txt loses console=serial0 and keeps the rest (no systemd.run)" \
            test "$(cat "$B/cmdline.txt")" = "$CMDLINE_REST"
        check "trixie: no firstrun.sh" test ! -e "$B/firstrun.sh"
        check "trixie: user-data starts with #cloud-config" test "$(head -n1 "$B/user-data")" = "#cloud-config"
        check "trixie: user-data parses as YAML: host name, user pi, the SSH key, ssh enabled" python3 -c "
import sys, yaml
d = yaml.safe_load(open('$B/user-data'))
assert d['hostname'] == 'tracker-07', d
u = d['users'][0]
assert u['name'] == 'pi' and u['ssh_authorized_keys'] == ['$SSH_PUB'] and u['lock_passwd'] is True, u
assert ['systemctl', 'enable', '--now', 'ssh'] in d['runcmd'], d['runcmd']"
        check "trixie: network-config parses: Wi-Fi SSID, PSK (quoted), country GB" python3 -c "
import yaml
w = yaml.safe_load(open('$B/network-config'))['network']['wifis']['wlan0']
assert w['access-points']['Home Net']['password'] == open('$T/psk').read(), w
assert w['regulatory-domain'] == 'GB', w"
        check "trixie: meta-data parses with an instance-id" python3 -c "
import yaml; d = yaml.safe_load(open('$B/meta-data')); assert d['instance-id'].startswith('tern-'), d"
    fi
    check "$codename: the .deb is staged in the root fs, unchanged" cmp "$T/tern_0.0.0_arm64.deb" "$R/var/lib/tern-flash/tern.deb"
    check "$codename: tern.toml staged (0600) with device = the host name" bash -c "
        test \"\$(stat -c %a '$R/var/lib/tern-flash/tern.toml')\" = 600 && grep -q '^device = \"tracker-07\"' '$R/var/lib/tern-flash/tern.toml' &&
        grep -q '^method = \"pmtk-standby\"' '$R/var/lib/tern-flash/tern.toml'"
    if [ "$TERN_OK" = 1 ]; then
        check "$codename: the staged tern.toml passes tern config check" tern_check "$R/var/lib/tern-flash/tern.toml"
    else
        skip "$codename: tern config check of the staged tern.toml (no runnable $TERN_BIN: build Tern or set TERN=)"
    fi
    check "$codename: tern-firstboot.service enabled, firstboot.sh parses" bash -c "
        test \"\$(readlink '$R/etc/systemd/system/multi-user.target.wants/tern-firstboot.service')\" = /etc/systemd/system/tern-firstboot.service &&
        grep -q '^ExecStart=/usr/local/lib/tern-flash/firstboot.sh' '$R/etc/systemd/system/tern-firstboot.service' &&
        test -x '$R/usr/local/lib/tern-flash/firstboot.sh' && bash -n '$R/usr/local/lib/tern-flash/firstboot.sh'"
    # Time from the receiver: tern.toml's [time] chrony_socket, chrony's SOCK line at that path (no PPS
    # on this board), and the chrony.service drop-in that lets the tern group write to the socket.
    check "$codename: tern.toml gets [time] chrony_socket = /run/chrony.tern.sock" bash -c "
        sed -n '/^\\[time\\]/,/^\\[/p' '$R/var/lib/tern-flash/tern.toml' | grep -q '^chrony_socket = \"/run/chrony.tern.sock\"'"
    check "$codename: /etc/chrony/conf.d/tern.conf has the SOCK refclock at that path, no PPS" bash -c "
        grep -qx 'refclock SOCK /run/chrony.tern.sock refid GPS poll 2 filter 4 delay 0.2' '$R/etc/chrony/conf.d/tern.conf' &&
        ! grep -q '^refclock PPS' '$R/etc/chrony/conf.d/tern.conf'"
    check "$codename: chrony.service drop-in gives the socket to group tern" \
        grep -qF "ExecStartPost=-+/bin/sh -c 'chgrp tern /run/chrony.tern.sock && chmod 0660 /run/chrony.tern.sock'" \
        "$R/etc/systemd/system/chrony.service.d/tern.conf"

    # Idempotence: flash the output again in place; nothing may change.
    manifest "$T/$codename-read" >"$T/$codename.before"
    if flash --image "$out" --out "$out" --board adafruit-ultimate-gps --hostname tracker-07 >"$T/rerun.out" 2>&1; then
        read_back "$out" "$T/$codename-reread"
        manifest "$T/$codename-reread" >"$T/$codename.after"
        check "$codename: a second run on the output changes no file" diff "$T/$codename.before" "$T/$codename.after"
        check "$codename: the second run reports 0 changes" grep -q '^0 change(s)' "$T/rerun.out"
    else
        fail "$codename: second run failed: $(tail -n3 "$T/rerun.out" | tr '\n' ' ')"
    fi

    # --dry-run writes nothing: neither the input nor --out.
    sha_before=$(sha256sum "$T/$codename.img" | cut -d' ' -f1)
    if flash --image "$T/$codename.img" --out "$T/dry.img" --board waveshare-l76x --hostname dry --dry-run >"$T/dry.out" 2>&1; then
        check "$codename: --dry-run leaves the image as it was and writes no --out" bash -c "
            test \"\$(sha256sum '$T/$codename.img' | cut -d' ' -f1)\" = '$sha_before' && test ! -e '$T/dry.img'"
        check "$codename: --dry-run prints the changes it would make" bash -c "
            grep -q '^would change boot:/config.txt' '$T/dry.out' && grep -q '^    +enable_uart=1' '$T/dry.out' &&
            grep -q '^would change boot:/cmdline.txt' '$T/dry.out' && grep -q '^would create root:/var/lib/tern-flash/tern.deb' '$T/dry.out'"
    else
        fail "$codename: --dry-run failed: $(tail -n3 "$T/dry.out" | tr '\n' ' ')"
    fi
done

# ---------------------------------------------------------------- --pi5
cp --sparse=always "$T/bookworm.img" "$T/pi5.img"
if flash --image "$T/pi5.img" --out "$T/pi5.img" --board uputronics-ublox-m8 --hostname pi5-tracker --pi5 >"$T/pi5.out" 2>&1; then
    boot_cat "$T/pi5.img" config.txt >"$T/pi5-config.txt"
    check "--pi5: config.txt has dtparam=uart0=on once (and enable_uart=1)" bash -c "
        test \"\$(grep -cxF dtparam=uart0=on '$T/pi5-config.txt')\" = 1 && grep -qxF enable_uart=1 '$T/pi5-config.txt'"
    read_back "$T/pi5.img" "$T/pi5-read"
    check "--pi5: receiver.device is /dev/ttyAMA0" \
        grep -q '^device = "/dev/ttyAMA0"' "$T/pi5-read/root/var/lib/tern-flash/tern.toml"
    if [ "$TERN_OK" = 1 ]; then check "--pi5: tern.toml passes tern config check" tern_check "$T/pi5-read/root/var/lib/tern-flash/tern.toml"; fi
    check "--board uputronics-ublox-m8: chrony numbers its timepulse (refclock PPS /dev/pps0 lock GPS), pps-gpio on GPIO18" bash -c "
        grep -qx 'refclock PPS /dev/pps0 refid PPS lock GPS' '$T/pi5-read/root/etc/chrony/conf.d/tern.conf' &&
        grep -qxF dtoverlay=pps-gpio,gpiopin=18 '$T/pi5-config.txt'"
else
    fail "--pi5: flash-image.sh failed: $(tail -n3 "$T/pi5.out" | tr '\n' ' ')"
fi

# ---------------------------------------------------------------- every board profile
for profile in "$REPO"/board/*.toml; do
    board=$(basename "$profile" .toml)
    img=$T/board.img
    cp --sparse=always "$T/bookworm.img" "$img"
    if ! flash --image "$img" --out "$img" --board "$board" --hostname "b-$board" >"$T/board.out" 2>&1; then
        fail "--board $board: flash-image.sh failed: $(tail -n3 "$T/board.out" | tr '\n' ' ')"
        continue
    fi
    read_back "$img" "$T/board-read"
    toml=$T/board-read/root/var/lib/tern-flash/tern.toml
    if [ "$TERN_OK" = 1 ]; then
        check "--board $board: accepted; tern.toml passes tern config check" tern_check "$toml"
        # Flashed without --config, a profile's placeholder server (tracker.example.com) is named.
        if grep -q 'tracker\.example\.com' "$profile"; then
            check "--board $board: without --config, it warns that tern will not start until configured" \
                grep -q 'not configured for a tracker yet' "$T/board.out"
        fi
    else
        check "--board $board: accepted; tern.toml staged" test -s "$toml"
    fi
    if grep -q '^kind = "simulated"' "$profile"; then
        check "--board $board: no chrony refclock (the simulated receiver keeps no real time)" \
            test ! -e "$T/board-read/root/etc/chrony/conf.d/tern.conf"
    fi
    if grep -q '^# config.txt: enable_uart=1' "$profile" || [ "$board" = raspberry-pi-gps-hat ]; then
        check "--board $board: config.txt has enable_uart=1 once" test "$(count_line "$T/board-read/boot/config.txt" enable_uart=1)" = 1
    fi
done
B=$T/board-read
if [ -f "$REPO/board/usb-receiver.toml" ]; then
    cp --sparse=always "$T/bookworm.img" "$T/usb.img"
    if flash --image "$T/usb.img" --out "$T/usb.img" --board usb-receiver --hostname usb >"$T/usb.out" 2>&1; then
        read_back "$T/usb.img" "$B"
        check "--board usb-receiver: DeviceAllow drop-in installed" \
            cmp "$REPO/deploy/usb-receiver.conf" "$B/root/etc/systemd/system/tern.service.d/usb-receiver.conf"
        check "--board usb-receiver: no UART lines in config.txt, serial console kept" bash -c "
            ! grep -qxF enable_uart=1 '$B/boot/config.txt' && grep -q '^console=serial0,115200 ' '$B/boot/cmdline.txt'"
    else
        fail "--board usb-receiver: flash-image.sh failed: $(tail -n3 "$T/usb.out" | tr '\n' ' ')"
    fi
fi

# ---------------------------------------------------------------- errors name the cause
status=0
"$FLASH" --image "$T/bookworm.img" --out "$T/x.img" --board no-such-board >"$T/err.out" 2>&1 || status=$?
check "an unknown --board exits 64 and lists the profiles" bash -c "test $status = 64 && grep -q 'adafruit-ultimate-gps' '$T/err.out'"
status=0
"$FLASH" --image "$T/bookworm.img" --out "$T/x.img" --board load-switch --wifi-ssid x >"$T/err.out" 2>&1 || status=$?
check "--wifi-ssid alone exits 64 naming the missing options" bash -c "test $status = 64 && grep -q 'wifi-psk' '$T/err.out'"
status=0
"$FLASH" --image "$T/bookworm.img" --out "$T/x.img" --board load-switch --deb "$T/tern_0.0.0_arm64.deb" >"$T/err.out" 2>&1 || status=$?
check "--deb for an image without apt sources exits 65 naming --no-offline-packages" bash -c "test $status = 65 && grep -q 'no-offline-packages' '$T/err.out'"
printf 'not a certificate\n' >"$T/ca.txt"
status=0
"$FLASH" --image "$T/bookworm.img" --out "$T/x.img" --board load-switch --ca-file "$T/ca.txt" >"$T/err.out" 2>&1 || status=$?
check "--ca-file without a PEM certificate exits 64" bash -c "test $status = 64 && grep -q 'no PEM certificate' '$T/err.out'"
sed -i 's/^Architecture: arm64/Architecture: armhf/' "$T/deb/DEBIAN/control"
dpkg-deb --root-owner-group -Zxz --build "$T/deb" "$T/tern_0.0.0_armhf.deb" >/dev/null
status=0
"$FLASH" --image "$T/bookworm.img" --out "$T/x.img" --board load-switch --deb "$T/tern_0.0.0_armhf.deb" >"$T/err.out" 2>&1 || status=$?
check "a 32-bit (armhf) package exits 64 asking for the 64-bit OS" bash -c "test $status = 64 && grep -q '64-bit Raspberry Pi OS' '$T/err.out'"
status=0
"$FLASH" --image "$T/trixie.img" --out "$T/nowifi.img" --board load-switch --hostname van-2 --ssh-key "$T/key.pub" \
    >"$T/nowifi.out" 2>&1 || status=$?
check "trixie without Wi-Fi: exits 0 with user-data and meta-data, no network-config" bash -c "
    test $status = 0 && grep -q 'boot:/meta-data' '$T/nowifi.out' && ! grep -q 'boot:/network-config' '$T/nowifi.out' || { tail -3 '$T/nowifi.out'; false; }"
# ---------------------------------------------------------------- a private CA for the server
if command -v openssl >/dev/null; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/ca.key" -out "$T/ca.pem" \
        -days 2 -subj "/CN=flash-test CA" 2>/dev/null
    sed -e 's|^url = .*|url = "https://gps.flash-test.net/positions"|' \
        -e 's|^\[uplink\]|[uplink]\nca_file = "/etc/tern/uplink-ca.pem"|' "$REPO/board/load-switch.toml" >"$T/ca-tern.toml"
    check "--ca-file: flash-image.sh exits 0, the config checked against the local CA" \
        flash --image "$T/trixie.img" --out "$T/ca.img" --board load-switch --config "$T/ca-tern.toml" --ca-file "$T/ca.pem"
    if [ -f "$T/ca.img" ]; then
        read_back "$T/ca.img" "$T/ca-read"
        check "--ca-file: installed as /etc/tern/uplink-ca.pem (0644), tern.toml names it" bash -c "
            cmp '$T/ca.pem' '$T/ca-read/root/etc/tern/uplink-ca.pem' && test \"\$(stat -c %a '$T/ca-read/root/etc/tern/uplink-ca.pem')\" = 644 &&
            grep -qxF 'ca_file = \"/etc/tern/uplink-ca.pem\"' '$T/ca-read/root/var/lib/tern-flash/tern.toml'"
    fi
    sed -i 's|^ca_file = .*|ca_file = "/etc/ssl/other.pem"|' "$T/ca-tern.toml"
    status=0
    "$FLASH" --image "$T/trixie.img" --out "$T/x.img" --board load-switch --config "$T/ca-tern.toml" --ca-file "$T/ca.pem" \
        --no-offline-packages >"$T/err.out" 2>&1 || status=$?
    check "--ca-file with another uplink.ca_file path exits non-zero naming /etc/tern/uplink-ca.pem" bash -c "test $status != 0 && grep -q '/etc/tern/uplink-ca.pem' '$T/err.out'"
else
    skip "--ca-file checks (no openssl to make a CA)"
fi
check "no loop device or partition is left attached" bash -c "! losetup -j '$T/bookworm.img' | grep -q . && ! losetup -j '$T/usb.img' | grep -q ."

echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" = 0 ]
