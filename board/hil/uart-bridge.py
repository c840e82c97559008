#!/usr/bin/env python3
# Copied from the team's HIL recipe (shared notes, hil/uart-bridge.py, not part of this repository); added: --control FILE (the guest pulls
# the cable through the shared $HIL_DIR), garbled bytes when the two ends' speeds differ.
"""Null-modem cable between two QEMU '-chardev serial,path=...' backends that enforces the baud rate.
QEMU copies the guest's 8250 line settings (speed, CSIZE, parity, stop bits) onto the host tty it
was given; this bridge reads them back with tcgetattr and releases each byte only after one
frame time (start + data + parity + stop bits at the sender's speed). Mismatched speeds are logged.
SIGUSR1 toggles the cable: while unplugged, bytes sent by either side are dropped (a real UART with
nothing attached just transmits into the void; the reader sees silence, no HUP/EIO).
The cable can also be pulled by writing "unplugged" (and put back with "plugged") into the
--control FILE, which the guest sees through the writable 9p share. When the two ends' speeds differ,
the bytes arrive garbled (as a UART sampling at the wrong rate sees them) so a baud mismatch shows as
bad checksums, not as clean data.
--speed-a BAUD: end A's speed, for a QEMU UART model that does not pass the guest's line settings
to the host tty (the raspi3b's PL011): its bytes are paced at BAUD, and a mismatch cannot be seen.
usage: uart-bridge.py [--control FILE] [--speed-a BAUD] LINK_A LINK_B   (symlinks to the two pty slaves)"""
import os, sys, pty, termios, time, threading, signal
SPEEDS = {getattr(termios, n): int(n[1:]) for n in dir(termios) if n.startswith("B") and n[1:].isdigit()}
def frame(fd):
    if speed_a and fd == ends[0][1]:
        return speed_a, 10                           # 8N1 at the fixed speed
    a = termios.tcgetattr(fd); c = a[2]
    bits = {termios.CS5: 5, termios.CS6: 6, termios.CS7: 7, termios.CS8: 8}[c & termios.CSIZE]
    n = 1 + bits + (1 if c & termios.PARENB else 0) + (2 if c & termios.CSTOPB else 1)
    return SPEEDS.get(a[5], 0), n
ends = []
plugged = True
args = sys.argv[1:]
control = None
speed_a = None
while args[:1] in (["--control"], ["--speed-a"]):
    if args[0] == "--control":
        control = args[1]
    else:
        speed_a = int(args[1])
    args = args[2:]
def watch_control():
    global plugged
    last = None
    while True:
        try: want = open(control).read().strip()
        except OSError: want = "plugged"
        if want != last and want in ("plugged", "unplugged"):
            if (want == "plugged") != plugged: toggle()
            last = want
        time.sleep(0.02)
def toggle(*_):
    global plugged
    plugged = not plugged; print("bridge: cable %s" % ("plugged" if plugged else "UNPLUGGED"), flush=True)
signal.signal(signal.SIGUSR1, toggle)
for link in args[0:2]:
    m, s = pty.openpty(); tty_name = os.ttyname(s)
    try: os.unlink(link)
    except FileNotFoundError: pass
    os.symlink(tty_name, link); ends.append((m, s, link))
    print("bridge: %s -> %s" % (link, tty_name), flush=True)
def relay(src, dst, name):
    (sm, ss, _), (dm, ds, _) = src, dst
    nxt = time.monotonic()
    while True:
        try: buf = os.read(sm, 4096)
        except OSError: time.sleep(0.05); continue   # EIO while QEMU has not opened the slave yet
        if not plugged: continue
        baud, nbits = frame(ss); rbaud, _ = frame(ds)
        if baud and rbaud and baud != rbaud:
            print("bridge %s: speed mismatch %d vs %d" % (name, baud, rbaud), flush=True)
            buf = bytes(((c * 7) ^ 0xA5) & 0xFF for c in buf)   # what a UART at the wrong rate decodes
        per = nbits / baud if baud else 0.0
        i = 0; nxt = max(nxt, time.monotonic())
        while i < len(buf):                          # release bytes as their stop bit 'arrives'
            now = time.monotonic()
            due = len(buf) - i if per == 0 else min(len(buf) - i, int((now - nxt) / per) + 1)
            if due <= 0: time.sleep(nxt - now); continue
            os.write(dm, buf[i:i + due]); i += due; nxt += due * per
            if per and i < len(buf): time.sleep(max(0.0, nxt - time.monotonic()))
for a, b, n in ((0, 1, "A->B"), (1, 0, "B->A")):
    threading.Thread(target=relay, args=(ends[a], ends[b], n), daemon=True).start()
if control: threading.Thread(target=watch_control, daemon=True).start()
signal.signal(signal.SIGTERM, lambda *_: (os.unlink(ends[0][2]), os.unlink(ends[1][2]), os._exit(0)))
while True: signal.pause()
