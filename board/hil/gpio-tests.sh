#!/usr/bin/env bash
# Host entry point: builds the test bundle, then runs GPIOPowerSwitchTests inside the QEMU guest
# against a real kernel gpiochip (gpio-sim), with libgpiod from the host. Run by .ci/run after the unit tests.
# usage: board/hil/gpio-tests.sh     (run board/hil/setup.sh once first)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
swift build --build-tests --package-path "$REPO"
BIN=$(swift build --show-bin-path --package-path "$REPO")
XCTEST=$(find "$BIN/" -maxdepth 1 -name '*PackageTests.xctest' | head -1)
[ -n "$XCTEST" ] || { echo "gpio-tests: no test bundle in $BIN" >&2; exit 1; }
# shellcheck source=common.sh
source "$HERE/common.sh"
# The kernel command line splits on spaces: hand the guest one wrapper script without arguments.
WRAPPER="$HIL_DIR/run-gpio-tests.sh"
mkdir -p "$HIL_DIR"
printf '#!/bin/sh\nexec %q %q\n' "$HERE/guest-gpio-tests.sh" "$XCTEST" > "$WRAPPER"
chmod +x "$WRAPPER"
exec "$HERE/run-vm.sh" "$WRAPPER"
