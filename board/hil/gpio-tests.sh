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
# The guest sees the host's / read-only but mounts its own tmpfs on /tmp, so a checkout under /tmp
# (as CI's may be) is invisible there: copy the guest script and the test bundle into $HIL_DIR,
# which the guest mounts at the same path.
STAGE="$HIL_DIR/stage"
mkdir -p "$STAGE"
cp "$HERE/guest-gpio-tests.sh" "$STAGE/"
cp "$XCTEST" "$STAGE/TernPackageTests.xctest"
# The kernel command line splits on spaces: hand the guest one wrapper script without arguments.
WRAPPER="$HIL_DIR/run-gpio-tests.sh"
printf '#!/bin/sh\nexec %q %q\n' "$STAGE/guest-gpio-tests.sh" "$STAGE/TernPackageTests.xctest" > "$WRAPPER"
chmod +x "$WRAPPER"
exec "$HERE/run-vm.sh" "$WRAPPER"
