#!/bin/sh
# Runs INSIDE the QEMU guest (see run.sh --emulated): builds the emulated board, then runs the same
# checks as on a Pi (checks.py) against it.
#   - a gpio-sim chip shaped like the Pi's header bank: 32 lines, line 4 named GPIO4, line 17 GPIO17
#     (so board profiles' `chip = "gpiochip0"`, `line = 17` or "GPIO17" work unchanged);
#   - the simulated receiver (sim-receiver.py) on /dev/ttyS2, a real 16550 whose bytes cross the host
#     through uart-bridge.py at the real baud rate to /dev/ttyS1, Tern's side; for a gpio profile it
#     watches the power line's level as the board would see it (sim_gpioN/value).
# Environment (from the wrapper run.sh writes): HIL_STAGE, HIL_PROFILE, HIL_SIM_ARGS, HIL_LINE_OFFSET,
# HIL_CHECK_ARGS. Output: $HIL_STAGE/report.txt (stdout of checks.py), progress.txt, sim.log.
set -eu
S=$HIL_STAGE
ip link set lo up
CFG=/sys/kernel/config/gpio-sim/tern-hil
mkdir -p $CFG/bank0/line4 $CFG/bank0/line17
echo 32 > $CFG/bank0/num_lines
echo tern-hil-sim > $CFG/bank0/label
echo GPIO4 > $CFG/bank0/line4/name
echo GPIO17 > $CFG/bank0/line17/name
echo 1 > $CFG/live
CHIP=$(cat $CFG/bank0/chip_name)
SIMDIR=/sys/devices/platform/$(cat $CFG/dev_name)/$CHIP
echo "gpio-sim: $CHIP ($(ls /dev/gpiochip*)), /dev/ttyS1 <-> /dev/ttyS2 through the host bridge" > "$S/progress.txt"
SIM_GPIO=""
CHECK_GPIO=""
if [ -n "${HIL_LINE_OFFSET:-}" ]; then
    SIM_GPIO="--power-gpio $SIMDIR/sim_gpio$HIL_LINE_OFFSET/value"
    CHECK_GPIO="--line-value-file $SIMDIR/sim_gpio$HIL_LINE_OFFSET/value"
fi
# shellcheck disable=SC2086
/usr/bin/python3 "$S/sim-receiver.py" --device /dev/ttyS2 $SIM_GPIO --state-log /tmp/sim-state.log \
    $HIL_SIM_ARGS 2> "$S/sim.log" &
SIM=$!
sleep 1
rc=0
# shellcheck disable=SC2086
/usr/bin/python3 "$S/checks.py" --profile "$HIL_PROFILE" --device /dev/ttyS1 --work /tmp/hil-checks \
    $CHECK_GPIO --sim-state-log /tmp/sim-state.log \
    --unplug-cmd "echo unplugged > $S/cable" --replug-cmd "echo plugged > $S/cable" \
    $HIL_CHECK_ARGS > "$S/report.txt" 2>> "$S/progress.txt" || rc=$?
kill $SIM 2>/dev/null || true
cp /tmp/hil-checks/tern-run.log /tmp/hil-checks/tern-hil.toml /tmp/hil-checks/firstfix.csv /tmp/sim-state.log "$S/" 2>/dev/null || true
cat /proc/tty/driver/serial >> "$S/progress.txt"
exit $rc
