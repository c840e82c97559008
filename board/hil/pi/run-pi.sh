#!/usr/bin/env bash
# The HIL suite on an emulated Raspberry Pi 3 B, from a flashed card: called by
# `board/hil/run.sh --emulated-pi` (which reads the profile), not by hand.
#   run-pi.sh PROFILE_FILE METHOD LINE BAUD MINUTES DEB ONLY POWER_CUTS SKIP
# What a user does, then what a tracker in the field meets:
#  1. flash: deploy/flash-image.sh, as docs/raspberry-pi.md says, onto the Raspberry Pi OS-shaped card
#     (board/hil/pi/image.sh): --board, --config (the rig's https server), --deb, --hostname,
#     --ssh-key, --ca-file (the rig's private CA);
#  2. first boot with no network and a wrong clock: no RTC, fake-hwclock's saved date three weeks
#     behind the receiver, whose UTC the rig sets 6 h 17 min ahead of this machine's (so only the
#     receiver can be the guest's time source); cloud-init, tern-firstboot from the card, the
#     service, chronyd stepping the clock to GPS, positions stored: check first_boot, clock;
#  3. the link comes up (QEMU's set_link): every stored position reaches the https server, once, in
#     order, some of them stored while offline: check https_uplink;
#  4. the HIL checks of board/hil/run.sh --board PROFILE --service in the guest (uart, power,
#     commands, unplug, scheduler, doctor) and the uplink check (rig-server.py report);
#  5. POWER_CUTS times: QEMU killed at a random moment while the service runs, the same card
#     booted again: the file system recovers, the service comes back by itself, every position is
#     at the server once and no sequence number is reused: check power_cut;
#  6. a card flashed without --config boots to a Pi that does not track and says why; configured
#     over SSH, it tracks: check placeholder.
# On this machine: the receiver (sim-receiver.py) on the far end of the Pi's PL011, paced at BAUD by
# uart-bridge.py, its supply wired to the Pi's GPIO LINE by gpio-wire.py; the servers and the cable's
# switch (rig-server.py). The last line is {"checks":[…]} with every check. Exit: 0 no FAIL,
# 1 a FAIL, 2 the rig broke (named), 77 it cannot run here (no qemu-system-aarch64 or no root).
# shellcheck disable=SC2001,SC2012,SC2015,SC2317  # sed on one-line details; the cleanup runs from the trap
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
PROFILE_FILE=$1 METHOD=$2 LINE=$3 BAUD=$4 MINUTES=$5 DEB=${6:-} ONLY=${7:-} POWER_CUTS=${8:-1} SKIP=${9:-}
die() { echo "hil-pi: $*" >&2; exit 2; }
not_run() { echo "hil-pi: NOT RUN: $*" >&2; exit 77; }
say() { echo "hil-pi: $*" >&2; }
[ "$(id -u)" = 0 ] || not_run "the emulated Pi's card is built and flashed as root (mmdebstrap, losetup): run as root"
case $METHOD in
    gpio) [ "$LINE" != - ] || die "the profile's power.line must be a BCM number or GPIO<n>" ;;
    *) die "--emulated-pi wires the receiver's supply to a GPIO line: power.method '$METHOD' is for --emulated" ;;
esac
need=()
for tool in qemu-system-aarch64:qemu-system-arm ssh:openssh-client openssl:openssl mcopy:mtools \
    sfdisk:fdisk fdtoverlay:device-tree-compiler losetup:mount; do
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
IMAGE=$("$HERE/image.sh") || die "the emulated Pi's card could not be built (see above)"
[ -f "$IMAGE/card.img" ] || die "image.sh answered '$IMAGE', which holds no card.img"
STAGE=${HIL_DIR:-/tmp/tern-hil}/pi-$(basename "$PROFILE_FILE" .toml)
rm -rf "$STAGE"; mkdir -p "$STAGE"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
SSH_PORT=$(free_port) RIG_PORT=$(free_port) TLS_PORT=$(free_port) SPARE_PORT=$(free_port) SPARE_SSH=$(free_port)
SPARE=$STAGE/spare
mkdir -p "$SPARE"
KEY=$IMAGE/id_ed25519
PIDS=()
declare -A WIRE_PID=()
cleanup() {
    [ -f "$STAGE/qemu.pid" ] && kill -9 "$(cat "$STAGE/qemu.pid")" 2> /dev/null || true
    [ -f "$STAGE/spare/qemu.pid" ] && kill -9 "$(cat "$STAGE/spare/qemu.pid")" 2> /dev/null || true
    for p in ${PIDS[@]+"${PIDS[@]}"} "${WIRE_PID[@]}"; do kill "$p" 2> /dev/null || true; done
}
trap cleanup EXIT

