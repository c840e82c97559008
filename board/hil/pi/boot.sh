#!/usr/bin/env bash
# Boots the emulated Raspberry Pi 3 B (QEMU raspi3b, TCG) from the image board/hil/pi/image.sh made,
# on a card of its own (a sparse copy: the cached image is never written), and waits until root can
# log in over SSH. QEMU keeps running in the background; its PID is in WORK/qemu.pid.
#
#   board/hil/pi/boot.sh IMAGE_DIR WORK UART0 SSH_PORT [LOCAL:GUEST ...]
#     UART0        a path for the PL011's host end (-chardev serial,path=UART0: a pty another process
#                  made, e.g. board/hil/uart-bridge.py): the board's /dev/ttyAMA0 = /dev/serial0;
#                  "-" for none (boot-trials.sh)
#     SSH_PORT     127.0.0.1:SSH_PORT reaches the guest's port 22
#     LOCAL:GUEST  a file written into the card before it boots (GUEST: an absolute path whose
#                  directory exists in the image, e.g. /root/guest.tar), as one copies files onto
#                  an SD card: the network then carries only what the test is about
# The guest's network is QEMU's user-mode stack on a USB Ethernet adapter: its connections become the
# QEMU process's own (10.0.2.2 = this machine's loopback); nothing listens on the guest from outside
# but SSH on 127.0.0.1. WORK/console.log is the serial console (the mini UART, ttyS1);
# WORK/monitor.sock is QEMU's monitor (board/hil/pi/gpio-wire.py reads the GPIO levels there).
#
# The adapter hangs off the emulated DWC2 USB controller, whose enumeration depends on timing: on a
# loaded machine the guest may come up with the port never connected ("dwc2 ...: Not connected" on
# the console) and no network at all. So an attempt that has not reached SSH within
# $PI_BOOT_ATTEMPT_TIMEOUT s (default 300; an idle boot takes ~120 s, a loaded one ~150 s) is
# stopped and the Pi booted again from a fresh card, up to $PI_BOOT_ATTEMPTS times (default 3); an
# attempt whose console has reached its login prompt without the network is given 90 s more, then
# stopped. Each attempt's console is kept as WORK/console-N.log; WORK/boot.log says how each went.
# Exit: 0 up, 1 no attempt came up (the last console's tail is printed).
set -euo pipefail
IMAGE=$1 WORK=$2 UART0=$3 PORT=$4
shift 4
PUTS=("$@")
ATTEMPTS=${PI_BOOT_ATTEMPTS:-3}
ATTEMPT_TIMEOUT=${PI_BOOT_ATTEMPT_TIMEOUT:-300}
mkdir -p "$WORK"
say() { echo "pi: $*" | tee -a "$WORK/boot.log" >&2; }

# card: a fresh copy of the image with the PUTS written in (debugfs, on the unmounted file system;
# debugfs exits 0 whatever happened, so each file is looked up afterwards).
card() {
    local put
    rm -f "$WORK/card.img"
    cp --sparse=always "$IMAGE/rootfs.img" "$WORK/card.img"
    for put in ${PUTS[@]+"${PUTS[@]}"}; do
        [ -f "${put%%:*}" ] || { echo "boot.sh: ${put%%:*}: no such file" >&2; return 1; }
        debugfs -w -R "write ${put%%:*} ${put#*:}" "$WORK/card.img" > "$WORK/debugfs.log" 2>&1
        debugfs -R "stat ${put#*:}" "$WORK/card.img" 2>&1 | grep -q "^Inode:" ||
            { echo "boot.sh: could not write ${put#*:} into the card: $(cat "$WORK/debugfs.log")" >&2; return 1; }
    done
}
stop_qemu() {
    [ -f "$WORK/qemu.pid" ] || return 0
    local pid
    pid=$(cat "$WORK/qemu.pid")
    kill "$pid" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null || true
    rm -f "$WORK/qemu.pid"
}
SSH=(ssh -q -i "$IMAGE/id_ed25519" -p "$PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
     -o ConnectTimeout=10 -o BatchMode=yes root@127.0.0.1)

uart0=(-chardev "serial,id=uart0,path=$UART0")
[ "$UART0" != - ] || uart0=(-chardev "null,id=uart0")

for attempt in $(seq "$ATTEMPTS"); do
    rm -f "$WORK/monitor.sock" "$WORK/console.log"
    card || exit 1
    # raspi3b: 4 Cortex-A53, 1 GiB, the BCM2837's peripherals (PL011, mini UART, GPIO, SDHOST, DWC2 USB).
    qemu-system-aarch64 -M raspi3b -m 1G -display none -no-reboot \
        -kernel "$IMAGE/vmlinuz" -initrd "$IMAGE/initrd.img" -dtb "$IMAGE/rpi3b.dtb" \
        -append "root=/dev/mmcblk0 rootwait rw console=ttyS1,115200 quiet systemd.show_status=1 net.ifnames=0" \
        -drive if=sd,format=raw,file="$WORK/card.img" \
        "${uart0[@]}" -serial chardev:uart0 \
        -chardev file,id=con,path="$WORK/console.log" -serial chardev:con \
        -netdev user,id=net0,hostfwd=tcp:127.0.0.1:"$PORT"-:22 -device usb-net,netdev=net0 \
        -monitor unix:"$WORK/monitor.sock",server=on,wait=off \
        -pidfile "$WORK/qemu.pid" -daemonize
    start=$SECONDS login_at=""
    while [ $((SECONDS - start)) -lt "$ATTEMPT_TIMEOUT" ]; do
        if "${SSH[@]}" true 2> /dev/null; then
            cp "$WORK/console.log" "$WORK/console-$attempt.log"
            say "up after $((SECONDS - start)) s, attempt $attempt of $ATTEMPTS ($("${SSH[@]}" uname -srm))"
            exit 0
        fi
        kill -0 "$(cat "$WORK/qemu.pid")" 2> /dev/null || { say "attempt $attempt: QEMU exited"; break; }
        if [ -z "$login_at" ] && grep -q 'login:' "$WORK/console.log" 2> /dev/null; then login_at=$SECONDS; fi
        if [ -n "$login_at" ] && [ $((SECONDS - login_at)) -ge 90 ]; then
            say "attempt $attempt: at the login prompt for 90 s without SSH ($(grep -c 'Not connected' "$WORK/console.log" || true) 'Not connected' lines from the USB controller)"
            break
        fi
        sleep 3
    done
    [ $((SECONDS - start)) -lt "$ATTEMPT_TIMEOUT" ] || say "attempt $attempt: no SSH after $ATTEMPT_TIMEOUT s"
    stop_qemu
    cp "$WORK/console.log" "$WORK/console-$attempt.log" 2> /dev/null || true
done
say "no SSH in $ATTEMPTS attempts; the last console:"
tail -30 "$WORK/console.log" | tr -d '\r' >&2
exit 1
