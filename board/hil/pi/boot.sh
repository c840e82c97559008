#!/usr/bin/env bash
# Boots the emulated Raspberry Pi 3 B (QEMU raspi3b, TCG) from the image board/hil/pi/image.sh made,
# on a copy-on-write overlay (the cached image is never written), and waits until root can log in
# over SSH. QEMU keeps running in the background; its PID is in WORK/qemu.pid.
#
#   board/hil/pi/boot.sh IMAGE_DIR WORK UART0 SSH_PORT
#     UART0     a path for the PL011's host end (-chardev serial,path=UART0: a pty another process made,
#               e.g. board/hil/uart-bridge.py): the board's /dev/ttyAMA0 = /dev/serial0
#     SSH_PORT  127.0.0.1:SSH_PORT reaches the guest's port 22
# The guest's network is QEMU's user-mode stack on a USB Ethernet adapter: its connections become the
# QEMU process's own (10.0.2.2 = this machine's loopback); nothing listens on the guest from outside
# but SSH on 127.0.0.1. WORK/console.log is the serial console (the mini UART, ttyS1);
# WORK/monitor.sock is QEMU's monitor (board/hil/pi/gpio-wire.py reads the GPIO levels there).
# Exit: 0 up, 1 it did not come up within $PI_BOOT_TIMEOUT s (default 600; the console's tail is printed).
set -euo pipefail
IMAGE=$1 WORK=$2 UART0=$3 PORT=$4
mkdir -p "$WORK"
rm -f "$WORK/overlay.qcow2" "$WORK/monitor.sock"
qemu-img create -q -f qcow2 -F raw -b "$IMAGE/rootfs.img" "$WORK/overlay.qcow2"
# raspi3b: 4 Cortex-A53, 1 GiB, the BCM2837's peripherals (PL011, mini UART, GPIO, SDHOST, DWC2 USB).
qemu-system-aarch64 -M raspi3b -m 1G -display none -no-reboot \
    -kernel "$IMAGE/vmlinuz" -initrd "$IMAGE/initrd.img" -dtb "$IMAGE/rpi3b.dtb" \
    -append "root=/dev/mmcblk0 rootwait rw console=ttyS1,115200 quiet systemd.show_status=1 net.ifnames=0" \
    -drive if=sd,format=qcow2,file="$WORK/overlay.qcow2" \
    -chardev serial,id=uart0,path="$UART0" -serial chardev:uart0 \
    -chardev file,id=con,path="$WORK/console.log" -serial chardev:con \
    -netdev user,id=net0,hostfwd=tcp:127.0.0.1:"$PORT"-:22 -device usb-net,netdev=net0 \
    -monitor unix:"$WORK/monitor.sock",server=on,wait=off \
    -pidfile "$WORK/qemu.pid" -daemonize
SSH=(ssh -q -i "$IMAGE/id_ed25519" -p "$PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
     -o ConnectTimeout=10 -o BatchMode=yes root@127.0.0.1)
start=$SECONDS
while [ $((SECONDS - start)) -lt "${PI_BOOT_TIMEOUT:-600}" ]; do
    if "${SSH[@]}" true 2> /dev/null; then
        echo "pi: up after $((SECONDS - start)) s ($("${SSH[@]}" uname -srm))" >&2
        exit 0
    fi
    kill -0 "$(cat "$WORK/qemu.pid")" 2> /dev/null || { echo "pi: QEMU exited" >&2; tail -30 "$WORK/console.log" >&2; exit 1; }
    sleep 3
done
echo "pi: no SSH after ${PI_BOOT_TIMEOUT:-600} s" >&2
tail -30 "$WORK/console.log" | tr -d '\r' >&2
exit 1
