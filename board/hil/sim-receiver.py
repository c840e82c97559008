#!/usr/bin/env python3
"""Simulated GPS receiver (MediaTek MT3339-like, with a u-blox UBX subset) on a real serial port.

Runs on the far end of the emulated board's UART (inside the QEMU guest on /dev/ttyS2, joined to
Tern's /dev/ttyS1 through board/hil/uart-bridge.py, which paces every byte at the real baud rate).

- Output: at 1 Hz, aligned to the UTC second, an MT3339 cycle (GGA, GSA, GSV x3, RMC, VTG) dated now
  (UTC), paced at the line's frame time so "on the wire" here means on the wire.
- Power: --power-gpio FILE is the receiver's supply as the board sees it (gpio-sim's
  sim_gpioN/value, 1 = powered unless --active-low). Without it the supply is always on.
  Powering off flushes what was not sent yet (a receiver without power sends nothing).
- Commands: `$PMTK<cmd>,...*CS` is answered `$PMTK001,<cmd>,3*CS` (known command), `,1`
  (unknown: invalid). A bad checksum is ignored, as the MT3339 does. `$PMTK161,0` acks, then
  standby: no output until any byte arrives. `$PMTK225,4` (backup) likewise. UBX: CFG-* and
  known frames get ACK-ACK, unknown CFG ids ACK-NAK; RXM-PMREQ (02 41) enters backup until
  UART activity.
- Starts: the first fix after power-on/wake comes after a TTFF that depends on how long the
  receiver was off: hot (<= --hot-max-off, default 30 min: 1-2 s), warm (<= 4 h: 30 s), cold
  (longer, or never had a fix with --initial cold: 35 s). The backup domain (coin cell) is
  assumed present: off time does not lose the ephemeris below those limits.
- --first-fix-error M: the fixes of a start converge as a receiver's navigation filter does: the
  first is M metres off in a direction drawn per start, each next one half as far (default 0: none).
- --speed M/S: the receiver drives due east at that speed (RMC/VTG report it), or with --radius R
  clockwise round a circle of R metres (a block); default parked.
- --state-log FILE: one line per state change, `<unix time> <state> <reason>`, state on/off
  (for the HIL's comparison of Tern's power log with what the receiver really did).
usage: sim-receiver.py --device /dev/ttyS2 --baud 9600 [--power-gpio F [--active-low]] [--state-log F]
"""
import argparse, math, os, random, select, signal, sys, termios, time, tty

BAUDS = {4800: termios.B4800, 9600: termios.B9600, 19200: termios.B19200, 38400: termios.B38400,
         57600: termios.B57600, 115200: termios.B115200}
PMTK_KNOWN = {"000", "101", "102", "103", "104", "161", "220", "225", "251", "253", "300", "301",
              "313", "314", "319", "352", "353", "386", "397", "401", "413", "414", "605", "869",
              "183", "184", "185", "186", "187", "286", "355"}


def cs(body: str) -> str:
    x = 0
    for ch in body.encode():
        x ^= ch
    return "%02X" % x


def sentence(body: str) -> bytes:
    return ("$%s*%s\r\n" % (body, cs(body))).encode()


def ubx(cls: int, mid: int, payload: bytes = b"") -> bytes:
    msg = bytes([cls, mid, len(payload) & 0xFF, len(payload) >> 8]) + payload
    a = b = 0
    for c in msg:
        a = (a + c) & 0xFF
        b = (b + a) & 0xFF
    return b"\xb5\x62" + msg + bytes([a, b])


