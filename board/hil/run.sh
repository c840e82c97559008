#!/usr/bin/env bash
# Tern's hardware-in-the-loop suite: the same checks (board/hil/checks.py) on a Raspberry Pi with a
# HAT and on an emulated board in CI (a QEMU guest with a gpio-sim chip and a real 16550 UART whose
# other end is a simulated receiver, paced at the real baud rate by uart-bridge.py).
#
# usage: board/hil/run.sh --emulated [--profile NAME] [--json] [--minutes N] [--tern PATH] [--only LIST]
#        board/hil/run.sh --emulated-pi [--profile NAME] [--deb PATH] [--minutes N] [--only LIST]
#                         [--skip LIST] [--power-cuts N] [--json]
#        board/hil/run.sh --board PROFILE [--device DEV] [--json] [--minutes N] [--tern PATH] [--interactive]
#                         [--service [--uplink-url URL]] [--unplug-cmd CMD --replug-cmd CMD]
#                         [--first-fix-cycles N]
#   PROFILE / NAME: a board profile, board/NAME.toml or a path (e.g. load-switch, waveshare-l76x,
#   adafruit-ultimate-gps, uputronics-ublox-m8). --emulated defaults to load-switch and supports the
#   gpio, pmtk-standby and ubx-backup methods (the simulator has no L76X STANDBY/FORCE_ON pins).
#   --minutes N: how long `tern run` cycles the receiver (default 10). --only uart,power,...: a subset.
#   --first-fix-cycles N: the firstfix check measures N hot starts of the still receiver (each 60 s
#   off, 60 s recorded; on the emulated board 10 s and 35 s, its simulated receiver's first fix 8 m
#   off and each next one half as far): how far a start's first fixes are from the settled position,
#   and the filter.warm_up that fits (docs/hil.md). Without it the check is skipped.
#   --interactive (Pi): asks you to pull and replace the receiver's TX wire for the unplug check.
#   --service (Pi): the scheduler and doctor checks run the installed service (systemctl, its hardened
#   unit, User=tern) with the HIL settings written to /etc/tern/tern.toml (put back afterwards)
#   instead of `tern run` as root; --uplink-url is the server it uploads to (default: a local one).
#   --emulated-pi: an emulated Raspberry Pi 3 B (QEMU raspi3b) from a card in Raspberry Pi OS's shape
#   (Debian trixie arm64, board/hil/pi/image.sh), flashed with deploy/flash-image.sh and the arm64
#   .deb (--deb, default the newest dist/tern_*~deb13_arm64.deb); first boot with no network and a
#   wrong clock, then this script's --board --service path inside it on the Pi's PL011 and gpiochip0,
#   power cuts (--power-cuts N, default 1; 5 or more for the long run) and a card flashed without
#   --config; the receiver simulated on this machine (sim-receiver.py, paced at the baud rate), the
#   servers too (board/hil/pi/rig-server.py). Checks besides the ones above: first_boot, clock,
#   https_uplink, uplink, power_cut, placeholder (board/hil/pi/run-pi.sh says what each proves).
#   --skip placeholder,...: checks not to run, each reported as `skip` (CI skips placeholder, the
#   second card's 10 minutes of first boot, to stay within its hour; the long run keeps it).
# Each check prints `ok`, `FAIL` or `skip (reason)`; with --json the last line is
# {"checks":[{"name":…,"status":"ok"|"fail"|"skip","detail":…}]}.
# Exit: 0 no FAIL; 1 a FAIL; 2 usage or a broken setup (named); 77 the emulated rig cannot run on
# this machine (no QEMU, no kernel source package…): the suite did NOT run, the reason is printed.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
die() { echo "hil: $*" >&2; exit 2; }
not_run() { echo "hil: NOT RUN: $*" >&2; exit 77; }

