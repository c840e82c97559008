#!/usr/bin/env bash
# Checks that a binary loads on its target release: every symbol version it needs from libc,
# libstdc++ and the other libraries it links (its .gnu.version_r) must be defined by that library
# in the release's sysroot (its .gnu.version_d), as the dynamic loader will check on the Pi.
#
#   deploy/cross/glibc-floor.sh BINARY SYSROOT
#
# Prints the highest GLIBC_ and GLIBCXX_ versions the binary needs and what the release has; exits 1
# naming each version the release lacks (e.g. a binary needing GLIBC_2.38 on bookworm's 2.36).
set -euo pipefail
BINARY=${1:?usage: glibc-floor.sh BINARY SYSROOT}
SYSROOT=${2:?usage: glibc-floor.sh BINARY SYSROOT}
command -v readelf >/dev/null || { echo "glibc-floor.sh: readelf not found: apt-get install binutils" >&2; exit 2; }
exec python3 - "$BINARY" "$SYSROOT" <<'PY'
import os, re, subprocess, sys

binary, sysroot = sys.argv[1], sys.argv[2]

def readelf(path):
    return subprocess.run(["readelf", "-V", "-W", path], check=True, capture_output=True, text=True).stdout

def needs(path):  # {library: {version, ...}} from .gnu.version_r
    out, lib = {}, None
    for line in readelf(path).splitlines():
        if m := re.search(r"File: (\S+)", line):
            lib = m[1]
        elif lib and (m := re.search(r"Name: (\S+)\s+Flags", line)):
            out.setdefault(lib, set()).add(m[1])
    return out

def defines(path):  # versions a library defines (.gnu.version_d)
    section = readelf(path).split("Version definition section", 1)
    if len(section) < 2:
        return set()
    body = section[1].split("Version needs section", 1)[0]
    return set(re.findall(r"Name: (\S+)", body)) | set(re.findall(r"Parent \d+: (\S+)", body))

def find(lib):
    for d in ("usr/lib/aarch64-linux-gnu", "lib/aarch64-linux-gnu", "usr/lib/x86_64-linux-gnu", "usr/lib"):
        p = os.path.join(sysroot, d, lib)
        if os.path.exists(p):
            return os.path.realpath(p)
    return None

def key(v):
    return [int(x) for x in re.findall(r"\d+", v)]

missing, highest = [], {}
for lib, versions in sorted(needs(binary).items()):
    path = find(lib)
    if path is None:
        missing.append(f"{lib} (not in the sysroot)")
        continue
    have = defines(path)
    for v in versions:
        family = re.sub(r"_[\d.]+$", "", v)
        if re.match(r".*_\d", v) and key(v) > key(highest.get(family, "0")):
            highest[family] = v
        if v not in have:
            missing.append(f"{v} from {lib}")
    family = {"libc.so.6": "GLIBC", "libstdc++.so.6": "GLIBCXX"}.get(lib)
    top = max((v for v in have if re.fullmatch(rf"{family}_[\d.]+", v)), key=key, default=None) if family else None
    if top:
        print(f"release's {lib} defines up to {top}")
for family in ("GLIBC", "GLIBCXX"):
    if family in highest:
        print(f"{os.path.basename(binary)} needs up to {highest[family]}")
if missing:
    print(f"glibc-floor.sh: {binary} will not load on this release: it needs " + ", ".join(sorted(missing))
          + ". Build for a newer release, or against this release's sysroot.", file=sys.stderr)
    sys.exit(1)
print("glibc floor: ok")
PY
