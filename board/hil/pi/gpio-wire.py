#!/usr/bin/env python3
"""The wire from the emulated Pi's GPIO pin to the simulated receiver's supply.

QEMU's raspi3b emulates the BCM2837's GPIO block, but its pins go nowhere. This reads the pin's level
the way the hardware shows it, from outside the guest: the GPLEV0/1 registers (0x3f200034/38),
through QEMU's monitor (`xp`, a read of the device's register), every --period seconds (default
0.01), and writes it as "1"/"0" to --out (what sim-receiver.py --power-gpio reads as the receiver's
supply). Each change is logged to stderr as `<unix time> GPIO<n> <0|1>`. The guest cannot tell it is watched.
usage: gpio-wire.py --monitor WORK/monitor.sock --line 17 --out FILE [--period 0.01]
"""
import argparse, os, re, socket, sys, time

GPLEV = 0x3F200034  # GPLEV0 (lines 0-31); GPLEV1 for 32-53 is 4 bytes on


class Monitor:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.buf = b""
        self._until_prompt()

    def _until_prompt(self):
        while b"(qemu) " not in self.buf:
            chunk = self.s.recv(4096)
            if not chunk:
                raise EOFError("QEMU's monitor closed (QEMU exited)")
            self.buf += chunk
        out, self.buf = self.buf.split(b"(qemu) ", 1)
        return out

    def word(self, addr):
        self.s.sendall(b"xp /1wx 0x%x\n" % addr)
        out = self._until_prompt().decode(errors="replace")
        m = re.search(r"%x:\s*0x([0-9a-fA-F]+)" % addr, out)
        if not m:
            raise ValueError("unexpected monitor answer %r" % out)
        return int(m.group(1), 16)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--monitor", required=True)
    p.add_argument("--line", type=int, required=True, help="BCM GPIO number (0-53)")
    p.add_argument("--out", required=True)
    # each read stops QEMU's main loop for a moment: 10 ms is well inside any check's tolerance
    p.add_argument("--period", type=float, default=0.01)
    a = p.parse_args()
    for _ in range(600):
        try:
            mon = Monitor(a.monitor)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("gpio-wire: no QEMU monitor at %s" % a.monitor)
    addr, bit = GPLEV + 4 * (a.line // 32), a.line % 32
    last = None
    while True:
        try:
            level = (mon.word(addr) >> bit) & 1
        except EOFError:
            return
        if level != last:
            tmp = a.out + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % level)
            os.replace(tmp, a.out)
            print("%.3f GPIO%d %d" % (time.time(), a.line, level), file=sys.stderr, flush=True)
            last = level
        time.sleep(a.period)


if __name__ == "__main__":
    main()
