#!/usr/bin/env bash
# Held-out NMEA conformance: Tern against gpsd on the NMEA logs of gpsd 3.22's regression suite that
# are NOT in Tests/TernNMEATests/Corpus (45 logs), with gpsd's own expected output (.chk) as truth.
# Fetches gpsd's Debian source package (needs apt's deb-src for bookworm; added here if missing),
# builds tern if needed, prints a per-log table, the totals and a JSON line.
#     Tests/HeldOut/run.sh [--out DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=${TERN_HELDOUT_WORK:-/tmp/tern-gpsd-src}
if [ ! -d "$work"/gpsd-3.22/test/daemon ]; then
    mkdir -p "$work"
    if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > /etc/apt/sources.list.d/tern-deb-src.sources
        apt-get update -qq
    fi
    (cd "$work" && apt-get source -qq --download-only gpsd=3.22-4.1+deb12u1 && tar xf gpsd_3.22.orig.tar.xz)
fi
(cd "$repo" && swift build --product tern >/dev/null)
exec python3 "$here/heldout.py" --tern "$repo/.build/debug/tern" --gpsd-tests "$work/gpsd-3.22/test/daemon" "$@"