# ---------------------------------------------------------------- checks: one JSON line each
CHECKS=$STAGE/checks.jsonl
: > "$CHECKS"
result() { # NAME ok|fail|skip DETAIL
    local mark
    case $2 in ok) mark="ok  " ;; fail) mark="FAIL" ;; *) mark="skip" ;; esac
    printf '%s  %-12s %s\n' "$mark" "$1" "$3"
    python3 -c 'import json,sys; print(json.dumps({"name": sys.argv[1], "status": sys.argv[2], "detail": sys.argv[3]}))' \
        "$1" "$2" "$3" >> "$CHECKS"
}
selected() { [[ ",$SKIP," != *",$1,"* ]] && { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }; }
finish() {
    local name
    for name in ${SKIP//,/ }; do result "$name" skip "not run: --skip $SKIP"; done
    python3 - "$CHECKS" <<'PY'
import json, sys
print(json.dumps({"checks": [json.loads(l) for l in open(sys.argv[1]) if l.strip()]}))
PY
    if grep -q '"status": "fail"' "$CHECKS"; then exit 1; fi
    exit 0
}

ssh_to() { # PORT: the ssh command line for the Pi whose port 22 is 127.0.0.1:PORT
    SSH=(ssh -q -i "$KEY" -p "$1" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
         -o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveInterval=30 pi@127.0.0.1)
}
ssh_to "$SSH_PORT"
# guest CMD: CMD as root in the guest (the user cloud-init made has sudo, as Raspberry Pi OS's).
guest() { "${SSH[@]}" "sudo bash -c $(printf '%q' "$1")"; }

# ---------------------------------------------------------------- the world around the Pi
# The receiver's UTC runs 6 h 17 min ahead of this machine's; the card last ran three weeks before
# that (fake-hwclock's saved date). The server's certificate is issued now: after the saved date,
# so a tracker that trusted its saved clock would reject it.
OFFSET=$((6 * 3600 + 17 * 60))
SAVED_CLOCK=$(date -u -d "@$(( $(date +%s) + OFFSET - 21 * 86400 ))" '+%Y-%m-%d %H:%M:%S')
(
    cd "$STAGE"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 30 \
        -subj "/CN=Tern HIL rig CA" 2> /dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \
        -subj "/CN=10.0.2.2" 2> /dev/null
    printf 'subjectAltName=IP:10.0.2.2\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 30 \
        -extfile server.ext 2> /dev/null
) || die "openssl could not make the rig's CA and server certificate"
# The tracker's configuration: the board profile as it ships, the server and its CA.
config_for() { # PORT [FILE] > tern.toml: FILE (default the profile) pointed at the rig's server and CA
    sed -e "s|^url = .*|url = \"https://10.0.2.2:$1/positions\"|" \
        -e "s|^\\[uplink\\]|[uplink]\\nca_file = \"/etc/tern/uplink-ca.pem\"|" "${2:-$PROFILE_FILE}"
}
config_for "$TLS_PORT" > "$STAGE/tern.toml"
grep -q "https://10.0.2.2:$TLS_PORT" "$STAGE/tern.toml" || die "the profile has no [uplink] url line to point at the rig's server"

python3 "$HERE/rig-server.py" serve --port "$RIG_PORT" --log "$STAGE/hil-uplink.jsonl" --cable "$STAGE/cable" \
    > "$STAGE/rig-server.log" 2>&1 &
PIDS+=($!)
python3 "$HERE/rig-server.py" serve --port "$TLS_PORT" --log "$STAGE/uplink.jsonl" --cable "$STAGE/cable" \
    --tls-cert "$STAGE/server.pem" --tls-key "$STAGE/server.key" > "$STAGE/rig-server-tls.log" 2>&1 &
PIDS+=($!)
python3 "$HERE/rig-server.py" serve --port "$SPARE_PORT" --log "$SPARE/uplink.jsonl" --cable "$SPARE/cable" \
    --tls-cert "$STAGE/server.pem" --tls-key "$STAGE/server.key" > "$SPARE/rig-server.log" 2>&1 &
PIDS+=($!)
receiver() { # DIR: a receiver on the far end of DIR/pl011 (the Pi booted in DIR), its supply DIR/supply
    echo plugged > "$1/cable"
    python3 "$REPO/board/hil/uart-bridge.py" --control "$1/cable" --speed-a "$BAUD" "$1/pl011" "$1/receiver" \
        > "$1/bridge.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do [ -e "$1/receiver" ] && break; sleep 0.05; done
    [ -e "$1/receiver" ] || die "uart-bridge.py did not start: $(cat "$1/bridge.log")"
    # It drives round a block (10 m/s, 150 m radius): on a curve each fix says something new.
    python3 "$REPO/board/hil/sim-receiver.py" --device "$1/receiver" --baud "$BAUD" --power-gpio "$1/supply" \
        --speed 10 --radius 150 --time-offset "$OFFSET" --state-log "$1/sim-state.log" 2> "$1/sim.log" &
    PIDS+=($!)
}
receiver "$STAGE"
wire() { # DIR: the supply wire to the Pi booted in DIR (a new QEMU: a new monitor)
    [ -z "${WIRE_PID[$1]:-}" ] || kill "${WIRE_PID[$1]}" 2> /dev/null || true
    rm -f "$1/supply"
    python3 "$HERE/gpio-wire.py" --monitor "$1/monitor.sock" --line "$LINE" --out "$1/supply" \
        2>> "$1/gpio-wire.log" &
    WIRE_PID[$1]=$!
    for _ in $(seq 100); do [ -e "$1/supply" ] && return 0; sleep 0.05; done
    die "gpio-wire.py read no level from QEMU's monitor: $(tail -3 "$1/gpio-wire.log")"
}

# ---------------------------------------------------------------- 1. flash, as docs/raspberry-pi.md says
flash() { # OUT LOG ARGS...: deploy/flash-image.sh onto a copy of the Raspberry Pi OS-shaped card
    local out=$1 log=$2
    shift 2
    "$REPO/deploy/flash-image.sh" --image "$IMAGE/card.img" --out "$out" --board "$PROFILE_FILE" \
        --deb "$DEB" --ssh-key "$KEY.pub" "$@" > "$log" 2>&1
}
START=$SECONDS
flash "$STAGE/card.img" "$STAGE/flash.log" --config "$STAGE/tern.toml" --hostname tern-pi --ca-file "$STAGE/ca.pem" ||
    { tail -20 "$STAGE/flash.log" >&2; die "deploy/flash-image.sh failed (log $STAGE/flash.log)"; }
grep -E '^(image|first boot|board|fetching|offline|tern.toml|[0-9]+ change)' "$STAGE/flash.log" | sed 's/^/hil-pi:   flash: /' >&2 || true
# What the card holds besides: the HIL suite (as a Pi owner copies it onto the card), and the
# date fake-hwclock saved when the card last ran. Written on the unmounted root file system.
mkdir -p "$STAGE/guest/board/hil"
cp "$REPO/board/hil/run.sh" "$REPO/board/hil/checks.py" "$STAGE/guest/board/hil/"
cp "$REPO"/board/*.toml "$STAGE/guest/board/"
cp "$PROFILE_FILE" "$STAGE/guest/board/hil-profile.toml"
cat > "$STAGE/guest/cable.py" <<PY
import sys, urllib.request
urllib.request.urlopen(urllib.request.Request("http://10.0.2.2:$RIG_PORT/cable", sys.argv[1].encode()), timeout=10)
PY
tar -C "$STAGE/guest" -cf "$STAGE/guest.tar" .
echo "$SAVED_CLOCK" > "$STAGE/fake-hwclock.data"
# The one setting the rig adds for emulation: under TCG the Pi runs ~20x slower than a Pi 3, and on a
# busy host udev may take longer than systemd's 90 s to announce the bootfs partition (then
# local-fs.target fails and the Pi boots to emergency mode): devices get 5 minutes.
printf '[Manager]\nDefaultDeviceTimeoutSec=300s\n' > "$STAGE/emulation.conf"
card_put() { # CARD LOCAL:GUEST...
    local card=$1 start dev put
    shift
    start=$(sfdisk -d "$card" | awk -F'[=,]' '/^[^ ]*2 :/ { for (i = 1; i <= NF; i++) if ($i ~ /start/) { gsub(/ /, "", $(i+1)); print $(i+1) } }')
    dev=$(losetup -f --show -o $((start * 512)) "$card") || return 1
    mkdir -p "$STAGE/mnt"
    mount -t ext4 "$dev" "$STAGE/mnt" || { losetup -d "$dev"; return 1; }
    for put in "$@"; do install -D -m 0644 "${put%%:*}" "$STAGE/mnt${put#*:}"; done
    umount "$STAGE/mnt"; losetup -d "$dev"
}
card_put "$STAGE/card.img" "$STAGE/guest.tar:/var/lib/tern-hil/guest.tar" "$STAGE/fake-hwclock.data:/etc/fake-hwclock.data" \
    "$STAGE/emulation.conf:/etc/systemd/system.conf.d/tern-hil-emulation.conf" ||
    die "could not write the HIL suite and fake-hwclock.data into the card"
say "card flashed after $((SECONDS - START)) s; fake-hwclock's saved date $SAVED_CLOCK, the receiver's UTC now $(date -u -d "@$(( $(date +%s) + OFFSET ))" '+%F %T')"

# The card flashed without --config (check placeholder) is flashed now and booted last, after the
# configured card's QEMU has stopped: two TCG guests on a small host starve each other's boot
# (systemd's 90 s wait for the root partition ran out).
SPARE_FLASHED=""
if selected placeholder; then
    flash "$SPARE/card.img" "$SPARE/flash.log" --hostname tern-spare &&
        card_put "$SPARE/card.img" "$STAGE/fake-hwclock.data:/etc/fake-hwclock.data" \
            "$STAGE/emulation.conf:/etc/systemd/system.conf.d/tern-hil-emulation.conf" && SPARE_FLASHED=1 ||
        say "the card without --config could not be flashed ($SPARE/flash.log)"
fi

# Steps 2-5 boot the configured card; a run of placeholder alone (--only placeholder) leaves them out.
needs_main() {
    local c
    for c in first_boot clock https_uplink uart power commands unplug scheduler doctor uplink power_cut; do
        selected "$c" && return 0
    done
    return 1
}
if needs_main; then
# ---------------------------------------------------------------- 2. first boot, offline, clock wrong
say "booting the flashed card with the link down (console $STAGE/console.log)"
BOOT_START=$SECONDS
PI_LINK=off "$HERE/boot.sh" "$STAGE/card.img" "$KEY" "$STAGE" "$STAGE/pl011" "$SSH_PORT" || die "QEMU did not start (see above)"
wire "$STAGE"
firstboot_at="" done_at=""
while [ $((SECONDS - BOOT_START)) -lt 1200 ]; do
    if [ -z "$firstboot_at" ] && grep -q 'tern-firstboot: installed .* from the card, offline' "$STAGE/console.log"; then
        firstboot_at=$((SECONDS - BOOT_START)); say "tern-firstboot installed from the card after $firstboot_at s (offline)"
    fi
    if grep -q 'tern-firstboot: done' "$STAGE/console.log"; then done_at=$((SECONDS - BOOT_START)); break; fi
    kill -0 "$(cat "$STAGE/qemu.pid")" 2> /dev/null || die "QEMU exited during the first boot: $(tail -5 "$STAGE/console.log")"
    sleep 3
done
[ -n "$done_at" ] || say "tern-firstboot did not finish within 20 min of the offline boot (the console's tail): $(tail -5 "$STAGE/console.log" | tr -d '\r' | tr '\n' ' ')"
# Offline, the service runs the shipped duty-cycled policy: wait for the receiver's supply to have
# been switched on 3 times after the first boot (and 150 s at least: chronyd's samples, stored positions).
ons_since() { awk -v t="$1" '$1 >= t && $2 == "on" { n++ } END { print n + 0 }' "$STAGE/sim-state.log" 2> /dev/null; }
offline_from=$(date +%s)
while [ $(( $(date +%s) - offline_from )) -lt 600 ]; do
    [ $(( $(date +%s) - offline_from )) -ge 150 ] && [ "$(ons_since "$offline_from")" -ge 3 ] && break
    sleep 5
done
say "offline for $(( $(date +%s) - offline_from )) s after the first boot: the receiver was powered on $(ons_since "$offline_from") times"

# ---------------------------------------------------------------- 3. the link comes up
LINK_AT=$(date +%s.%N)
"$HERE/monitor.sh" "$STAGE" "set_link net0 on" > /dev/null || die "could not bring the link up (QEMU's monitor)"
say "link up at $((SECONDS - BOOT_START)) s after power-on; waiting for SSH"
up="" until=$((SECONDS + 420))
while [ $SECONDS -lt "$until" ]; do
    if "${SSH[@]}" true 2> /dev/null; then up=1; break; fi
    sleep 3
done
[ -n "$up" ] || die "no SSH within 7 min of the link coming up (cloud-init made no user? the USB network did not come up? console: $(grep -c 'Not connected' "$STAGE/console.log" || true) 'Not connected' lines)"
say "SSH after $((SECONDS - BOOT_START)) s"
# The guest's monotonic time at the link's coming up: its uptime now less the time since on this machine.
link_mono=$(guest 'cat /proc/uptime' | python3 -c "import sys,time; print('%.1f' % (float(sys.stdin.read().split()[0]) - (time.time() - $LINK_AT)))")

# journal_first UNIT REGEX: "SECONDS MESSAGE" of the unit's first journal entry this boot matching
# REGEX, SECONDS the guest's monotonic time when the journal received it (`-o short-monotonic`
# prints 0.000000 for chronyd's "wrong by", whose source timestamp is from before the step).
journal_first() {
    guest "journalctl -b -o json --no-pager -u $1" | python3 -c '
import json, re, sys
for line in sys.stdin:
    e = json.loads(line)
    m = e.get("MESSAGE")
    if isinstance(m, str) and re.search(sys.argv[1], m):
        print("%.1f %s" % (int(e["__MONOTONIC_TIMESTAMP"]) / 1e6, m))
        break' "$2"
}

if selected first_boot; then
    host=$(guest hostname) || host="?"
    user=$(guest 'id -nG pi' 2> /dev/null || echo "no user pi")
    ci=$(guest 'cloud-init status 2>/dev/null | sed -n "s/^status: //p"' || echo "?")
    installed=$(journal_first tern-firstboot 'from the card, offline' || true)
    installed_mono=${installed%% *}
    # systemctl show prints the properties in its own order: sorted here, "NAME=value" each.
    svc=$(guest 'systemctl show tern -p ActiveState -p User -p UnitFileState | sort | tr "\n" " "' || true)
    problems=()
    [ "$host" = tern-pi ] || problems+=("host name '$host', not tern-pi (cloud-init's hostname)")
    [[ " $user " == *" sudo "* ]] || problems+=("user pi: '$user' (cloud-init's users)")
    [ "$ci" = "done" ] || problems+=("cloud-init status '$ci'")
    [ -n "$installed_mono" ] || problems+=("tern-firstboot did not install from the card, offline")
    [ -z "$installed_mono" ] || python3 -c "import sys; sys.exit(0 if $installed_mono < $link_mono else 1)" ||
        problems+=("tern-firstboot installed at ${installed_mono} s, after the link came up at ${link_mono} s")
    [ "$svc" = "ActiveState=active UnitFileState=enabled User=tern " ] || problems+=("tern.service: $svc(want ActiveState=active UnitFileState=enabled User=tern)")
    detail="host tern-pi and user pi with the SSH key by cloud-init ($ci); ${installed#* } at ${installed_mono:-?} s, the link up at $link_mono s; tern.service active, enabled, User=tern"
    if [ ${#problems[@]} = 0 ]; then result first_boot ok "$detail"; else result first_boot fail "$(IFS=';'; echo "${problems[*]}")"; fi
fi

if selected clock; then
    skew=$(guest 'date +%s.%N' | python3 -c "import sys,time; print('%.1f' % (float(sys.stdin.read()) - time.time() - $OFFSET))")
    tracking=$(guest 'chronyc -n -c tracking' 2> /dev/null || true)
    refname=$(echo "$tracking" | cut -d, -f2)
    selected_src=$(guest 'chronyc -n sources' 2> /dev/null | grep -E '^#\*' | awk '{ print $2 }' || true)
    step=$(journal_first chrony 'System clock (wrong by|was stepped by)' || true)
    step_mono=${step%% *}
    doctor=$(guest 'tern doctor 2>&1' || true)
    doctor_clock=$(echo "$doctor" | grep -iE 'clock|time' | grep -m1 GPS || true)
    problems=()
    python3 -c "import sys; sys.exit(0 if abs($skew) < 2 else 1)" || problems+=("the guest's clock is ${skew} s off the receiver's UTC")
    [ "$selected_src" = GPS ] || problems+=("chronyd's selected source is '${selected_src:-none}', not GPS")
    [ -n "$step_mono" ] || problems+=("chronyd logged no step of the clock")
    [ -z "$step_mono" ] || python3 -c "import sys; sys.exit(0 if $step_mono < $link_mono else 1)" ||
        problems+=("the clock was stepped at ${step_mono} s, after the link came up at ${link_mono} s")
    [ -n "$doctor_clock" ] || problems+=("tern doctor does not name GPS as the clock's source: $(echo "$doctor" | grep -iE 'clock|chrony' | head -2 | tr '\n' ' ')")
    detail="chronyd selected GPS (reference ${refname:-?}) and ${step#* } at ${step_mono:-?} s, offline (link up at $link_mono s); the guest's clock within ${skew} s of the receiver's UTC, which is $OFFSET s ahead of this machine's; tern doctor: $(echo "$doctor_clock" | sed 's/^ok *//')"
    if [ ${#problems[@]} = 0 ]; then result clock ok "$detail"; else result clock fail "$(IFS=';'; echo "${problems[*]}")"; fi
fi

# Every position the service stored until now reaches the https server: wait for an empty queue,
# then stop the service so that the figures hold still.
drain() { # SECONDS: wait for the queue to empty; true if it did
    local until=$((SECONDS + $1))
    while [ $SECONDS -lt "$until" ]; do
        [ "$(guest 'tern status --json' 2> /dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["queue"]["depth"])' 2> /dev/null)" = 0 ] && return 0
        sleep 5
    done
    return 1
}
if selected https_uplink; then
    drained=0; drain 300 && drained=1
    guest 'systemctl stop tern' || true
    guest 'tern status --json' > "$STAGE/status-firstboot.json" 2> /dev/null || true
    report=$(python3 "$HERE/rig-server.py" report "$STAGE/uplink.jsonl" "$STAGE/status-firstboot.json" --name https_uplink) && rc=0 || rc=$?
    offline=$(python3 - "$STAGE/uplink.jsonl" "$LINK_AT" "$OFFSET" <<'PY'
import datetime, json, sys
link_rx = float(sys.argv[2]) + float(sys.argv[3])      # the link's coming up, in the receiver's UTC
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
t = [datetime.datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp() for r in rows]
print(sum(1 for x in t if x < link_rx), len(rows), "%.0f" % (max(t) - link_rx) if t else "-")
PY
    ) || offline="0 0 -"
    read -r n_offline n_all _ <<< "$offline"
    detail="$(echo "$report" | sed 's/^[a-zA-Z ]*https_uplink *//'); $n_offline of $n_all stored offline (fix time before the link came up), sent over https:// with a certificate issued after fake-hwclock's date ($SAVED_CLOCK), trusted through uplink.ca_file"
    if [ "$rc" = 0 ] && [ "$drained" = 1 ] && [ "${n_offline:-0}" -ge 1 ]; then result https_uplink ok "$detail"
    else result https_uplink fail "$detail$([ "$drained" = 1 ] || echo "; the queue did not empty within 5 min")$([ "${n_offline:-0}" -ge 1 ] || echo "; no position stored offline")"; fi
fi
# The last position the first boot's server got: the queue's last, less what still waits. Stopping
# the service stores the fix thinning held back (the track's last point), which waits for the next
# server: the uplink check below expects it there.
FIRSTBOOT_LAST=$(python3 -c 'import json,sys; q=json.load(open(sys.argv[1]))["queue"]; print(int(q["last_sequence"] or 0) - int(q["depth"]))' "$STAGE/status-firstboot.json" 2> /dev/null || echo 0)

# ---------------------------------------------------------------- 4. the HIL checks, in the guest
guest 'rm -rf /root/tern-hil && mkdir /root/tern-hil && tar -C /root/tern-hil -xf /var/lib/tern-hil/guest.tar' ||
    die "could not unpack the HIL suite the card carries (/var/lib/tern-hil/guest.tar)"
HIL_ONLY=""
for c in uart power commands unplug scheduler; do selected "$c" && HIL_ONLY+="${HIL_ONLY:+,}$c"; done
if [ -n "$HIL_ONLY" ]; then
    GUEST_ARGS=(--board /root/tern-hil/board/hil-profile.toml --service --minutes "$MINUTES" --json --only "$HIL_ONLY"
                --uplink-url "http://10.0.2.2:$RIG_PORT/positions"
                --unplug-cmd "python3 /root/tern-hil/cable.py unplugged" --replug-cmd "python3 /root/tern-hil/cable.py plugged")
    say "board/hil/run.sh --board $(basename "$PROFILE_FILE" .toml) --service in the guest, tern run for $MINUTES min"
    set +e
    # Bounded: the checks take about 2 min plus the scheduler's MINUTES; a hung guest fails the run (124).
    timeout "$(python3 -c "print(int($MINUTES * 60 + 900))")" "${SSH[@]}" "sudo /root/tern-hil/board/hil/run.sh $(printf '%q ' "${GUEST_ARGS[@]}")" \
        > "$STAGE/report.txt"
    rc=$?
    set -e
    grep -v '^{' "$STAGE/report.txt" || true
    tail -1 "$STAGE/report.txt" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["checks"]:
    if c["detail"] != "not selected (--only)":
        print(json.dumps(c))' >> "$CHECKS" 2> /dev/null || result hil fail "the HIL suite in the guest gave no JSON report (exit $rc; $STAGE/report.txt)"
    [ "$rc" = 0 ] || [ "$rc" = 1 ] || result hil fail "the HIL suite in the guest could not run (exit $rc; $STAGE/report.txt)"
    guest 'tar -C /tmp/tern-hil-checks -cf - .' 2> /dev/null | tar -C "$STAGE" -xf - 2> /dev/null || true
    # What the service stored and has not sent yet stays in its queue: the servers must have exactly the rest.
    guest 'tern status --json' > "$STAGE/guest-status.json" 2> /dev/null || true
    report=$(python3 "$HERE/rig-server.py" report "$STAGE/hil-uplink.jsonl" "$STAGE/guest-status.json" --since-seq "$FIRSTBOOT_LAST") && rc=0 || rc=$?
    if [ "$rc" = 0 ]; then result uplink ok "$(echo "$report" | sed 's/^ok *uplink *//')"; else result uplink fail "$(echo "$report" | sed 's/^FAIL *uplink *//')"; fi
fi

# ---------------------------------------------------------------- 5. power cuts
if selected power_cut && [ "$POWER_CUTS" -gt 0 ]; then
    before=$(wc -l < "$STAGE/uplink.jsonl")
    guest 'systemctl start tern' || true
    cuts=() problems=()
    for cut in $(seq "$POWER_CUTS"); do
        wait_s=$(python3 -c 'import random; print(random.randint(20, 90))')
        sleep "$wait_s"
        active=$(guest 'systemctl is-active tern' 2> /dev/null || true)
        kill -9 "$(cat "$STAGE/qemu.pid")"; rm -f "$STAGE/qemu.pid"
        cp "$STAGE/console.log" "$STAGE/console-before-cut-$cut.log" 2> /dev/null || true
        say "power cut $cut of $POWER_CUTS, $wait_s s after the service ran on (it was $active)"
        PI_LINK=on "$HERE/boot.sh" "$STAGE/card.img" "$KEY" "$STAGE" "$STAGE/pl011" "$SSH_PORT" || { problems+=("cut $cut: the Pi did not boot again"); break; }
        wire "$STAGE"
        back=""
        for _ in $(seq 40); do
            [ "$(guest 'systemctl is-active tern' 2> /dev/null)" = active ] && { back=1; break; }
            sleep 3
        done
        recovered=$(guest "journalctl -b -k --no-pager | grep -m1 -oE 'EXT4-fs \(mmcblk0p2\): (recovery complete|mounted filesystem [^ ]+ r[wo])'" || true)
        fsck=$(guest "journalctl -b --no-pager | grep -m1 -oE '(rootfs|bootfs|/dev/mmcblk0p[12]): (clean|recovering journal)[^\"]*'" || true)
        [ -n "$back" ] || problems+=("cut $cut: tern.service not active 2 min after the boot ($(guest 'systemctl is-active tern' 2>&1))")
        cuts+=("cut $cut after ${wait_s} s: ${recovered:-no ext4 message}${fsck:+, $fsck}, tern back by itself: $([ -n "$back" ] && echo yes || echo no)")
    done
    drained=0; drain 300 && drained=1
    guest 'systemctl stop tern' || true
    guest 'tern status --json' > "$STAGE/status-final.json" 2> /dev/null || true
    # Both servers' positions (https: the first boot and after the cuts; http: the HIL checks), by
    # arrival. A cut can undo the queue's unsynced delete of what the server confirmed (by design:
    # docs/durability.md), so a batch may arrive again: the protocol's server keeps a repeated `id`
    # as the same position (docs/servers.md), and so does this count. A FAIL is a position missing,
    # or a sequence number carried by two positions (reused), or an id under two numbers.
    python3 - "$STAGE/uplink.jsonl" "$STAGE/hil-uplink.jsonl" "$STAGE/status-final.json" > "$STAGE/power-cut-check.txt" <<'PY' && rc2=0 || rc2=$?
import json, sys
rows = sorted((json.loads(l) for p in sys.argv[1:3] for l in open(p) if l.strip()), key=lambda r: r["at"])
stored = {}                                   # id -> seq, as a server keeping the protocol stores them
ids_of = {}                                   # seq -> the ids sent under it
for r in rows:
    stored.setdefault(r["id"], set()).add(r["seq"])
    ids_of.setdefault(r["seq"], set()).add(r["id"])
q = json.load(open(sys.argv[3]))["queue"]
last, waiting = int(q["last_sequence"] or 0), int(q["depth"])
reused = sorted(s for s, ids in ids_of.items() if len(ids) > 1)
renumbered = sorted(i for i, seqs in stored.items() if len(seqs) > 1)
missing = sorted(set(range(1, last - waiting + 1)) - set(ids_of))
print("%d positions stored at the servers (seq 1-%d), %d of them sent again after a cut (same id, stored once), "
      "%d seq reused, %d ids renumbered, %d missing%s" % (
          len(stored), max(ids_of or [0]), len(rows) - len(stored), len(reused), len(renumbered), len(missing),
          (": reused %s, missing %s" % (reused[:5], missing[:5])) if reused or missing else ""))
sys.exit(1 if reused or renumbered or missing else 0)
PY
    after=$(wc -l < "$STAGE/uplink.jsonl")
    [ "$drained" = 1 ] || problems+=("the queue did not empty within 5 min of the last boot")
    [ "$after" -gt "$before" ] || problems+=("no position reached the server after the cuts")
    [ "$rc2" = 0 ] || problems+=("$(cat "$STAGE/power-cut-check.txt")")
    detail="$(IFS=';'; echo "${cuts[*]}"); $(cat "$STAGE/power-cut-check.txt"); $((after - before)) more at the https server since the cuts began"
    if [ ${#problems[@]} = 0 ]; then result power_cut ok "$detail"
    else result power_cut fail "$detail: $(IFS=';'; echo "${problems[*]}")"; fi
fi
kill -9 "$(cat "$STAGE/qemu.pid" 2> /dev/null)" 2> /dev/null || true
rm -f "$STAGE/qemu.pid"
fi # needs_main

# ---------------------------------------------------------------- 6. a card flashed without --config
if selected placeholder; then
    SPARE_UP=""
    if [ -n "$SPARE_FLASHED" ]; then
        receiver "$SPARE"
        say "booting the card flashed without --config, the link up (console $SPARE/console.log)"
        # Powered on and the link put up at once, not through boot.sh's wait for SSH: a first boot
        # sits at the login prompt for minutes before cloud-init enables ssh, which boot.sh would
        # take for a dead USB network and power the Pi off in the middle of tern-firstboot.
        PI_LINK=off "$HERE/boot.sh" "$SPARE/card.img" "$KEY" "$SPARE" "$SPARE/pl011" "$SPARE_SSH" && wire "$SPARE" &&
            "$HERE/monitor.sh" "$SPARE" "set_link net0 on" > /dev/null && SPARE_UP=1
    fi
    if [ -z "$SPARE_UP" ]; then
        result placeholder fail "the card flashed without --config was not flashed or not started ($SPARE/flash.log, $SPARE/boot.log)"
    else
        ssh_to "$SPARE_SSH"
        up="" until=$((SECONDS + 900))
        while [ $SECONDS -lt "$until" ]; do
            guest 'journalctl -b -u tern-firstboot --no-pager | grep -q "tern-firstboot: done"' 2> /dev/null && { up=1; break; }
            sleep 5
        done
        warned=$(grep -c 'not configured for a tracker yet' "$SPARE/flash.log" || true)
        status=$(guest 'systemctl status tern --no-pager 2>&1; true' 2> /dev/null || true)
        doctor=$(guest 'tern doctor 2>&1; echo "exit $?"' 2> /dev/null || true)
        doctor_rc=$(echo "$doctor" | sed -n 's/^exit //p' | tail -1)
        why=$(echo "$doctor" | grep -m1 -iE 'placeholder|example\.com|not configured' || true)
        refused=$(echo "$status" | grep -m1 -iE 'exec-condition|condition|inactive' || true)
        # Configured over SSH, as docs/raspberry-pi.md tells a user: the installed tern.toml edited
        # (the server, its CA; what flash-image.sh wrote into it, [time] chrony_socket among it,
        # kept: without it chrony never hears GPS, the clock stays at fake-hwclock's date and TLS
        # refuses the server's certificate as not yet valid), then start.
        guest 'cat /etc/tern/tern.toml' > "$SPARE/tern.installed.toml" 2> /dev/null || true
        config_for "$SPARE_PORT" "$SPARE/tern.installed.toml" > "$SPARE/tern.toml"
        "${SSH[@]}" "sudo tee /etc/tern/tern.toml > /dev/null" < "$SPARE/tern.toml" || true
        "${SSH[@]}" "sudo tee /etc/tern/uplink-ca.pem > /dev/null" < "$STAGE/ca.pem" || true
        guest 'systemctl start tern' 2> /dev/null || true
        # Up to 10 min: chronyd needs a few of the duty-cycled GPS samples to step the clock, and an
        # upload tried before that is refused (certificate not yet valid) and retried after
        # uplink.backoff_max (5 min).
        tracked=0
        for _ in $(seq 120); do
            [ -s "$SPARE/uplink.jsonl" ] && { tracked=$(wc -l < "$SPARE/uplink.jsonl"); break; }
            sleep 5
        done
        problems=()
        [ -n "$up" ] || problems+=("no SSH, or tern-firstboot not done, within 15 min ($SPARE/console.log)")
        # flash-image.sh checks tern.toml with a tern binary of this machine's (.build, or TERN=):
        # without one it says so and cannot warn.
        if grep -q 'not checked: no tern binary runs here' "$SPARE/flash.log"; then warned=-1
        elif [ "$warned" -lt 1 ]; then problems+=("flash-image.sh did not warn that the card is not configured"); fi
        [ -n "$refused" ] || problems+=("systemctl status tern does not show it refused: $(echo "$status" | head -3 | tr '\n' ' ')")
        { [ "${doctor_rc:-0}" != 0 ] && [ -n "$why" ]; } || problems+=("tern doctor (exit ${doctor_rc:-?}) does not say why: $(echo "$doctor" | grep -m2 FAIL | tr '\n' ' ')")
        [ "$tracked" -ge 1 ] || problems+=("configured over SSH, it sent no position within 10 min")
        detail="flash-image.sh $([ "$warned" = -1 ] && echo "could not check tern.toml (no tern binary here)" || echo warned); not started: '$(echo "$refused" | sed 's/^ *//')'; tern doctor exit ${doctor_rc:-?}: '$(echo "$why" | sed 's/^ *//')'; configured over SSH (tern.toml, CA, systemctl start): $tracked position(s) at the server"
        if [ ${#problems[@]} = 0 ]; then result placeholder ok "$detail"; else result placeholder fail "$detail: $(IFS=';'; echo "${problems[*]}")"; fi
        kill -9 "$(cat "$SPARE/qemu.pid" 2> /dev/null)" 2> /dev/null || true
    fi
fi
say "emulated Pi run took $((SECONDS - START)) s; logs in $STAGE (report.txt, flash.log, console.log, sim.log, gpio-wire.log, uplink.jsonl)"
finish