class Receiver:
    def __init__(self, a):
        self.a = a
        self.fd = os.open(a.device, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.fd)
        t = termios.tcgetattr(self.fd)
        t[2] |= termios.CLOCAL | termios.CREAD
        t[4] = t[5] = BAUDS[a.baud]
        termios.tcsetattr(self.fd, termios.TCSANOW, t)
        termios.tcflush(self.fd, termios.TCIOFLUSH)
        self.frame = 10.0 / a.baud
        self.supply = None            # supply as last read from the line
        self.sleep = None             # None, "standby" (PMTK161), "backup" (PMTK225,4 / UBX PMREQ)
        self.on = False               # supply and not asleep: the engine runs
        now = time.time()
        # when the engine last stopped with a valid ephemeris (None: never had a fix)
        self.last_valid = None if a.initial == "cold" else now
        self.fix_at = None
        self.rx = b""
        self.busy_until = time.monotonic()
        self.lat, self.lon = a.lat, a.lon
        self.t0 = time.time()
        self.log = open(a.state_log, "a", buffering=1) if a.state_log else None
        self.last_cycle = None
        self.start_bearing = 0.0      # the direction of this start's first-fix error (--first-fix-error)

    def note(self, state, why):
        if self.log:
            self.log.write("%.3f %s %s\n" % (time.time(), state, why))
        print("sim: %.3f %s (%s)" % (time.time(), state, why), file=sys.stderr, flush=True)

    def read_supply(self):
        if not self.a.power_gpio:
            return True
        try:
            with open(self.a.power_gpio) as f:
                v = f.read().strip() == "1"
        except OSError:
            return False
        return (not v) if self.a.active_low else v

    def ttff(self, now):
        if self.last_valid is None:
            return self.a.cold_s, "cold"
        off = now - self.last_valid
        if off <= self.a.hot_max_off:
            return self.a.hot_s + random.uniform(0, 1.0), "hot"
        if off <= 4 * 3600:
            return self.a.warm_s, "warm"
        return self.a.cold_s, "cold"

    def update(self, why):
        now = time.time()
        on = bool(self.supply) and self.sleep is None
        if on == self.on:
            return
        self.on = on
        if on:
            t, kind = self.ttff(now)
            self.fix_at = now + t
            self.start_bearing = random.uniform(0, 2 * math.pi)
            self.note("on", "%s; %s start, fix in %.1f s" % (why, kind, t))
        else:
            if self.fix_at is not None and now >= self.fix_at:
                self.last_valid = now
            self.fix_at = None
            if why.startswith("supply"):
                termios.tcflush(self.fd, termios.TCOFLUSH)   # no power: nothing more leaves
            self.note("off", why)

    def send(self, data: bytes):
        """Writes and paces: returns once the bytes would have left at the line's rate."""
        mv = memoryview(data)
        while mv:
            try:
                n = os.write(self.fd, mv)
                mv = mv[n:]
            except BlockingIOError:
                select.select([], [self.fd], [], 0.05)
        self.busy_until = max(self.busy_until, time.monotonic()) + len(data) * self.frame

    def handle_input(self):
        try:
            data = os.read(self.fd, 4096)
        except (BlockingIOError, OSError):
            return
        if not data:
            return
        if self.supply and self.sleep is not None:   # any byte wakes it
            self.sleep = None
            self.update("woken by UART activity")
        if not self.supply:
            return                                   # unpowered: deaf
        self.rx = (self.rx + data)[-4096:]
        while True:
            i_n, i_u = self.rx.find(b"$"), self.rx.find(b"\xb5\x62")
            cand = [i for i in (i_n, i_u) if i >= 0]
            if not cand:
                self.rx = b""
                return
            i = min(cand)
            self.rx = self.rx[i:]
            if self.rx.startswith(b"$"):
                j = self.rx.find(b"\n")
                if j < 0:
                    return
                line, self.rx = self.rx[:j].strip(), self.rx[j + 1:]
                self.nmea_command(line.decode("ascii", "replace"))
            else:
                if len(self.rx) < 8:
                    return
                n = self.rx[4] | (self.rx[5] << 8)
                if len(self.rx) < 8 + n:
                    return
                frame, self.rx = self.rx[:8 + n], self.rx[8 + n:]
                if ubx(frame[2], frame[3], frame[6:6 + n]) == frame:
                    self.ubx_command(frame[2], frame[3], frame[6:6 + n])

    def nmea_command(self, line):
        if "*" not in line:
            return
        body, _, c = line[1:].partition("*")
        if c.upper() != cs(body) or not body.startswith("PMTK"):
            return                                    # bad checksum: ignored, as the MT3339 does
        f = body[4:].split(",")
        cmd = f[0]
        ok = cmd in PMTK_KNOWN
        self.send(sentence("PMTK001,%s,%d" % (cmd, 3 if ok else 1)))
        if not ok:
            return
        if cmd == "605":
            self.send(sentence("PMTK705,AXN_2.31_3339_13101700,5632,PA6H,1.0"))
        elif cmd == "161" and f[1:2] == ["0"]:
            self.sleep = "standby"
            self.update("PMTK161,0 standby")
        elif cmd == "225" and f[1:2] == ["4"]:
            self.sleep = "backup"
            self.update("PMTK225,4 backup")
        elif cmd in ("103", "104"):
            self.last_valid = None
            self.on = False
            self.update("cold restart")

    def ubx_command(self, cls, mid, payload):
        if cls == 0x02 and mid == 0x41:               # RXM-PMREQ: no ack, enter backup
            self.sleep = "backup"
            self.update("UBX RXM-PMREQ backup")
            return
        if cls == 0x06:
            ok = mid in (0x00, 0x01, 0x04, 0x08, 0x09, 0x11, 0x24, 0x3B, 0x3E, 0x86)
            self.send(ubx(0x05, 0x01 if ok else 0x00, bytes([cls, mid])))
        elif cls == 0x0A and mid == 0x04:             # MON-VER
            self.send(ubx(0x0A, 0x04, b"ROM CORE 3.01 (107888)\0\0\0\0\0\0\0\0".ljust(30, b"\0")
                          + b"00080000\0\0"))

    def cycle(self, now):
        fix = self.fix_at is not None and now >= self.fix_at
        # a slow wander, so consecutive fixes differ a little, as a parked receiver's do
        t = time.gmtime(now + self.a.time_offset)     # the receiver's UTC (--time-offset: not this machine's)
        hms = time.strftime("%H%M%S", t) + ".000"
        dmy = time.strftime("%d%m%y", t)
        lat = self.lat + 0.00002 * math.sin(now / 60.0)
        lon = self.lon + 0.00002 * math.cos(now / 60.0)
        # --speed: driving since the simulator started, due east or (--radius) round a block
        metres_per_deg_lon = 111320.0 * math.cos(math.radians(self.lat))
        knots, course = (self.a.speed * 1.943844, 90.0) if self.a.speed else (0.02, 31.66)
        if self.a.speed and self.a.radius:
            angle = self.a.speed * (now - self.t0) / self.a.radius      # clockwise from north of the centre
            lat += self.a.radius * (math.cos(angle) - 1) / 111320.0
            lon += self.a.radius * math.sin(angle) / metres_per_deg_lon
            course = math.degrees(angle + math.pi / 2) % 360.0
        else:
            lon += self.a.speed * (now - self.t0) / metres_per_deg_lon
        if fix and self.a.first_fix_error:
            off = self.a.first_fix_error * 0.5 ** max(0, math.floor(now - self.fix_at))
            lat += off * math.cos(self.start_bearing) / 111320.0
            lon += off * math.sin(self.start_bearing) / metres_per_deg_lon

        def dm(v, w):
            a = abs(v)
            d = int(a)
            return "%0*d%07.4f" % (w, d, (a - d) * 60)
        la, ns = dm(lat, 2), ("N" if lat >= 0 else "S")
        lo, ew = dm(lon, 3), ("E" if lon >= 0 else "W")
        if fix:
            out = [
                "GPGGA,%s,%s,%s,%s,%s,1,08,0.95,45.3,M,47.2,M,," % (hms, la, ns, lo, ew),
                "GPGSA,A,3,02,05,12,14,15,24,25,29,,,,,1.65,0.95,1.35",
            ]
        else:
            out = ["GPGGA,%s,,,,,0,00,,,M,,M,," % hms, "GPGSA,A,1,,,,,,,,,,,,,,,"]
        sats = [(2, 45, 60, 38), (5, 30, 120, 35), (12, 62, 200, 41), (14, 15, 310, 28),
                (15, 20, 40, 30), (24, 55, 250, 40), (25, 10, 170, 22), (29, 70, 90, 44),
                (31, 5, 330, 0), (32, 12, 280, 18), (18, 8, 10, 0)]
        n = len(sats)
        pages = (n + 3) // 4
        for p in range(pages):
            parts = ["GPGSV", str(pages), str(p + 1), "%02d" % n]
            for s in sats[p * 4:p * 4 + 4]:
                parts += ["%02d" % s[0], "%02d" % s[1], "%03d" % s[2],
                          ("%02d" % s[3]) if (s[3] and fix) else ""]
            out.append(",".join(parts))
        if fix:
            out.append("GPRMC,%s,A,%s,%s,%s,%s,%.2f,%.2f,%s,,,A" % (hms, la, ns, lo, ew, knots, course, dmy))
            out.append("GPVTG,%.2f,T,,M,%.2f,N,%.2f,K,A" % (course, knots, knots * 1.852))
        else:
            out.append("GPRMC,%s,V,,,,,0.00,0.00,%s,,,N" % (hms, dmy))
            out.append("GPVTG,,T,,M,0.00,N,0.00,K,N")
        return [sentence(b) for b in out]

    def run(self):
        pending = []
        next_tick = math.floor(time.time()) + 1.0
        while True:
            self.handle_input()
            s = self.read_supply()
            if s != self.supply:
                self.supply = s
                if not s:
                    self.sleep = None                 # losing the supply clears standby/backup
                self.update("supply %s" % ("on" if s else "off"))
                if not s:
                    pending = []
            now = time.time()
            if now >= next_tick:
                if self.on:
                    pending = self.cycle(next_tick)
                next_tick = math.floor(now) + 1.0
            if pending and self.on and time.monotonic() >= self.busy_until:
                self.send(pending.pop(0))             # one sentence at a time: a power-off can cut in
            elif not self.on:
                pending = []
            wait = 0.01
            if pending and self.on:
                wait = max(0.0, min(wait, self.busy_until - time.monotonic()))
            select.select([self.fd], [], [], wait)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", required=True)
    p.add_argument("--baud", type=int, default=9600, choices=sorted(BAUDS))
    p.add_argument("--power-gpio", help="file with the supply line's level (gpio-sim sim_gpioN/value)")
    p.add_argument("--active-low", action="store_true")
    p.add_argument("--state-log")
    p.add_argument("--initial", choices=["hot", "cold"], default="hot",
                   help="hot: the backup domain holds a recent fix at start (default)")
    p.add_argument("--hot-max-off", type=float, default=1800.0, help="longest off time for a hot start (s)")
    p.add_argument("--hot-s", type=float, default=1.0)
    p.add_argument("--warm-s", type=float, default=30.0)
    p.add_argument("--cold-s", type=float, default=35.0)
    p.add_argument("--lat", type=float, default=52.520008)
    p.add_argument("--lon", type=float, default=13.404954)
    p.add_argument("--first-fix-error", type=float, default=0.0,
                   help="m: a start's first fix this far off, each next one half as far (default 0)")
    p.add_argument("--speed", type=float, default=0.0,
                   help="m/s due east (default 0: parked, wandering a metre or two)")
    p.add_argument("--radius", type=float, default=0.0,
                   help="with --speed: drive clockwise round a circle of this radius (m) instead")
    p.add_argument("--time-offset", type=float, default=0.0,
                   help="s added to this machine's clock for the UTC the receiver reports (the emulated Pi's "
                        "first-boot check: only the receiver can then be the guest's time source)")
    a = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    Receiver(a).run()


if __name__ == "__main__":
    main()
