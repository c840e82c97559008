#!/usr/bin/env bash
# One-time setup of the GPIO HIL rig on a Debian x86_64 host (root): QEMU, a Debian guest kernel,
# gpio-sim built out of tree (Debian's kernels do not enable it) and a small initramfs.
# Idempotent; ~2 min the first time. Work dir: $HIL_DIR (default /tmp/tern-hil).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends)

apt-get update -qq
"${APT[@]}" qemu-system-x86 linux-image-amd64 busybox-static gpiod libgpiod-dev cpio bc \
    python3 make gcc kmod xz-utils zstd >/dev/null
# shellcheck source=common.sh
source "$HERE/common.sh"
[ -n "$KVER" ] || { echo "setup: cannot tell the guest kernel version: set KVER" >&2; exit 1; }
SRC_PKG="linux-source-$(echo "$KVER" | cut -d. -f1-2)"
"${APT[@]}" "linux-headers-$KVER" "linux-image-$KVER" >/dev/null
mkdir -p "$HIL_DIR"
echo "$KVER" > "$HIL_DIR/kver"

# gpio-sim out of tree, with kernel/irq/irq_sim.c linked in (CONFIG_IRQ_SIM is off as well).
if [ ! -f "$GPIOSIM_KO" ]; then
    SRC="$HIL_DIR/src/$SRC_PKG"
    if [ ! -f "$SRC/drivers/gpio/gpio-sim.c" ]; then
        mkdir -p "$HIL_DIR/src"
        (cd "$HIL_DIR/src" && apt-get download "$SRC_PKG" >/dev/null \
            && dpkg-deb --fsys-tarfile "$SRC_PKG"_*.deb | tar -xO "./usr/src/$SRC_PKG.tar.xz" \
            | tar -xJ "$SRC_PKG/drivers/gpio/gpio-sim.c" "$SRC_PKG/drivers/gpio/gpiolib.h" \
                "$SRC_PKG/kernel/irq/irq_sim.c" \
            && rm -f "$SRC_PKG"_*.deb)
    fi
    MOD=$(dirname "$GPIOSIM_KO"); mkdir -p "$MOD"
    cp "$SRC/drivers/gpio/gpio-sim.c" "$MOD/gpio-sim-core.c"
    cp "$SRC/drivers/gpio/gpiolib.h" "$SRC/kernel/irq/irq_sim.c" "$MOD/"
    # irq_to_desc is not exported to modules.
    sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$MOD/irq_sim.c"
    printf 'obj-m := gpio-sim.o\ngpio-sim-objs := gpio-sim-core.o irq_sim.o\n' > "$MOD/Kbuild"
    make -s -C "/lib/modules/$KVER/build" M="$MOD" modules
fi
# The uncompressed vmlinux boots a few seconds faster under TCG than the bzImage.
[ -f "$KERNEL" ] || python3 "$HERE/extract-vmlinux.py" "/boot/vmlinuz-$KVER" "$KERNEL"
KVER=$KVER "$HERE/build-initramfs.sh"
echo "setup done: kernel $KVER in $HIL_DIR"
