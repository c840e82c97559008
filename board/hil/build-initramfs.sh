#!/usr/bin/env bash
# Builds the guest's tiny initramfs: static busybox, virtio/9p/configfs modules and gpio-sim.ko.
# Its init mounts the host's / read-only over 9p, $HIL_RW writable, runs the `hilcmd=` script in a
# chroot and powers off, printing HIL_EXIT=<code>. Called by setup.sh.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=common.sh
source "$HERE/common.sh"
OUT=${OUT:-$INITRD}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
mkdir -p $W/{bin,dev,proc,sys,newroot,lib/modules}
cp /bin/busybox $W/bin/busybox
MODS="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p configfs"
# Modules that are built in (or absent) on this kernel version are skipped; compressed ones
# (.ko.xz/.ko.zst on newer kernels) are unpacked, as busybox insmod loads plain .ko only.
: > "$W/lib/modules/order"
for m in $MODS; do
    f=$(modinfo -k "$KVER" -n "$m" 2>/dev/null) || continue
    case "$f" in
        *.ko) cp "$f" "$W/lib/modules/$m.ko" ;;
        *.ko.xz) xz -dc "$f" > "$W/lib/modules/$m.ko" ;;
        *.ko.zst) zstd -qdc "$f" > "$W/lib/modules/$m.ko" ;;
        *) continue ;;
    esac
    echo "$m" >> "$W/lib/modules/order"
done
cp "$GPIOSIM_KO" "$W/lib/modules/gpio-sim.ko"
echo gpio-sim >> "$W/lib/modules/order"
cat > $W/init <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
for m in $(cat /lib/modules/order); do insmod /lib/modules/$m.ko || echo "HIL: insmod $m failed"; done
CMDLINE=$(cat /proc/cmdline)
arg() { for w in $CMDLINE; do case $w in $1=*) echo "${w#*=}";; esac; done; }
RW=$(arg hilrw); CMD=$(arg hilcmd)
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 root /newroot || { echo "HIL: 9p root mount failed"; poweroff -f; }
mount -t tmpfs tmpfs /newroot/tmp; mount -t tmpfs tmpfs /newroot/run; mount -t tmpfs tmpfs /newroot/var/tmp
if [ -n "$RW" ]; then mkdir -p /newroot$RW; mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rw /newroot$RW; fi
for d in dev proc sys; do mount --move /$d /newroot/$d || echo "HIL: move $d failed"; done
mkdir -p /newroot/dev/pts; mount -t devpts devpts /newroot/dev/pts
mount -t configfs none /newroot/sys/kernel/config
echo "HIL: ready uptime=$(cut -d' ' -f1 /newroot/proc/uptime)"
chroot /newroot /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/tmp TERM=dumb /bin/sh -c "$CMD"
echo "HIL_EXIT=$? uptime=$(cut -d' ' -f1 /newroot/proc/uptime)"
sync; poweroff -f
INIT
chmod +x $W/init
(cd $W && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT"
ls -la "$OUT"
