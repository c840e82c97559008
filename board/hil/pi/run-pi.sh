#!/usr/bin/env bash
# The HIL suite on an emulated Raspberry Pi 3 B: called by `board/hil/run.sh --emulated-pi` (which
# reads the profile), not by hand.
#   run-pi.sh PROFILE_FILE METHOD LINE BAUD MINUTES [DEB] [ONLY]
# On this machine: the receiver (sim-receiver.py) on the far end of the Pi's PL011, paced at BAUD by
# uart-bridge.py, its supply wired to the Pi's GPIO LINE by gpio-wire.py; the server and the cable's
# switch (rig-server.py). In the guest: dpkg -i the arm64 .deb, then `board/hil/run.sh --board PROFILE
# --service`, the path a real Pi runs. Exit: 0 no FAIL, 1 a FAIL, 2 the rig broke (named),
# 77 it cannot run here (no qemu-system-aarch64 or no root).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
PROFILE_FILE=$1 METHOD=$2 LINE=$3 BAUD=$4 MINUTES=$5 DEB=${6:-} ONLY=${7:-}
die() { echo "hil-pi: $*" >&2; exit 2; }
not_run() { echo "hil-pi: NOT RUN: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || not_run "the emulated Pi's image is built as root (mmdebstrap): run as root"
case $METHOD in
    gpio) [ "$LINE" != - ] || die "the profile's power.line must be a BCM number or GPIO<n>" ;;
    *) die "--emulated-pi wires the receiver's supply to a GPIO line: power.method '$METHOD' is for --emulated" ;;
esac
need=()
for tool in qemu-system-aarch64:qemu-system-arm qemu-img:qemu-utils ssh:openssh-client; do
    command -v "${tool%%:*}" > /dev/null || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; } \
        > /dev/null 2>&1 || not_run "${need[*]} missing and could not be installed (apt-get install ${need[*]})"
fi
if [ -z "$DEB" ]; then
    DEB=$(ls -t "$REPO"/dist/tern_*~deb13_arm64.deb 2> /dev/null | head -1 || true)
    [ -n "$DEB" ] || die "no arm64 package in dist/: build it (deploy/build.sh --arch arm64 --release trixie, then deploy/package-deb.sh arm64 ...) or pass --deb"
fi
[ -f "$DEB" ] || die "--deb $DEB: no such file"
IMAGE=$("$HERE/image.sh") || die "the emulated Pi's image could not be built (see above)"
if [ ! -f "$IMAGE/rootfs.img" ] || [ ! -f "$IMAGE/vmlinuz" ]; then
    die "image.sh answered '$IMAGE', which holds no rootfs.img and vmlinuz (a script that printed more than its result?)"