TARGET="" PROFILE="" JSON="" MINUTES=10 TERN="${TERN:-}" ONLY="" DEVICE="" INTERACTIVE="" SERVICE="" UPLINK_URL=""
UNPLUG_CMD="" REPLUG_CMD="" DEB="" POWER_CUTS=1 SKIP="" FIRST_FIX_CYCLES=0
while [ $# -gt 0 ]; do
    case $1 in
        --emulated) TARGET=emulated ;;
        --emulated-pi) TARGET=emulated-pi ;;
        --deb) DEB=${2:?--deb needs a path}; shift ;;
        --power-cuts) POWER_CUTS=${2:?--power-cuts needs a number}; shift
            [[ $POWER_CUTS =~ ^[0-9]+$ ]] || die "--power-cuts takes a whole number, not '$POWER_CUTS'" ;;
        --service) SERVICE=--service ;;
        --uplink-url) UPLINK_URL=${2:?}; shift ;;
        --unplug-cmd) UNPLUG_CMD=${2:?}; shift ;;
        --replug-cmd) REPLUG_CMD=${2:?}; shift ;;
        --board) TARGET=board; PROFILE=${2:?--board needs a profile}; shift ;;
        --profile) PROFILE=${2:?--profile needs a name}; shift ;;
        --json) JSON=--json ;;
        --minutes) MINUTES=${2:?}; shift ;;
        --tern) TERN=${2:?}; shift ;;
        --only) ONLY=${2:?}; shift ;;
        --first-fix-cycles) FIRST_FIX_CYCLES=${2:?--first-fix-cycles needs a number}; shift
            [[ $FIRST_FIX_CYCLES =~ ^[0-9]+$ ]] || die "--first-fix-cycles takes a whole number, not '$FIRST_FIX_CYCLES'" ;;
        --skip) SKIP=${2:?--skip needs a list of checks}; shift ;;
        --device) DEVICE=${2:?}; shift ;;
        --interactive) INTERACTIVE=--interactive ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
    shift
