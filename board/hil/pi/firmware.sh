#!/usr/bin/env bash
# What a Raspberry Pi 3 B's firmware does before the kernel runs, done from the card's bootfs for
# QEMU (which has no VideoCore firmware): reads config.txt ([all] and [pi3] sections, and lines
# before any section), loads the kernel (kernel=, else kernel8.img with arm_64bit=1), the
# initramfs (auto_initramfs=1: initramfs8 beside kernel8.img; or initramfs FILE), the device tree
# (device_tree=, else bcm2710-rpi-3-b.dtb), applies each dtoverlay= from overlays/NAME.dtbo with
# fdtoverlay, and reads cmdline.txt.
#
#   board/hil/pi/firmware.sh CARD OUT_DIR
#     writes OUT_DIR/{kernel,initrd,dtb,cmdline} and prints one line per config.txt line it applied
#     or left (an overlay not on the bootfs is left, as the firmware does: it logs and goes on).
# QEMU reads no dtparam= and no display or clock setting: those lines are listed as left.
set -euo pipefail
CARD=$1 OUT=$2
export MTOOLS_SKIP_CHECK=1
mkdir -p "$OUT"
start=$(sfdisk -d "$CARD" | awk -F'[=,]' '/^[^ ]*1 :/ { for (i = 1; i <= NF; i++) if ($i ~ /start/) { gsub(/ /, "", $(i+1)); print $(i+1) } }')
[ -n "$start" ] || { echo "firmware.sh: $CARD has no first partition (the bootfs)" >&2; exit 1; }
FAT="$CARD@@$((start * 512))"
get() { mcopy -n -i "$FAT" "::/$1" "$2" 2> /dev/null; }
get config.txt "$OUT/config.txt" || { echo "firmware.sh: the bootfs has no config.txt" >&2; exit 1; }
get cmdline.txt "$OUT/cmdline.txt" || { echo "firmware.sh: the bootfs has no cmdline.txt" >&2; exit 1; }
kernel="" initramfs="" auto_initramfs=0 arm64=0 device_tree=bcm2710-rpi-3-b.dtb overlays=() applies=1
while IFS= read -r raw || [ -n "$raw" ]; do
    line=${raw%%#*}; line=${line//$'\r'/}
    line=$(echo "$line" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
    [ -n "$line" ] || continue
    if [[ $line =~ ^\[(.*)\]$ ]]; then
        case ${BASH_REMATCH[1],,} in all|pi3|none) applies=1 ;; *) applies=0 ;; esac
        [ "${BASH_REMATCH[1],,}" = none ] && applies=0
        continue
    fi
    [ "$applies" = 1 ] || { echo "firmware: left    $line (another model's section)"; continue; }
    case $line in
        kernel=*) kernel=${line#kernel=}; echo "firmware: applied $line" ;;
        arm_64bit=1) arm64=1; echo "firmware: applied $line" ;;
        auto_initramfs=1) auto_initramfs=1; echo "firmware: applied $line" ;;
        initramfs\ *) initramfs=$(echo "${line#initramfs }" | awk '{ print $1 }'); echo "firmware: applied $line" ;;
        device_tree=*) device_tree=${line#device_tree=}; echo "firmware: applied $line" ;;
        dtoverlay=*) overlays+=("${line#dtoverlay=}") ;;
        *) echo "firmware: left    $line (QEMU models no such setting)" ;;
    esac
done < "$OUT/config.txt"
[ -n "$kernel" ] || { [ "$arm64" = 1 ] && kernel=kernel8.img; } || kernel=kernel7.img
get "$kernel" "$OUT/kernel" || { echo "firmware.sh: the bootfs has no $kernel" >&2; exit 1; }
rm -f "$OUT/initrd"
if [ -n "$initramfs" ]; then
    get "$initramfs" "$OUT/initrd" || { echo "firmware.sh: config.txt names initramfs $initramfs, not on the bootfs" >&2; exit 1; }
elif [ "$auto_initramfs" = 1 ]; then
    name=${kernel%.img}   # kernel8.img -> initramfs8, as the firmware names it
    get "initramfs${name#kernel}" "$OUT/initrd" || true
fi
get "$device_tree" "$OUT/dtb" || { echo "firmware.sh: the bootfs has no $device_tree" >&2; exit 1; }
for overlay in ${overlays[@]+"${overlays[@]}"}; do
    name=${overlay%%,*}
    if [ "$name" != "$overlay" ]; then echo "firmware: left    dtoverlay=$overlay (overlay parameters are not applied here)"; continue; fi
    if ! get "overlays/$name.dtbo" "$OUT/$name.dtbo"; then
        echo "firmware: left    dtoverlay=$name (overlays/$name.dtbo is not on the bootfs)"; continue
    fi
    fdtoverlay -i "$OUT/dtb" -o "$OUT/dtb.new" "$OUT/$name.dtbo" || { echo "firmware.sh: dtoverlay=$name does not apply to $device_tree" >&2; exit 1; }
    mv "$OUT/dtb.new" "$OUT/dtb"
    echo "firmware: applied dtoverlay=$name"
done
tr -d '\r\n' < "$OUT/cmdline.txt" > "$OUT/cmdline"
echo "firmware: kernel $kernel, initramfs $([ -f "$OUT/initrd" ] && echo yes || echo none), device tree $device_tree, cmdline: $(cat "$OUT/cmdline")"