fi
STAGE=${HIL_DIR:-/tmp/tern-hil}/pi-$(basename "$PROFILE_FILE" .toml)
rm -rf "$STAGE"; mkdir -p "$STAGE"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
SSH_PORT=$(free_port) RIG_PORT=$(free_port)
PIDS=()
cleanup() {
    [ -f "$STAGE/qemu.pid" ] && kill "$(cat "$STAGE/qemu.pid")" 2> /dev/null || true
    for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null || true; done
}
trap cleanup EXIT
echo plugged > "$STAGE/cable"
# What a Pi's operator copies onto the card: the package, and the HIL suite with the board profiles.
mkdir -p "$STAGE/guest/board/hil"
cp "$REPO/board/hil/run.sh" "$REPO/board/hil/checks.py" "$STAGE/guest/board/hil/"
cp "$REPO"/board/*.toml "$STAGE/guest/board/"
cp "$PROFILE_FILE" "$STAGE/guest/board/hil-profile.toml"
cp "$DEB" "$STAGE/guest/"
cat > "$STAGE/guest/cable.py" <<PY
import sys, urllib.request
urllib.request.urlopen(urllib.request.Request("http://10.0.2.2:$RIG_PORT/cable", sys.argv[1].encode()), timeout=10)
PY
tar -C "$STAGE/guest" -cf "$STAGE/guest.tar" .
python3 "$REPO/board/hil/uart-bridge.py" --control "$STAGE/cable" --speed-a "$BAUD" "$STAGE/pl011" "$STAGE/receiver" \
    > "$STAGE/bridge.log" 2>&1 &
PIDS+=($!)
python3 "$HERE/rig-server.py" serve --port "$RIG_PORT" --log "$STAGE/uplink.jsonl" --cable "$STAGE/cable" \
    > "$STAGE/rig-server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -e "$STAGE/receiver" ] && break; sleep 0.05; done
[ -e "$STAGE/receiver" ] || die "uart-bridge.py did not start: $(cat "$STAGE/bridge.log")"

echo "hil-pi: booting the emulated Raspberry Pi 3 B (Debian trixie arm64; log $STAGE/console.log)" >&2
START=$SECONDS
"$HERE/boot.sh" "$IMAGE" "$STAGE" "$STAGE/pl011" "$SSH_PORT" "$STAGE/guest.tar:/root/guest.tar" ||
    die "the emulated Pi did not boot (see above)"

python3 "$HERE/gpio-wire.py" --monitor "$STAGE/monitor.sock" --line "$LINE" --out "$STAGE/supply" \
    2> "$STAGE/gpio-wire.log" &
PIDS+=($!)
for _ in $(seq 100); do [ -e "$STAGE/supply" ] && break; sleep 0.05; done
[ -e "$STAGE/supply" ] || die "gpio-wire.py read no level from QEMU's monitor: $(cat "$STAGE/gpio-wire.log")"
# The receiver drives round a block (10 m/s, 150 m radius): the service's filter thins a parked
# receiver's fixes, and a straight drive's, to a few positions; on a curve each fix says something new,
# so the uplink check has a stream to count.
python3 "$REPO/board/hil/sim-receiver.py" --device "$STAGE/receiver" --baud "$BAUD" --power-gpio "$STAGE/supply" \
    --speed 10 --radius 150 --state-log "$STAGE/sim-state.log" 2> "$STAGE/sim.log" &
PIDS+=($!)

SSH=(ssh -q -i "$IMAGE/id_ed25519" -p "$SSH_PORT" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
     -o BatchMode=yes -o ServerAliveInterval=30 root@127.0.0.1)
# The Pi has no real-time clock and the guest no NTP server: it boots at systemd's build date. Its
# clock is set from this machine's, as NTP would on a Pi that is online (the receiver's fixes are
# dated by this machine's clock).
"${SSH[@]}" "date -u -s @$(date +%s) > /dev/null" || die "could not set the guest's clock"
echo "hil-pi: guest clock set after $((SECONDS - START)) s" >&2
"${SSH[@]}" "rm -rf /root/tern-hil && mkdir /root/tern-hil && tar -C /root/tern-hil -xf /root/guest.tar" \
    || die "could not unpack the HIL suite the card carries (/root/guest.tar)"
echo "hil-pi: files unpacked in the guest after $((SECONDS - START)) s; dpkg -i $(basename "$DEB")" >&2
"${SSH[@]}" "dpkg -i /root/tern-hil/$(basename "$DEB")" > "$STAGE/dpkg.log" 2>&1 \
    || { cat "$STAGE/dpkg.log" >&2; die "dpkg -i $(basename "$DEB") failed in the guest"; }
sed 's/^/hil-pi:   /' "$STAGE/dpkg.log" >&2
GUEST_ARGS=(--board /root/tern-hil/board/hil-profile.toml --service --minutes "$MINUTES" --json
            --uplink-url "http://10.0.2.2:$RIG_PORT/positions"
            --unplug-cmd "python3 /root/tern-hil/cable.py unplugged" --replug-cmd "python3 /root/tern-hil/cable.py plugged")
[ -n "$ONLY" ] && GUEST_ARGS+=(--only "$ONLY")
echo "hil-pi: board/hil/run.sh --board $(basename "$PROFILE_FILE" .toml) --service in the guest, tern run for $MINUTES min" >&2
set +e
# Bounded: the checks take about 2 min plus the scheduler's MINUTES; a hung guest fails the run (124).
timeout "$(python3 -c "print(int($MINUTES * 60 + 900))")" "${SSH[@]}" "/root/tern-hil/board/hil/run.sh $(printf '%q ' "${GUEST_ARGS[@]}")" \
    | tee "$STAGE/report.txt" | grep -v '^{'
rc=${PIPESTATUS[0]}
set -e
"${SSH[@]}" 'tern status; echo; journalctl -b -u tern --no-pager | tail -40' > "$STAGE/guest-status.log" 2>&1 || true
echo "hil-pi: tern status over SSH, after the run:" >&2
sed -n '1,/^$/p' "$STAGE/guest-status.log" | sed '/^$/d; s/^/hil-pi:   /' >&2
"${SSH[@]}" 'tar -C /tmp/tern-hil-checks -cf - .' 2> /dev/null | tar -C "$STAGE" -xf - 2> /dev/null || true
# What the service stored and has not sent yet stays in its queue: the server must have exactly the rest.
"${SSH[@]}" 'tern status --json' > "$STAGE/guest-status.json" 2> /dev/null || true
uplink_rc=0
python3 "$HERE/rig-server.py" report "$STAGE/uplink.jsonl" "$STAGE/guest-status.json" | tee "$STAGE/uplink-report.txt" || uplink_rc=1
# The last line, for CI's summary: the guest's checks and the uplink check, as JSON.
python3 - "$STAGE/report.txt" "$STAGE/uplink-report.txt" <<'PY' || true
import json, sys
checks = []
for line in open(sys.argv[1]):
    if line.startswith('{"checks"'):
        checks = json.loads(line)["checks"]
for line in open(sys.argv[2]):
    mark, name, detail = line.split(None, 2) if len(line.split(None, 2)) == 3 else ("FAIL", "uplink", line)
    checks.append({"name": name, "status": "ok" if mark == "ok" else "fail", "detail": detail.strip()})
print(json.dumps({"checks": checks}))
PY
echo "hil-pi: emulated Pi run took $((SECONDS - START)) s; logs in $STAGE (report.txt, tern-service.log, sim.log, gpio-wire.log, console.log)" >&2
case $rc in
    0) exit "$uplink_rc" ;;
    1) exit 1 ;;
    124) echo "hil-pi: the checks in the guest did not finish within $MINUTES min + 15 min" >&2; exit 2 ;;
    *) echo "hil-pi: the checks could not run in the guest (exit $rc)" >&2; exit 2 ;;
esac
