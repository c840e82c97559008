#!/usr/bin/env bash
# Boots the emulated Raspberry Pi N times in a row, each to SSH, as board/hil/pi/boot.sh does for
# the HIL run, and prints one JSON line a boot and a last JSON line with them all: the proof that the
# rig comes up every time, not only on an idle machine.
#
#   board/hil/pi/boot-trials.sh [--boots N] [--load]     (root; N default 10)
#     --load   keep both cores busy meanwhile with a clean `swift build` of this package, again and
#              again (in .build-load/), as a busy CI machine is
# Each line: {"boot": i, "ok": true|false, "seconds": time to SSH, "attempts": QEMU starts it took}.
# Exit: 0 every boot reached SSH, 1 one did not, 2 the rig broke.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
BOOTS=10 LOAD=0
while [ $# -gt 0 ]; do
    case "$1" in
        --boots) BOOTS=$2; shift 2 ;;
        --load) LOAD=1; shift ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "boot-trials.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
IMAGE=$("$HERE/image.sh") || { echo "boot-trials.sh: no image (image.sh failed)" >&2; exit 2; }
[ -f "$IMAGE/card.img" ] || { echo "boot-trials.sh: image.sh answered '$IMAGE', which holds no card.img" >&2; exit 2; }
WORK=${HIL_DIR:-/tmp/tern-hil}/pi-boot-trials
rm -rf "$WORK"; mkdir -p "$WORK"
# A card with a user to log in as (cloud-init, the rig's key), flashed once: every boot after the
# first is a reboot of the same card, as a Pi's.
"$REPO/deploy/flash-image.sh" --image "$IMAGE/card.img" --out "$WORK/card.img" --board load-switch \
    --hostname tern-trials --ssh-key "$IMAGE/id_ed25519.pub" > "$WORK/flash.log" 2>&1 ||
    { tail -5 "$WORK/flash.log" >&2; echo "boot-trials.sh: flash-image.sh failed" >&2; exit 2; }
load_pid=""
cleanup() {
    [ -f "$WORK/qemu.pid" ] && kill "$(cat "$WORK/qemu.pid")" 2> /dev/null
    [ -z "$load_pid" ] || kill -- "-$load_pid" 2> /dev/null
    return 0
}
trap cleanup EXIT
if [ "$LOAD" = 1 ]; then
    # Its own process group, so that cleanup stops SwiftPM and every compiler it started.
    # shellcheck disable=SC2016  # $1 is the inner shell's
    setsid bash -c 'while :; do rm -rf "$1/.build-load"; swift build --package-path "$1" --scratch-path "$1/.build-load" > /dev/null 2>&1; done' \
        _ "$REPO" &
    load_pid=$!
    sleep 20  # let the build get going
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ok=0 lines=()
for i in $(seq "$BOOTS"); do
    : > "$WORK/boot.log"
    start=$SECONDS
    if "$HERE/boot.sh" "$WORK/card.img" "$IMAGE/id_ed25519" "$WORK" - "$port" 2>> "$WORK/trials.log"; then up=true; ok=$((ok + 1)); else up=false; fi
    seconds=$((SECONDS - start))
    attempts=$(grep -c '^pi: attempt\|^pi: up after' "$WORK/boot.log" || true)
    cp "$WORK/boot.log" "$WORK/boot-$i.log"
    [ -f "$WORK/qemu.pid" ] && kill -9 "$(cat "$WORK/qemu.pid")" 2> /dev/null && sleep 2
    rm -f "$WORK/qemu.pid"
    line=$(printf '{"boot": %d, "ok": %s, "seconds": %d, "attempts": %d, "load": %s}' "$i" "$up" "$seconds" "$attempts" \
        "$([ "$LOAD" = 1 ] && echo true || echo false)")
    echo "$line"
    lines+=("$line")
done
printf '{"boots": %d, "reached_ssh": %d, "trials": [%s]}\n' "$BOOTS" "$ok" "$(IFS=,; echo "${lines[*]}")"
[ "$ok" = "$BOOTS" ]
