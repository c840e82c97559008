#!/usr/bin/env bash
# Powers on the emulated Raspberry Pi 3 B (QEMU raspi3b, TCG) with CARD in its slot, booting what the
# card's bootfs holds the way the firmware would (board/hil/pi/firmware.sh), and, with the network
# up, waits until the user can log in over SSH. QEMU keeps running in the background; its PID is in
# WORK/qemu.pid. The card is the Pi's own: written by the guest, kept across power cuts.
#
#   board/hil/pi/boot.sh CARD KEY WORK UART0 SSH_PORT
#     KEY          the private key of the user flash-image.sh gave --ssh-key (PI_USER, default pi)
#     UART0        a path for the PL011's host end (-chardev serial,path=UART0: a pty another process
#                  made, e.g. board/hil/uart-bridge.py): the board's /dev/ttyAMA0 = /dev/serial0;
#                  "-" for none (boot-trials.sh)
#     SSH_PORT     127.0.0.1:SSH_PORT reaches the guest's port 22
#   PI_LINK=off    power on with the Ethernet link down (QEMU's set_link before the first instruction):
#                  no network at all, not even SSH; boot.sh returns once QEMU runs, and
#                  `board/hil/pi/monitor.sh WORK set_link net0 on` brings the link up later
# The guest's network is QEMU's user-mode stack on a USB Ethernet adapter: its connections become the
# QEMU process's own (10.0.2.2 = this machine's loopback); nothing listens on the guest from outside
# but SSH on 127.0.0.1. WORK/console.log is the serial console: the mini UART (ttyS1), the one thing
# the rig adds to cmdline.txt (a Pi's console is its screen, tty1). WORK/monitor.sock is QEMU's
# monitor for board/hil/pi/gpio-wire.py (which reads the GPIO levels there), WORK/control.sock a
# second one for the rig (set_link).
#
# The adapter hangs off the emulated DWC2 USB controller, whose enumeration depends on timing: on a
# loaded machine the guest may come up with the port never connected ("dwc2 ...: Not connected" on
# the console) and no network at all. So, with the link up, an attempt that has not reached SSH
# within $PI_BOOT_ATTEMPT_TIMEOUT s (default 420) is powered off and on again, up to
# $PI_BOOT_ATTEMPTS times (default 3). Each attempt's console is kept as WORK/console-N.log;
# WORK/boot.log says how each went. Exit: 0 up, 1 no attempt came up (the last console's tail).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CARD=$1 KEY=$2 WORK=$3 UART0=$4 PORT=$5
ATTEMPTS=${PI_BOOT_ATTEMPTS:-3}
ATTEMPT_TIMEOUT=${PI_BOOT_ATTEMPT_TIMEOUT:-420}
LINK=${PI_LINK:-on}
USER_NAME=${PI_USER:-pi}
mkdir -p "$WORK"
say() { echo "pi: $*" | tee -a "$WORK/boot.log" >&2; }
[ -f "$CARD" ] || { echo "boot.sh: no card $CARD" >&2; exit 1; }
"$HERE/firmware.sh" "$CARD" "$WORK/firmware" > "$WORK/firmware.log" || { cat "$WORK/firmware.log" >&2; exit 1; }
grep -q 'applied dtoverlay=disable-bt' "$WORK/firmware.log" ||
    say "note: config.txt has no dtoverlay=disable-bt: the PL011 stays Bluetooth's, /dev/serial0 the mini UART"
stop_qemu() {
    [ -f "$WORK/qemu.pid" ] || return 0
    local pid
    pid=$(cat "$WORK/qemu.pid")
    kill -9 "$pid" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    rm -f "$WORK/qemu.pid"
}
SSH=(ssh -q -i "$KEY" -p "$PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
     -o ConnectTimeout=10 -o BatchMode=yes "$USER_NAME@127.0.0.1")

initrd=()
[ -f "$WORK/firmware/initrd" ] && initrd=(-initrd "$WORK/firmware/initrd")
uart0=(-chardev "serial,id=uart0,path=$UART0")
[ "$UART0" != - ] || uart0=(-chardev "null,id=uart0")

power_on() {
    rm -f "$WORK/monitor.sock" "$WORK/control.sock" "$WORK/console.log"
    # raspi3b: 4 Cortex-A53, 1 GiB, the BCM2837's peripherals (PL011, mini UART, GPIO, SDHOST, DWC2
    # USB). -S: stopped until the rig has set the link, then `cont`.
    qemu-system-aarch64 -M raspi3b -m 1G -display none -no-reboot -S \
        -kernel "$WORK/firmware/kernel" ${initrd[@]+"${initrd[@]}"} \
        -dtb "$WORK/firmware/dtb" -append "$(cat "$WORK/firmware/cmdline") console=ttyS1,115200" \
        -drive if=sd,format=raw,file="$CARD" \
        "${uart0[@]}" -serial chardev:uart0 \
        -chardev file,id=con,path="$WORK/console.log" -serial chardev:con \
        -netdev user,id=net0,hostfwd=tcp:127.0.0.1:"$PORT"-:22 -device usb-net,netdev=net0 \
        -monitor unix:"$WORK/monitor.sock",server=on,wait=off \
        -monitor unix:"$WORK/control.sock",server=on,wait=off \
        -pidfile "$WORK/qemu.pid" -daemonize
    [ "$LINK" = on ] || "$HERE/monitor.sh" "$WORK" "set_link net0 off" > /dev/null
    "$HERE/monitor.sh" "$WORK" cont > /dev/null
}

if [ "$LINK" != on ]; then
    power_on
    say "powered on with the link down (no network); console: $WORK/console.log"
    exit 0
fi
for attempt in $(seq "$ATTEMPTS"); do
    power_on
    start=$SECONDS login_at=""
    while [ $((SECONDS - start)) -lt "$ATTEMPT_TIMEOUT" ]; do
        if "${SSH[@]}" true 2> /dev/null; then
            cp "$WORK/console.log" "$WORK/console-$attempt.log"
            say "up after $((SECONDS - start)) s, attempt $attempt of $ATTEMPTS ($("${SSH[@]}" uname -srm))"
            exit 0
        fi
        kill -0 "$(cat "$WORK/qemu.pid")" 2> /dev/null || { say "attempt $attempt: QEMU exited"; break; }
        if [ -z "$login_at" ] && grep -q 'login:' "$WORK/console.log" 2> /dev/null; then login_at=$SECONDS; fi
        if [ -n "$login_at" ] && [ $((SECONDS - login_at)) -ge 120 ]; then
            say "attempt $attempt: at the login prompt for 120 s without SSH ($(grep -c 'Not connected' "$WORK/console.log" || true) 'Not connected' lines from the USB controller)"
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