done
[ -n "$TARGET" ] || die "say --emulated, --emulated-pi or --board PROFILE (see --help)"
[[ $MINUTES =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--minutes takes a number, not '$MINUTES'"
PROFILE=${PROFILE:-load-switch}
if [ -f "$PROFILE" ]; then PROFILE_FILE=$(cd "$(dirname "$PROFILE")" && pwd)/$(basename "$PROFILE")
elif [ -f "$REPO/board/$PROFILE.toml" ]; then PROFILE_FILE=$REPO/board/$PROFILE.toml
else die "no profile '$PROFILE': one of $(cd "$REPO/board" && ls ./*.toml | sed 's|^\./||; s|\.toml$||' | tr '\n' ' ')"; fi
# The profile's power method and line, for the target's setup (the checks read the profile themselves).
read -r METHOD LINE BAUD < <(python3 - "$PROFILE_FILE" <<'PY'
import sys, tomllib, re
p = tomllib.load(open(sys.argv[1], "rb"))
pw, rc = p.get("power", {}), p.get("receiver", {})
line = str(pw.get("line", "-"))
m = re.match(r"^(?:GPIO)?(\d+)$", line)
print(pw.get("method", "none"), m.group(1) if m else "-", rc.get("baud", 9600))
PY
) || die "cannot read $PROFILE_FILE (python3 with tomllib, Python >= 3.11, is needed)"
CHECK_ARGS=(--minutes "$MINUTES")
[ -n "$JSON" ] && CHECK_ARGS+=("$JSON")
[ -n "$ONLY" ] && CHECK_ARGS+=(--only "$ONLY")
CHECK_ARGS+=(--first-fix-cycles "$FIRST_FIX_CYCLES")

find_tern() {
    [ -n "$TERN" ] && { [ -x "$TERN" ] || die "--tern $TERN is not an executable"; realpath "$TERN"; return; }
    for t in "$REPO/dist/$(uname -m)/tern" "$REPO/.build/release/tern" "$REPO/.build/debug/tern" "$(command -v tern || true)"; do
        [ -n "$t" ] && [ -x "$t" ] && { echo "$t"; return; }
    done
    die "no tern binary: build it (swift build, or deploy/build.sh) or pass --tern PATH"
}

# ---------------------------------------------------------------- a Raspberry Pi with a HAT
if [ "$TARGET" = board ]; then
    [ "$(id -u)" = 0 ] || die "run as root (sudo): the checks drive the UART and the GPIO lines"
    need=()
    command -v python3 > /dev/null || need+=(python3)
    if [ "$METHOD" = gpio ] || [ "$METHOD" = l76x ]; then command -v gpioset > /dev/null || need+=(gpiod); fi
    if [ ${#need[@]} -gt 0 ]; then
        apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null \
            || die "could not install ${need[*]} (apt-get update first? offline?)"
    fi
    if systemctl is-active --quiet tern 2> /dev/null; then
        [ -n "$SERVICE" ] || die "the tern service is running and holds the receiver: sudo systemctl stop tern (start it again afterwards)"
        echo "hil: stopping the tern service for the receiver checks (the scheduler check starts it)" >&2
        systemctl stop tern
    fi
    T=$(find_tern)
    [ -n "$DEVICE" ] && CHECK_ARGS+=(--device "$DEVICE")
    [ -n "$INTERACTIVE" ] && CHECK_ARGS+=("$INTERACTIVE")
    [ -n "$SERVICE" ] && CHECK_ARGS+=(--service)
    [ -n "$UPLINK_URL" ] && CHECK_ARGS+=(--uplink-url "$UPLINK_URL")
    [ -n "$UNPLUG_CMD" ] && CHECK_ARGS+=(--unplug-cmd "$UNPLUG_CMD" --replug-cmd "${REPLUG_CMD:?--unplug-cmd needs --replug-cmd}")
    exec python3 "$HERE/checks.py" --profile "$PROFILE_FILE" --tern "$T" --work /tmp/tern-hil-checks "${CHECK_ARGS[@]}"
fi

# ---------------------------------------------------------------- an emulated Raspberry Pi (QEMU raspi3b)
if [ "$TARGET" = emulated-pi ]; then
    exec "$HERE/pi/run-pi.sh" "$PROFILE_FILE" "$METHOD" "$LINE" "$BAUD" "$MINUTES" "$DEB" "$ONLY" "$POWER_CUTS" "$SKIP"
fi

# ---------------------------------------------------------------- the emulated board (QEMU)
case $METHOD in
    gpio) [ "$LINE" != - ] || die "--emulated: the profile's power.line must be an offset or GPIO<n>" ;;
    pmtk-standby|ubx-backup|none) LINE="" ;;
    *) die "--emulated cannot emulate power.method '$METHOD' (the simulator has gpio, pmtk-standby and ubx-backup): run it on a Pi with --board" ;;
esac
# shellcheck source=common.sh
source "$HERE/common.sh"
command -v qemu-system-x86_64 > /dev/null || not_run "qemu-system-x86_64 is missing: run board/hil/setup.sh (apt-get install qemu-system-x86)"
if [ ! -f "$KERNEL" ] || [ ! -f "$INITRD" ] || [ ! -f "$GPIOSIM_KO" ]; then
    echo "hil: the rig is not set up in $HIL_DIR: running board/hil/setup.sh (log: $HIL_DIR/setup.log)" >&2
    mkdir -p "$HIL_DIR"
    "$HERE/setup.sh" > "$HIL_DIR/setup.log" 2>&1 \
        || { tail -5 "$HIL_DIR/setup.log" >&2; not_run "board/hil/setup.sh failed (no kernel source package or QEMU?): see $HIL_DIR/setup.log"; }
fi
T=$(find_tern)
# The guest sees the host's / read-only but mounts its own tmpfs on /tmp: whatever lives under /tmp
# (a CI checkout, say) is staged into $HIL_DIR, which the guest mounts at the same path.
STAGE=$HIL_DIR/uart-$(basename "$PROFILE_FILE" .toml)
rm -rf "$STAGE"; mkdir -p "$STAGE"
cp "$HERE/checks.py" "$HERE/sim-receiver.py" "$HERE/guest-uart-checks.sh" "$PROFILE_FILE" "$STAGE/"
GUEST_PROFILE=$STAGE/$(basename "$PROFILE_FILE")
case $T in /tmp/*|/run/*|/var/tmp/*) cp "$T" "$STAGE/tern"; T=$STAGE/tern ;; esac
CHECK_ARGS+=(--tern "$T")
echo plugged > "$STAGE/cable"
: > "$STAGE/report.txt"; : > "$STAGE/progress.txt"

BRIDGE_PID=""
cleanup() {
    [ -n "$BRIDGE_PID" ] && kill "$BRIDGE_PID" 2> /dev/null || true
    [ -n "${TAIL_PID:-}" ] && kill "$TAIL_PID" 2> /dev/null || true
}
trap cleanup EXIT
python3 "$HERE/uart-bridge.py" --control "$STAGE/cable" "$STAGE/ttyS1-backend" "$STAGE/ttyS2-backend" \
    > "$STAGE/bridge.log" 2>&1 &
BRIDGE_PID=$!
for _ in $(seq 100); do [ -e "$STAGE/ttyS2-backend" ] && break; sleep 0.05; done
[ -e "$STAGE/ttyS2-backend" ] || die "uart-bridge.py did not start: $(cat "$STAGE/bridge.log")"

# The kernel command line splits on spaces: the guest gets one wrapper script without arguments.
WRAPPER=$STAGE/run-checks.sh
{
    echo '#!/bin/sh'
    printf 'export HIL_STAGE=%q HIL_PROFILE=%q HIL_LINE_OFFSET=%q\n' "$STAGE" "$GUEST_PROFILE" "$LINE"
    # HIL_SIM_ARGS adds simulator options, e.g. HIL_SIM_ARGS="--baud 4800" to see the uart check fail
    # The simulated receiver's first fixes converge (8 m, then half as far each second), so the firstfix
    # check has something to measure; its starts are kept short to fit CI.
    printf 'export HIL_SIM_ARGS=%q\n' "--baud $BAUD --first-fix-error 8 ${HIL_SIM_ARGS:-}"
    printf 'export HIL_CHECK_ARGS=%q\n' "${CHECK_ARGS[*]} --first-fix-off 10 --first-fix-settle 35 --first-fix-settled 20"
    printf 'exec %q\n' "$STAGE/guest-uart-checks.sh"
} > "$WRAPPER"
chmod +x "$WRAPPER"
echo "hil: emulated board, profile $(basename "$PROFILE_FILE" .toml) (power: $METHOD${LINE:+, line $LINE}), $BAUD baud, tern $T, tern run for $MINUTES min" >&2
START=$SECONDS
tail -n +1 -F "$STAGE/report.txt" 2> /dev/null &
TAIL_PID=$!
tail -n +1 -F "$STAGE/progress.txt" 2> /dev/null >&2 &
TAIL2_PID=$!
set +e
HIL_TIMEOUT=$(python3 -c "print(int($MINUTES * 60 + 420 + $FIRST_FIX_CYCLES * 60 + 10))") MEM=${MEM:-512M} "$HERE/run-vm.sh" "$WRAPPER" \
    -chardev serial,id=u1,path="$STAGE/ttyS1-backend" -serial chardev:u1 \
    -chardev serial,id=u2,path="$STAGE/ttyS2-backend" -serial chardev:u2 > "$STAGE/console.log" 2>&1
rc=$?
set -e
sleep 0.5
kill "$TAIL_PID" "$TAIL2_PID" 2> /dev/null || true
wait "$TAIL_PID" "$TAIL2_PID" 2> /dev/null || true
TAIL_PID=""
echo "hil: emulated run took $((SECONDS - START)) s; logs in $STAGE (report.txt, tern-run.log, firstfix.csv, sim.log, bridge.log, console.log)" >&2
if ! grep -q . "$STAGE/report.txt"; then
    tail -20 "$STAGE/console.log" "$STAGE/progress.txt" >&2
    echo "hil: the guest produced no report (exit $rc): see $STAGE/console.log" >&2
    exit 2
fi
case $rc in
    0|1) exit "$rc" ;;
    *) echo "hil: the checks could not run in the guest (exit $rc): see $STAGE/progress.txt and console.log" >&2; exit 2 ;;
esac
