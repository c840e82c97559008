#!/bin/sh
# Runs INSIDE the guest (busybox sh): creates a gpio-sim chip with a line named GPS_POWER, then
# runs the GPIO tests of the host-built test bundle against it ($1: the .xctest path).
set -e
XCTEST=$1
CFG=/sys/kernel/config/gpio-sim/tern
mkdir -p $CFG/bank0/line3
echo 8 > $CFG/bank0/num_lines
echo tern-sim > $CFG/bank0/label
echo GPS_POWER > $CFG/bank0/line3/name
echo 1 > $CFG/live
CHIP=$(cat $CFG/bank0/chip_name)
echo "gpio-sim live: $CHIP ($(ls /dev/gpiochip*))"
# The simulated receiver's view of its supply pin, for tests that want to check the level.
export TERN_HIL_GPIO_SIM_VALUE=/sys/devices/platform/$(cat $CFG/dev_name)/$CHIP/sim_gpio3/value
export TERN_HIL_GPIO_CHIP=$CHIP TERN_HIL_GPIO_LINE=GPS_POWER
"$XCTEST" --testing-library swift-testing --filter GPIOPowerSwitchTests
