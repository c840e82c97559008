#!/usr/bin/env bash
# Proves that the arm64 build behaves as the amd64 build does, running it under qemu-user
# (qemu-aarch64-static, the release's arm64 sysroot as its library root):
#   - `tern --version` runs;
#   - `tern nmea decode --stats` prints byte-identical output on every corpus log;
#   - `tern replay --json` gives identical counts on every corpus log;
#   - `tern config check` gives the same exit code and output on every board profile;
#   - `tern demo --duration 5m --json` passes (every accepted position delivered exactly once).
#
#   deploy/cross/same-behaviour.sh ARM64_TERN AMD64_TERN SYSROOT
#
# Exit 1 naming every difference. Needs qemu-user-static (apt-get install qemu-user-static).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ARM=${1:?usage: same-behaviour.sh ARM64_TERN AMD64_TERN SYSROOT}
AMD=${2:?usage: same-behaviour.sh ARM64_TERN AMD64_TERN SYSROOT}
SYSROOT=${3:?usage: same-behaviour.sh ARM64_TERN AMD64_TERN SYSROOT}
QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64) ||
    { echo "same-behaviour.sh: no qemu-aarch64: apt-get install qemu-user-static" >&2; exit 2; }
arm() { "$QEMU" -L "$SYSROOT" "$ARM" "$@"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=()
differ() { failures+=("$1"); echo "DIFFERENT: $1" >&2; }

echo "==> arm64: $(arm --version)"
echo "==> amd64: $("$AMD" --version)"

logs=(Tests/TernNMEATests/Corpus/*.log)
decoded=0 replayed=0
for log in "${logs[@]}"; do
    name=$(basename "$log")
    arm nmea decode --stats "$log" > "$work/arm.out" 2> "$work/arm.err"; a=$?
    "$AMD" nmea decode --stats "$log" > "$work/amd.out" 2> "$work/amd.err"; b=$?
    if [ "$a" = "$b" ] && cmp -s "$work/arm.out" "$work/amd.out" && cmp -s "$work/arm.err" "$work/amd.err"; then
        decoded=$((decoded + 1))
    else
        differ "nmea decode $name (exit $a vs $b)"
        diff "$work/arm.out" "$work/amd.out" | head -5 >&2
    fi
    arm replay --json "$log" > "$work/arm.out" 2>/dev/null; a=$?
    "$AMD" replay --json "$log" > "$work/amd.out" 2>/dev/null; b=$?
    if [ "$a" = "$b" ] && cmp -s "$work/arm.out" "$work/amd.out"; then
        replayed=$((replayed + 1))
    else
        differ "replay $name (exit $a vs $b)"
        diff "$work/arm.out" "$work/amd.out" | head -5 >&2
    fi
done
echo "==> nmea decode: $decoded of ${#logs[@]} logs byte-identical; replay: $replayed of ${#logs[@]} identical"

profiles=(board/*.toml)
checked=0
for profile in "${profiles[@]}"; do
    arm config check "$profile" > "$work/arm.out" 2>&1; a=$?
    "$AMD" config check "$profile" > "$work/amd.out" 2>&1; b=$?
    if [ "$a" = "$b" ] && cmp -s "$work/arm.out" "$work/amd.out"; then
        checked=$((checked + 1))
        echo "    config check $(basename "$profile"): exit $a on both"
    else
        differ "config check $(basename "$profile") (exit $a vs $b)"
        diff "$work/arm.out" "$work/amd.out" | head -5 >&2
    fi
done
echo "==> config check: $checked of ${#profiles[@]} board profiles the same"

echo "==> arm64: tern demo --duration 5m --json"
if arm demo --duration 5m --json --data-dir "$work/demo" > "$work/demo.json"; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("    demo:", {k: d[k] for k in list(d)[:8]})' "$work/demo.json" 2>/dev/null || true
else
    differ "tern demo --duration 5m failed on arm64 (exit $?)"
    tail -20 "$work/demo.json" >&2
fi

if [ "${#failures[@]}" -gt 0 ]; then
    echo "same-behaviour.sh: ${#failures[@]} difference(s) between arm64 and amd64:" >&2
    printf '  %s\n' "${failures[@]}" >&2
    exit 1
fi
echo "same behaviour on arm64 and amd64: ok"
