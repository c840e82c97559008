#!/usr/bin/env bash
# Boots the HIL guest under QEMU (TCG), shares the host / read-only over 9p and $HIL_DIR writable,
# runs one guest script, powers off and exits with that script's exit code.
# usage: run-vm.sh /abs/path/guest-script [extra qemu args...]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=common.sh
source "$HERE/common.sh"
CMD=$1; shift
for f in "$KERNEL" "$INITRD"; do
    [ -f "$f" ] || { echo "run-vm: $f missing: run board/hil/setup.sh first" >&2; exit 2; }
done
LOG=$(mktemp -p "$HIL_DIR" serial0.XXXXXX.log); trap 'rm -f "$LOG"' EXIT
# /dev/kvm on the cloud dev machines cannot run a stock kernel: TCG by default (boot ~3 s).
timeout "${HIL_TIMEOUT:-300}" qemu-system-x86_64 -accel "${ACCEL:-tcg}" -M q35 -smp 1 -m "${MEM:-256M}" \
    -nodefaults -no-user-config -display none -no-reboot \
    -chardev file,id=con,path="$LOG" -serial chardev:con \
    -kernel "$KERNEL" -initrd "$INITRD" \
    -append "console=ttyS0 quiet panic=-1 hilcmd=$CMD hilrw=$HIL_DIR" \
    -virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$HIL_DIR",mount_tag=rw,security_model=none,multidevs=remap \
    "$@" || echo "run-vm: qemu exited with $?" >&2
tr -d '\r' < "$LOG" | grep -v '^$' | grep -v 'HIL mounts' || true
rc=$(tr -d '\r' < "$LOG" | sed -n 's/^HIL_EXIT=\([0-9]*\).*/\1/p' | tail -1)
exit "${rc:-99}"
