#!/usr/bin/env bash
# One command to the emulated Pi's QEMU monitor for the rig (WORK/control.sock, made by boot.sh):
#   board/hil/pi/monitor.sh WORK "set_link net0 on"
# Prints the monitor's answer; exit 1 if QEMU is not there.
set -euo pipefail
python3 - "$1/control.sock" "$2" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
for _ in range(100):
    try:
        s.connect(sys.argv[1])
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("monitor.sh: no QEMU monitor at %s" % sys.argv[1])
s.settimeout(10)
out = b""
while b"(qemu)" not in out:
    out += s.recv(4096)
s.sendall(sys.argv[2].encode() + b"\n")
out = b""
while out.count(b"(qemu)") < 1:
    out += s.recv(4096)
print(out.decode(errors="replace").replace("(qemu)", "").strip().split("\n", 1)[-1] if b"\n" in out else "")
PY
