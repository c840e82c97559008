#!/usr/bin/env python3
"""Tern's hardware-in-the-loop checks: the same code on a Raspberry Pi with a HAT (board/hil/run.sh
--board PROFILE) and on the emulated board inside the QEMU guest (run.sh --emulated). Only what
the target is (UART device, how the power line is observed, how the cable is pulled) comes in as
arguments; the checks themselves do not know which target they run on.

Checks, each printed as `ok`, `FAIL` or `skip (reason)`:
  uart       the receiver talks at the profile's baud: framing errors < 1 % of bytes (the UART
             driver's own counter), checksum-valid sentences >= 99 %
  power      powering off (the profile's method) stops sentences within 1 s; powering on resumes
             them, and the first fix after a short off period is a hot start (<= 5 s); method gpio:
             the line's level, read without tern, follows (a level that cannot be read is a FAIL)
  commands   a good receiver command is acknowledged on the wire (PMTK001 flag 3 / UBX ACK-ACK),
             a bad one is refused (PMTK001 flag 1 / ACK-NAK), through `tern receiver send`
  unplug     the cable pulled and put back: `tern nmea tail` is showing fixes again within 5 s
  scheduler  `tern run` cycles the receiver for N minutes; every transition of the power line,
             sampled independently, is in tern's power log within 100 ms, and no extra ones (method
             gpio: a line that cannot be sampled is a FAIL; methods without an independent view: skip)
  doctor     `tern doctor` on the running daemon: exit 0, or 2 (warnings only, listed)
  firstfix   a measurement, asked for with --first-fix-cycles N: N hot starts of the still receiver
             (--first-fix-off s off each time), each fix's distance from the settled position (the
             median of every fix --first-fix-settled s or more after a start's first fix), by how
             long after that first fix it came; prints the warm-up (`filter.warm_up`) from which the
             fix then taken is as good as a settled one, and writes every fix to WORK/firstfix.csv.
             ok once measured, FAIL when no start got a fix, skip when not asked or not switchable
Exit status: 0 no FAIL, 1 any FAIL, 2 the checks could not start (named cause).
"""
import argparse, collections, http.server, json, math, os, pty, re, select, shutil, signal, subprocess, sys, termios
import threading, time, tomllib, tty

BAUDS = {4800: termios.B4800, 9600: termios.B9600, 19200: termios.B19200, 38400: termios.B38400,
         57600: termios.B57600, 115200: termios.B115200}
FIX_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")      # a fix printed by `tern nmea tail`
# `tern run` with log_level debug: "[TernHardware] GPS power on" on a terminal, "GPS power on component=…"
# under systemd (the journal)
POWER_LOG = re.compile(r"\bGPS power (on|off)\b")
# swift-service-lifecycle's line when the stop's SIGTERM/SIGINT reaches the daemon.
SIGNAL_LOG = re.compile(r"\bSignal caught\b")


def nmea_ok(line: bytes) -> bool:
    m = re.match(rb"^\$([^*$]*)\*([0-9A-Fa-f]{2})$", line)
    if not m:
        return False
    x = 0
    for c in m.group(1):
        x ^= c
    return x == int(m.group(2), 16)


def is_fix(line: bytes) -> bool:
    f = line.split(b"*")[0].split(b",")
    if f[0].endswith(b"RMC") and len(f) > 2:
        return f[2] == b"A"
    if f[0].endswith(b"GGA") and len(f) > 6:
        return f[6] not in (b"", b"0")
    return False


def gga_position(line: bytes):
    """(lat, lon, hdop) of a GGA with a fix, else None (hdop None when the field is empty)."""
    f = line.split(b"*")[0].split(b",")
    if not f[0].endswith(b"GGA") or len(f) < 9 or f[6] in (b"", b"0") or not f[2] or not f[4]:
        return None
    try:
        lat = int(f[2][:2]) + float(f[2][2:]) / 60.0
        lon = int(f[4][:3]) + float(f[4][3:]) / 60.0
        hdop = float(f[8]) if f[8] else None
    except ValueError:
        return None
    return (-lat if f[3] == b"S" else lat), (-lon if f[5] == b"W" else lon), hdop


def metres_between(a, b):
    """Equirectangular distance of two (lat, lon) in metres: exact enough within a few km."""
    k = 6371008.8 * math.pi / 180.0
    return math.hypot((b[0] - a[0]) * k, (b[1] - a[1]) * k * math.cos(math.radians((a[0] + b[0]) / 2)))


def nearest_rank(values, p):
    """Percentile p (0-1) by nearest rank over sorted values: rank round(p (n - 1)), ties away from zero,
    as Tern's Statistics (Swift's rounded(); Python's round() would take ties to even)."""
    v = sorted(values)
    return v[int(math.floor(p * (len(v) - 1) + 0.5))] if v else None


FIRST_FIX_WARM_UPS = (0.0, 1.0, 2.0, 3.0, 5.0, 10.0)


def first_fix_report(sessions, settled_after, warm_ups=FIRST_FIX_WARM_UPS, tolerance=1.5, floor_m=1.0):
    """Scores hot starts of a still receiver. sessions: per start, its fixes as (age_s, lat, lon, hdop),
    age counted from that start's first fix. The settled position is the median latitude and longitude
    of every fix at age >= settled_after; a fix's error is its distance from it. For each warm-up W:
    the error of each start's first fix at age >= W (what the scheduler takes once warmed up). The
    suggested warm-up is the shortest W whose p95 of those errors is within `tolerance` x the settled
    fixes' own p95 (at least floor_m): from then on a start's fix is as good as a settled one.
    Returns None when there are no settled fixes to compare with."""
    settled = [(la, lo) for fixes in sessions for age, la, lo, _ in fixes if age >= settled_after]
    if not settled:
        return None
    ref = (nearest_rank([p[0] for p in settled], 0.5), nearest_rank([p[1] for p in settled], 0.5))
    spread = [metres_between(ref, p) for p in settled]
    settled_p95 = nearest_rank(spread, 0.95)
    by_index = []                                   # the k-th fix of each start
    for k in range(5):
        errs = [metres_between(ref, (f[k][1], f[k][2])) for f in sessions if len(f) > k]
        hdops = [f[k][3] for f in sessions if len(f) > k and f[k][3] is not None]
        if errs:
            by_index.append({"fix": k + 1, "starts": len(errs), "median_m": nearest_rank(errs, 0.5),
                             "worst_m": max(errs), "hdop_median": nearest_rank(hdops, 0.5)})
    by_warm_up, suggested = [], None
    bar = max(tolerance * settled_p95, floor_m)
    for w in warm_ups:
        taken = [next((metres_between(ref, (la, lo)) for age, la, lo, _ in f if age >= w), None) for f in sessions]
        taken = [e for e in taken if e is not None]
        if not taken:
            continue
        p95 = nearest_rank(taken, 0.95)
        by_warm_up.append({"warm_up_s": w, "starts": len(taken), "median_m": nearest_rank(taken, 0.5), "p95_m": p95})
        if suggested is None and p95 <= bar:
            suggested = w
    return {"reference": ref, "settled_fixes": len(settled), "settled_median_m": nearest_rank(spread, 0.5),
            "settled_p95_m": settled_p95, "bar_m": bar, "by_index": by_index, "by_warm_up": by_warm_up,
            "suggested_warm_up_s": suggested}


def ubx(cls, mid, payload=b""):
    msg = bytes([cls, mid, len(payload) & 0xFF, len(payload) >> 8]) + payload
    a = b = 0
    for c in msg:
        a = (a + c) & 0xFF
        b = (b + a) & 0xFF
    return b"\xb5\x62" + msg + bytes([a, b])


def duration(s, default):
    if s is None:
        return default
    if isinstance(s, (int, float)):
        return float(s)
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$", str(s))
    if not m:
        return default
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


class Port:
    """The receiver's UART, read by a thread: every line with the arrival time of its last byte."""

    def __init__(self, dev, baud):
        self.fd = os.open(dev, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.fd)
        t = termios.tcgetattr(self.fd)
        t[2] |= termios.CLOCAL | termios.CREAD
        t[4] = t[5] = BAUDS[baud]
        termios.tcsetattr(self.fd, termios.TCSANOW, t)
        termios.tcflush(self.fd, termios.TCIFLUSH)
        self.lines, self.chunks, self.nbytes = [], [], 0
        self.lock = threading.Lock()
        self.stop = False
        self.buf = b""
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        while not self.stop:
            r, _, _ = select.select([self.fd], [], [], 0.1)
            if not r:
                continue
            try:
                d = os.read(self.fd, 4096)
            except OSError:
                time.sleep(0.05)
                continue
            now = time.time()
            with self.lock:
                self.nbytes += len(d)
                self.chunks.append((now, len(d)))
                self.buf += d
                while b"\n" in self.buf:
                    ln, self.buf = self.buf.split(b"\n", 1)
                    ln = ln.strip(b"\r\x00")
                    if ln:
                        self.lines.append((now, ln))

    def write(self, data):
        os.write(self.fd, data)

    def since(self, t0):
        with self.lock:
            return [(t, l) for t, l in self.lines if t >= t0]

    def wait_for(self, pred, t0, timeout):
        end = time.time() + timeout
        while time.time() < end:
            for t, l in self.since(t0):
                if pred(l):
                    return t, l
            time.sleep(0.05)
        return None, None

    def close(self):
        self.stop = True
        self.th.join(1)
        os.close(self.fd)


def uart_errors(dev):
    """(rx bytes, framing errors) from the driver's counters (/proc/tty/driver/serial for 8250/16550,
    /proc/tty/driver/ttyAMA for the Pi's PL011), or None when the driver does not say."""
    name = os.path.basename(os.path.realpath(dev))
    m = re.match(r"^(ttyS|ttyAMA)(\d+)$", name)
    if not m:
        return None
    path = "/proc/tty/driver/" + ("serial" if m.group(1) == "ttyS" else "ttyAMA")
    try:
        text = open(path).read()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(m.group(2) + ":"):
            rx = re.search(r"\brx:(\d+)", line)
            fe = re.search(r"\bfe:(\d+)", line)
            return int(rx.group(1)) if rx else 0, int(fe.group(1)) if fe else 0
    return None


class Gpio:
    """Holds GPIO lines with the libgpiod command-line tools (v1: gpioset --mode=signal; v2: gpioset
    holds by default), one process per held line; a line is given as an offset or a name."""

    def __init__(self, chip):
        self.chip = chip
        self.held = {}
        try:
            v = subprocess.run(["gpioset", "--version"], capture_output=True, text=True).stdout
        except FileNotFoundError:
            raise SystemExit("checks: gpioset missing: install Debian's gpiod package (apt-get install gpiod)")
        self.v2 = bool(re.search(r"\(libgpiod\) v2\.", v))

    def offset(self, line):
        if isinstance(line, int) or str(line).isdigit():
            return str(line)
        if self.v2:
            return str(line)
        out = subprocess.run(["gpiofind", str(line)], capture_output=True, text=True).stdout.split()
        if len(out) != 2:
            raise RuntimeError("no GPIO line named %s (gpioinfo lists them)" % line)
        return out[1]

    def set(self, line, value):
        self.release(line)
        off = self.offset(line)
        cmd = (["gpioset", "-c", self.chip, "%s=%d" % (off, value)] if self.v2 else
               ["gpioset", "--mode=signal", self.chip, "%s=%d" % (off, value)])
        self.held[line] = subprocess.Popen(cmd)
        time.sleep(0.05)
        if self.held[line].poll() is not None:
            raise RuntimeError("gpioset %s %s=%d failed (line busy? `gpioinfo %s`)" % (self.chip, off, value, self.chip))

    def pulse(self, line, value, seconds):
        self.set(line, value)
        time.sleep(seconds)
        self.release(line)

    def release(self, line=None):
        for k in ([line] if line is not None else list(self.held)):
            p = self.held.pop(k, None)
            if p:
                p.terminate()
                p.wait()


class Power:
    """The profile's power method, driven without tern (so tern can be checked against it)."""

    def __init__(self, prof, gpio_factory):
        self.p = prof.get("power", {})
        self.method = self.p.get("method", "none")
        self.port = None
        self.gpio = None
        if self.method in ("gpio", "l76x"):
            self.gpio = gpio_factory(self.p.get("chip", "gpiochip0"))

    def describe(self):
        m = self.method
        if m == "gpio":
            return "gpio line %s on %s%s" % (self.p.get("line"), self.p.get("chip", "gpiochip0"),
                                               " (active low)" if self.p.get("active_low") else "")
        if m == "l76x":
            return "L76X STANDBY line %s / FORCE_ON line %s (sleep=%s)" % (
                self.p.get("standby_line"), self.p.get("force_on_line"), self.p.get("sleep", "backup"))
        return {"pmtk-standby": "$PMTK161,0 standby", "ubx-backup": "UBX RXM-PMREQ backup"}.get(m, m)

    def switchable(self):
        return self.method in ("gpio", "l76x", "pmtk-standby", "ubx-backup")

    def on(self):
        m = self.method
        if m == "gpio":
            self.gpio.set(self.p["line"], 0 if self.p.get("active_low") else 1)
        elif m == "l76x":
            self.gpio.set(self.p["standby_line"], 1)
            self.gpio.pulse(self.p["force_on_line"], 1, 0.2)
        elif m == "pmtk-standby" and self.port:
            self.port.write(b"$PMTK000*32\r\n")          # any byte wakes it
        elif m == "ubx-backup" and self.port:
            self.port.write(b"\xff" * 8)                 # UART activity wakes it

    def off(self):
        m = self.method
        if m == "gpio":
            self.gpio.set(self.p["line"], 1 if self.p.get("active_low") else 0)
        elif m == "l76x":
            if self.p.get("sleep", "backup") == "standby":
                self.gpio.set(self.p["standby_line"], 0)
            elif self.port:
                self.port.write(b"$PMTK225,4*2F\r\n")
        elif m == "pmtk-standby" and self.port:
            self.port.write(b"$PMTK161,0*28\r\n")
        elif m == "ubx-backup" and self.port:
            self.port.write(ubx(0x02, 0x41, bytes(4) + bytes([2, 0, 0, 0])))

    def release(self):
        if self.gpio:
            self.gpio.release()


class LineSampler:
    """Samples the receiver's real power state every `period` s, independently of tern. Each
    transition is (time, state, since): it happened after `since` (the start of the last read that
    still saw the old state) and before `time` (the end of the read that saw the new one). On a busy
    machine a read can come late; the interval says how well the moment is known, and the
    scheduler check cannot judge a transition known to less than TRANSITION_LIMIT. So, run as root, the
    sampling thread asks for real-time priority (SCHED_FIFO) and the interpreter for a short GIL
    switch interval while it samples: a read is then late only when the machine itself stalls."""

    def __init__(self, read, period=0.01):
        self.read, self.period = read, period
        self.trans, self.stop, self.samples, self.valid = [], False, 0, 0
        self.state = self.initial = read()
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        try:                                           # this thread only (Linux: pid 0 = the caller)
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
            self.realtime = True
        except (OSError, AttributeError):
            self.realtime = False
        sys.setswitchinterval(0.0005)
        last_seen = time.time()
        while not self.stop:
            before = time.time()
            s = self.read()
            after = time.time()
            self.samples += 1
            self.valid += s is not None
            if s is not None and self.state is None:
                self.state = s
            if s is not None and s != self.state:
                self.trans.append((after, "on" if s else "off", last_seen))
                self.state = s
            if s is not None:
                last_seen = before
            time.sleep(self.period)

    def finish(self):
        self.stop = True
        self.th.join(2)
        sys.setswitchinterval(0.005)
        return self.trans


DEBUGFS_GPIO = "/sys/kernel/debug/gpio"
# /sys/kernel/debug/gpio (drivers/gpio/gpiolib.c, gpiolib_seq_show + gpiolib_dbg_show), one section per chip:
#   Linux <= 6.16  "gpiochip0: GPIOs 512-565, parent: platform/3f200000.gpio, pinctrl-bcm2835:"
#                  and its lines by global number, base + offset (dynamic bases start at 512 since 6.2,
#                  were counted down from ARCH_NR_GPIOS before, so 0-53 or 458-511 on older kernels)
#   Linux >= 6.17  "gpiochip0: 54 GPIOs, parent: ..." and its lines by offset (commit 1bec20dfa3d8)
# A line is listed while it is requested, " gpio-529 (GPIO17              |tern                ) out hi ACTIVE LOW"
# (name|consumer, direction, the raw level, "IRQ ", "ACTIVE LOW"), or with its name only while free.
# A chip's driver may print its lines its own way (gpio_chip.dbg_show); the Pi's pinctrl-bcm2835,
# brcmstb and gpio-sim use the generic one. A "(dbg)" tag before "GPIOs" is tolerated, though no
# source read for this (mainline gpiolib.c and its 2024-2025 patches, the format strings in Debian's
# 6.1 and 6.12 kernel images) prints one.
DEBUGFS_CHIP = re.compile(r"^(\S+): (?:\(dbg\) )?(?:GPIOs (\d+)-(\d+)|(\d+) GPIOs)(.*?):?\s*$")
DEBUGFS_DANGLING = re.compile(r"^(\S+): \(dangling chip\)")
DEBUGFS_LINES = (re.compile(r"^\s*gpio-(\d+)\s+\((.{20})(?:(\|)(.{20}))?\)(.*)$"),    # "(%-20.20s|%-20.20s)"
                 re.compile(r"^\s*gpio-(\d+)\s+\(([^|)]*)(?:(\|)([^)]*))?\)(.*)$"))
DEBUGFS_STATE = re.compile(r"^\s+(in|out)\s+(hi|lo|\?)(\s.*)?$")
GpioLevel = collections.namedtuple("GpioLevel", "offset name consumer direction high active_low")


class GpioDebugfsError(Exception):
    """/sys/kernel/debug/gpio cannot say the line's level: missing, another chip, another format."""


def chip_matches(chip, dev, fields):
    """The profile's chip (gpiochipN, N, /dev/gpiochipN or the chip's label, as tern opens it)
    against a debugfs section's device name and its header fields."""
    c = str(chip)
    return c in (dev, "/dev/" + dev) or (c.isdigit() and "gpiochip" + c == dev) or c in fields

TRANSITION_LIMIT = 0.1   # s: tern's logged moment must be this close to the line's change, and the change
                         # must be known this well (a sampler stalled longer cannot judge it)


def began(tr):
    """When a line transition may have begun: `since` for a sampled one, its time for a point."""
    return tr[2] if len(tr) > 2 else tr[0]


def compare_transitions(line_tr, tern_tr, t_start, limit=TRANSITION_LIMIT):
    """One-to-one, in order: the k-th transition on the line against the k-th in tern's power log.
    line_tr: (time, state[, since]) from LineSampler (the change happened between since and time) or
    a state log (a point); tern_tr: (time, state). Returns (problems, unjudged, worst gap s, worst
    interval s). A transition sampled wider than `limit` is not judged (tern's moment anywhere inside
    the interval would score a gap of 0): it is listed in `unjudged`, and the check cannot be ok."""
    problems, unjudged, worst, resolution = [], [], 0.0, 0.0
    for k in range(max(len(line_tr), len(tern_tr))):
        if k >= len(line_tr):
            problems.append("tern logged power %s at +%.1f s, the line did not change" % (tern_tr[k][1], tern_tr[k][0] - t_start))
            continue
        if k >= len(tern_tr):
            problems.append("the line went %s at +%.1f s, tern did not log it" % (line_tr[k][1], line_tr[k][0] - t_start))
            continue
        (tl, sl), (tt, st) = line_tr[k][:2], tern_tr[k]
        since = began(line_tr[k])
        d = since - tt if tt < since else max(0.0, tt - tl)
        worst, resolution = max(worst, d), max(resolution, tl - since)
        if tl - since > limit:
            unjudged.append("the line went %s between +%.3f and +%.3f s: the sampler saw it only to %.0f ms, "
                            "more than the %.0f ms limit, so tern's %s at +%.3f s cannot be judged (a stalled sampler: "
                            "a loaded machine)" % (sl, since - t_start, tl - t_start, (tl - since) * 1000, limit * 1000,
                                                  st, tt - t_start))
        elif sl != st or d > limit:
            problems.append("line %s between +%.3f and +%.3f s vs tern %s at +%.3f s" % (sl, since - t_start, tl - t_start, st, tt - t_start))
    return problems, unjudged, worst, resolution


def split_at_stop(line_tr, tern_tr, t_stop, t_signal=None):
    """The transitions before the daemon was told to stop, and what the stop did. The stop's power-off
    is the daemon's answer to SIGTERM, not a decision of the scheduler, and its log line is timed
    only by its arrival: under systemd the journal stamps stderr lines as it receives them, and at a
    stop it receives the service's last lines in a burst behind systemd's own (0.3 s late, measured
    on the emulated Pi). So it is checked for being there and for its state, not for its moment.
    The signal reaches the service some time after the request (0.4 s on the emulated Pi): a power
    change tern logged before it logged catching the signal (`t_signal`, on the same clock as its
    power log) was the scheduler's, racing the request, and is judged with the others.
    Returns (line before, tern before, problems, detail)."""
    line_before = [t for t in line_tr if began(t) < t_stop]
    tern_before = [t for t in tern_tr if t[0] < t_stop]
    if t_signal is not None:
        raced = [t for t in tern_tr[len(tern_before):] if t[0] < t_signal]
        tern_before += raced
        line_before = line_tr[:len(line_before) + len(raced)]
    line_after, tern_after = line_tr[len(line_before):], tern_tr[len(tern_before):]
    problems = []
    if [t[1] for t in line_after] != [t[1] for t in tern_after] or any(t[1] != "off" for t in line_after):
        problems.append("at the stop the line went %s and tern logged %s (want one off each, or nothing if off)" % (
            "/".join(t[1] for t in line_after) or "nowhere", "/".join(t[1] for t in tern_after) or "nothing"))
    if not line_after:
        detail = "the receiver was off when the daemon stopped"
    else:
        detail = "the stop switched the receiver off %.0f ms after the stop request" % (
            max(0.0, began(line_after[0]) - t_stop) * 1000)
    return line_before, tern_before, problems, detail


def hardening_problems(status_text, user, uid):
    """What /proc/PID/status of the service's main process says against its hardened unit: it runs
    as `user` (uid), with no_new_privs, a seccomp filter (mode 2) and no effective capability."""
    fields = dict(l.split(":", 1) for l in status_text.splitlines() if ":" in l)
    f = {k: v.strip() for k, v in fields.items()}
    problems = []
    uids = f.get("Uid", "").split()
    if not uids or any(u != str(uid) for u in uids):
        problems.append("runs as uid %s, not %s (%d)" % ("/".join(uids) or "?", user, uid))
    if f.get("NoNewPrivs") != "1":
        problems.append("NoNewPrivs %s, not 1" % f.get("NoNewPrivs", "missing"))
    if f.get("Seccomp") != "2":
        problems.append("Seccomp %s, not 2 (a filter)" % f.get("Seccomp", "missing"))
    if f.get("CapEff", "").strip("0") != "":
        problems.append("CapEff %s, not empty" % f.get("CapEff", "missing"))
    return problems


def parse_debugfs_gpio(text, chip, line):
    """The level of `line` (an offset, or a line name such as "GPIO17") on `chip` in the text of
    /sys/kernel/debug/gpio, as a GpioLevel (high: the raw level, None when the chip could not read
    it), or None while nothing holds the line (the kernel lists a line's level only while it is
    requested). Raises GpioDebugfsError when the text has no chip section this parser knows, the
    chip is not there, or the line's entry is in a format it does not know."""
    want = int(line) if isinstance(line, int) or str(line).isdigit() else None
    sections, chips, inchip = 0, [], False
    base = count = None
    found, foreign = None, []
    for raw in text.splitlines():
        h = DEBUGFS_CHIP.match(raw)
        d = DEBUGFS_DANGLING.match(raw)
        if h or d:
            sections += 1
            dev = (h or d).group(1)
            fields = [f.strip() for f in h.group(5).split(",")] if h else []
            chips.append(dev)
            inchip = bool(h) and chip_matches(chip, dev, fields)
            if inchip:
                if found is not None:
                    raise GpioDebugfsError("two chips match %r in %s: name the chip by its gpiochipN" % (chip, DEBUGFS_GPIO))
                found = []
                if h.group(2) is not None:
                    base, count = int(h.group(2)), int(h.group(3)) - int(h.group(2)) + 1
                else:
                    base, count = None, int(h.group(4))
            continue
        if inchip and raw.strip():
            found.append(raw)
    if not text.strip():
        raise GpioDebugfsError("%s is empty: the kernel has registered no GPIO chip" % DEBUGFS_GPIO)
    if not sections:
        head = next((l for l in text.splitlines() if l.strip()), "")
        raise GpioDebugfsError("%s has no chip header this checker knows (first line %r): a new kernel format? "
                               "board/hil/checks.py parse_debugfs_gpio reads 'gpiochipN: GPIOs A-B, …:' "
                               "(Linux <= 6.16) and 'gpiochipN: N GPIOs, …:' (>= 6.17)" % (DEBUGFS_GPIO, head[:80]))
    if found is None:
        raise GpioDebugfsError("no chip %r in %s (it lists %s): check [power] chip against `gpiodetect`"
                               % (chip, DEBUGFS_GPIO, ", ".join(chips) or "no chips"))
    for raw in found:
        m = DEBUGFS_LINES[0].match(raw) or DEBUGFS_LINES[1].match(raw)
        if not m:
            foreign.append(raw.strip())
            continue
        n, name, held, rest = int(m.group(1)), m.group(2).strip(), m.group(3), m.group(5)
        consumer = (m.group(4) or "").strip()
        # global numbers under a range header; offsets under a count header (or from a driver's own
        # dbg_show that prints them)
        if base is not None and base <= n < base + count:
            offset = n - base
        elif n < count:
            offset = n
        else:
            foreign.append(raw.strip())
            continue
        if (offset != want) if want is not None else (str(line) not in (name, consumer)):
            continue
        if not held and not rest.strip():
            return None                      # listed by its name only: free
        s = DEBUGFS_STATE.match(rest)
        if not s:
            raise GpioDebugfsError("%s line %s is listed in a format this checker does not know: %r (a chip driver's "
                                   "own debugfs output?)" % (chip, line, raw.strip()))
        return GpioLevel(offset, name, consumer, s.group(1), {"hi": True, "lo": False}.get(s.group(2)),
                         "ACTIVE LOW" in (s.group(3) or ""))
    if foreign and len(foreign) == len(found):
        raise GpioDebugfsError("%s's lines in %s are in a format this checker does not know (%r): a chip driver's own "
                               "debugfs output?" % (chip, DEBUGFS_GPIO, foreign[0]))
    return None


class DebugfsLine:
    """The power line as the kernel drives it, read from /sys/kernel/debug/gpio while tern (or gpioset)
    holds it: `read()` is True (on), False (off) or None, and then `problem` says why. Not gpioget:
    it would have to request the line tern holds (busy), and gpioinfo shows no level."""

    def __init__(self, chip, line, active_low, path=DEBUGFS_GPIO):
        self.chip, self.line, self.active_low, self.path = chip, line, active_low, path
        self.problem, self.mount_error, self.problems, self.mount_tried = None, None, collections.Counter(), False

    def describe(self):
        return "the line's level (%s)" % self.path

    def read(self):
        state = self._read()
        if state is None:
            self.problems[self.problem] += 1
        return state

    def worst(self):
        """The most frequent reason a read found no level."""
        return self.problems.most_common(1)[0][0] if self.problems else self.problem

    def _read(self):
        if self.path == DEBUGFS_GPIO and not self.mount_tried and not os.path.exists(self.path):
            self.mount_tried = True
            r = subprocess.run(["mount", "-t", "debugfs", "none", "/sys/kernel/debug"], capture_output=True, text=True)
            if r.returncode != 0:
                self.mount_error = (r.stderr or r.stdout).strip() or "exit %d" % r.returncode
        try:
            with open(self.path) as f:
                text = f.read()
        except FileNotFoundError:
            self.problem = ("no %s: debugfs is not mounted%s; run the checks as root, or `sudo mount -t debugfs none "
                            "/sys/kernel/debug` (the kernel needs CONFIG_DEBUG_FS)" % (
                                self.path, " (mount failed: %s)" % self.mount_error if self.mount_error else ""))
            return None
        except OSError as e:
            self.problem = "%s unreadable (%s): run the checks as root (debugfs is root's only)" % (self.path, e.strerror)
            return None
        try:
            lv = parse_debugfs_gpio(text, self.chip, self.line)
        except GpioDebugfsError as e:
            self.problem = str(e)
            return None
        if lv is None:
            self.problem = ("%s line %s is not listed as held in %s (it shows a line's level only while a process "
                            "requests it; `gpioinfo %s` shows who holds it): check [power] chip and line"
                            % (self.chip, self.line, self.path, self.chip))
            return None
        if lv.high is None:
            self.problem = "%s line %s: the chip could not read its level ('?')" % (self.chip, self.line)
            return None
        self.problem = None
        return lv.high != self.active_low


class ValueFileLine:
    """The power line's level from a file holding 0 or 1 (the emulated board: gpio-sim's sim_gpioN/value)."""

    def __init__(self, path, active_low):
        self.path, self.active_low, self.problem = path, active_low, None

    def describe(self):
        return "the line's level (%s)" % self.path

    def read(self):
        try:
            with open(self.path) as f:
                self.problem = None
                return (f.read().strip() == "1") != self.active_low
        except OSError as e:
            self.problem = "%s unreadable (%s)" % (self.path, e.strerror)
            return None

    def worst(self):
        return self.problem


class Collector(http.server.BaseHTTPRequestHandler):
    """A local uplink for tern run (the HIL is about the receiver): answers 200 to everything."""
    received = 0

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Collector.received += 1
        try:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
        except OSError:
            pass

    do_GET = do_POST

    def do_HEAD(self):
        self.send_response(200)
        self.end_headers()

    def log_message(self, *a):
        pass


def hil_config(profile_text, overrides, sections):
    """The profile with HIL overrides: top-level keys, keys per section, and whole sections replaced."""
    out, section, seen = [], "", set()

    def flush_section(sec):
        for (s, k), v in overrides.items():
            if s == sec and (s, k) not in seen:
                out.append("%s = %s" % (k, json.dumps(v)))
                seen.add((s, k))
    for line in profile_text.splitlines():
        m = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
        if m:
            flush_section(section)
            section = m.group(1).strip()
            out.append(line)
            if section in sections:
                for k, v in sections[section].items():
                    out.append("%s = %s" % (k, json.dumps(v)))
            continue
        if section in sections:
            continue
        k = re.match(r"^\s*#?\s*([A-Za-z_]+)\s*=", line)
        if k and (section, k.group(1)) in overrides:
            if line.lstrip().startswith("#") and (section, k.group(1)) in seen:
                continue
            out.append("%s = %s" % (k.group(1), json.dumps(overrides[(section, k.group(1))])))
            seen.add((section, k.group(1)))
            continue
        out.append(line)
    flush_section(section)
    # top-level keys must come before the first table
    top = [l for (s, k), v in overrides.items() if s == "" and (s, k) not in seen for l in ["%s = %s" % (k, json.dumps(v))]]
    return "\n".join(top + out) + "\n"


def memory_of(pid):
    """VmRSS, RssAnon and VmHWM of a process, from /proc/PID/status."""
    try:
        text = open("/proc/%d/status" % pid).read()
    except (OSError, TypeError):
        return None
    got = dict(re.findall(r"^(VmRSS|RssAnon|VmHWM):\s+(\d+) kB", text, re.M))
    return "VmRSS %s kB, RssAnon %s kB, VmHWM %s kB" % (got.get("VmRSS", "?"), got.get("RssAnon", "?"), got.get("VmHWM", "?"))


class ProcessDaemon:
    """`tern run --config CFG` as a child of the checks (a Pi's --board run, the emulated board)."""
    name = "tern run"

    def __init__(self, tern, work):
        self.tern, self.config_path = tern, os.path.join(work, "tern-hil.toml")
        self.log_path = os.path.join(work, "tern-run.log")
        self.proc = None

    def write_config(self, text):
        with open(self.config_path, "w") as f:
            f.write(text)

    def restore_config(self):
        pass

    def hardening(self):
        """None: `tern run` as root has no unit whose sandbox the check could hold it to."""
        return None

    def start(self, cfg, on_line):
        logf = open(self.log_path, "w")
        self.proc = subprocess.Popen([self.tern, "run", "--config", cfg], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def read_log():
            for raw in self.proc.stderr:
                now = time.time()
                line = raw.decode(errors="replace").rstrip()
                logf.write("%.3f %s\n" % (now, line))
                on_line(now, line)
            logf.close()
        self.reader = threading.Thread(target=read_log, daemon=True)
        self.reader.start()
        return None

    def alive(self):
        return self.proc.poll() is None

    def exit_description(self):
        return "exited with %d" % self.proc.returncode

    def memory(self):
        return memory_of(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.reader.join(5)
                return "tern run did not stop within 20 s of SIGTERM"
        self.reader.join(5)
        return None


class ServiceDaemon:
    """The installed service (systemctl, its hardened unit, User=tern) with the HIL settings in
    /etc/tern/tern.toml (the original is put back afterwards); its log comes from the journal."""
    name = "the tern service"
    unit = "tern.service"

    def __init__(self, work):
        self.config_path = "/etc/tern/tern.toml"
        self.saved = os.path.join(work, "tern.toml.before-hil")
        self.log_path = os.path.join(work, "tern-service.log")
        self.journal = None

    def write_config(self, text):
        if os.path.exists(self.config_path) and not os.path.exists(self.saved):
            shutil.copy2(self.config_path, self.saved)
        with open(self.config_path, "w") as f:
            f.write(text)

    def restore_config(self):
        if os.path.exists(self.saved):
            shutil.copy2(self.saved, self.config_path)
            os.unlink(self.saved)

    def _show(self, *props):
        r = subprocess.run(["systemctl", "show", self.unit] + ["-p" + p for p in props], capture_output=True, text=True)
        return dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)

    def start(self, cfg, on_line):
        since = time.time()
        r = subprocess.run(["systemctl", "restart", self.unit], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return "systemctl restart tern failed: %s; %s" % (r.stderr.strip(), self._status())
        logf = open(self.log_path, "w")
        self.journal = subprocess.Popen(["journalctl", "-u", self.unit, "-f", "-o", "json", "--since", "@%d" % int(since)],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

        def read_journal():
            for raw in self.journal.stdout:
                try:
                    e = json.loads(raw)
                except ValueError:
                    continue
                t = int(e.get("_SOURCE_REALTIME_TIMESTAMP") or e.get("__REALTIME_TIMESTAMP", 0)) / 1e6
                msg = e.get("MESSAGE")
                if not isinstance(msg, str) or t < since:
                    continue
                logf.write("%.3f %s\n" % (t, msg))
                logf.flush()
                on_line(t, msg)
            logf.close()
        self.reader = threading.Thread(target=read_journal, daemon=True)
        self.reader.start()
        return None

    def _status(self):
        return subprocess.run(["systemctl", "status", "--no-pager", "-n", "5", self.unit], capture_output=True,
                              text=True).stdout.strip().replace("\n", " | ")

    def alive(self):
        return subprocess.run(["systemctl", "is-active", "--quiet", self.unit]).returncode == 0

    def exit_description(self):
        p = self._show("Result", "ExecMainStatus", "NRestarts")
        return "stopped (Result=%s, exit %s, %s restarts)" % (p.get("Result"), p.get("ExecMainStatus"), p.get("NRestarts"))

    def memory(self):
        p = self._show("MainPID", "User")
        pid = int(p.get("MainPID", "0") or 0)
        if not pid:
            return None
        try:
            user = __import__("pwd").getpwuid(os.stat("/proc/%d" % pid).st_uid).pw_name
        except (OSError, KeyError):
            user = "?"
        return "running as %s, %s" % (user, memory_of(pid))

    def hardening(self):
        """Problems with the running service's user and sandbox (User=tern, NoNewPrivs, seccomp, no
        capability), read from /proc/PID/status."""
        pid = int(self._show("MainPID").get("MainPID", "0") or 0)
        try:
            uid = __import__("pwd").getpwnam("tern").pw_uid
            status = open("/proc/%d/status" % pid).read() if pid else ""
        except (OSError, KeyError) as e:
            return ["cannot read the service's process (pid %d): %s" % (pid, e)]
        if not status:
            return ["the service has no main process"]
        found = hardening_problems(status, "tern", uid)
        return ["the service's process %d %s" % (pid, p) for p in found]

    def stop(self):
        r = subprocess.run(["systemctl", "stop", self.unit], capture_output=True, text=True, timeout=60)
        p = self._show("Result", "ExecMainStatus", "NRestarts")
        if self.journal:
            time.sleep(1.0)
            self.journal.terminate()
            self.reader.join(5)
        if r.returncode != 0 or p.get("Result") != "success" or p.get("NRestarts", "0") != "0":
            return "the service did not stop cleanly (systemctl stop exit %d, Result=%s, exit %s, %s restarts)" % (
                r.returncode, p.get("Result"), p.get("ExecMainStatus"), p.get("NRestarts"))
        return None


class Checks:
    def __init__(self, a):
        self.a = a
        self.prof_text = open(a.profile).read()
        self.prof = tomllib.loads(self.prof_text)
        rc = self.prof.get("receiver", {})
        self.dev = a.device or rc.get("device", "/dev/serial0")
        self.baud = int(a.baud or rc.get("baud", 9600))
        self.chipset = rc.get("chipset", "auto")
        self.silence = duration(rc.get("silence_timeout"), 5.0)
        self.power = Power(self.prof, Gpio)
        self.results = []
        self.seen_pmtk = False
        self.doctor_result = None
        os.makedirs(a.work, exist_ok=True)

    # ---- reporting
    def report(self, name, status, detail):
        self.results.append({"name": name, "status": status, "detail": detail})
        label = {"ok": "ok  ", "fail": "FAIL", "skip": "skip"}[status]
        print("%s %-9s %s" % (label, name, detail if status != "skip" else "(%s)" % detail), flush=True)

    def progress(self, msg):
        print("  .. %s" % msg, file=sys.stderr, flush=True)

    def tern(self, *args, timeout=30):
        return subprocess.run([self.a.tern, *args], capture_output=True, text=True, timeout=timeout)

    def line_view(self):
        """The receiver's power as its power line shows it, read without tern (method gpio: gpio-sim's
        value file on the emulated board, /sys/kernel/debug/gpio on a Pi), or None for the other methods.
        For gpio, a line that cannot be read this way is a FAIL: tern's power could not be checked."""
        if self.power.method != "gpio":
            return None
        al = bool(self.power.p.get("active_low"))
        if self.a.line_value_file:
            return ValueFileLine(self.a.line_value_file, al)
        return DebugfsLine(self.power.p.get("chip", "gpiochip0"), self.power.p.get("line"), al)

    # ---- 1
    def check_uart(self):
        port = Port(self.dev, self.baud)
        self.power.port = port
        try:
            if self.power.switchable():
                self.power.on()
            time.sleep(2.0)
            c0 = uart_errors(self.dev)
            t0 = time.time()
            time.sleep(self.a.uart_seconds)
            lines = port.since(t0)
            c1 = uart_errors(self.dev)
            with port.lock:
                chunks = [c for c in port.chunks if c[0] >= t0]
        finally:
            port.close()
            self.power.port = None
        sent = [l for _, l in lines if b"$" in l]
        good = [l for l in sent if nmea_ok(l)]
        self.seen_pmtk = any(l.startswith(b"$PMTK") or b"MTK" in l for l in good)
        nbytes = sum(n for _, n in chunks)
        # bursts: a cycle's bytes back to back; their rate shows the line really runs at the baud
        rates, burst = [], []
        for t, n in chunks + [(float("inf"), 0)]:
            if burst and t - burst[-1][0] > 0.2:
                if len(burst) >= 4 and burst[-1][0] > burst[0][0]:
                    rates.append(sum(x for _, x in burst[1:]) * 10 / (burst[-1][0] - burst[0][0]))
                burst = []
            burst.append((t, n))
        rate = sorted(rates)[len(rates) // 2] if rates else None
        if not sent:
            return self.report("uart", "fail", "no NMEA on %s at %d baud in %.0f s (%d bytes): check the receiver's "
                               "power, its TX -> the Pi's RXD wire, enable_uart=1, and the baud rate"
                               % (self.dev, self.baud, self.a.uart_seconds, nbytes))
        valid = 100.0 * len(good) / len(sent)
        if c0 is None or c1 is None:
            fe_txt, fe_ok = "framing errors not counted by this UART driver", True
        else:
            fe = c1[1] - c0[1]
            rx = max(c1[0] - c0[0], nbytes, 1)
            fe_ok = fe * 100.0 / rx < 1.0
            fe_txt = "%d framing errors in %d bytes (%.2f %%)" % (fe, rx, fe * 100.0 / rx)
        detail = "%d baud on %s: %d of %d sentences checksum-valid (%.1f %%), %s%s" % (
            self.baud, self.dev, len(good), len(sent), valid, fe_txt,
            ", bursts at %.0f baud" % rate if rate else "")
        ok = valid >= 99.0 and fe_ok
        if not ok:
            detail += ": a wrong baud rate or a noisy line (receiver.baud; the wiring; `tern nmea tail --autobaud`)"
        self.report("uart", "ok" if ok else "fail", detail)

    # ---- 2
    def check_power(self):
        if not self.power.switchable():
            return self.report("power", "skip", "power.method is %r: the board cannot switch the receiver" % self.power.method)
        view = self.line_view()
        port = Port(self.dev, self.baud)
        self.power.port = port
        fails, seen = [], []

        def settled(expect, within=2.0):
            # gpioset requests the line some time after it starts (tens of ms; more under emulation):
            # until then debugfs does not list the line.
            deadline = time.time() + within
            while True:
                level = view.read()
                if level == expect or time.time() >= deadline:
                    return level
                time.sleep(0.05)

        try:
            self.power.on()
            if view:
                seen.append(settled(True))
                if seen[-1] is None:
                    fails.append("the line's level cannot be read without tern: %s" % view.problem)
                elif not seen[-1]:
                    fails.append("%s shows the receiver off after power-on: check [power] chip, line and active_low"
                                 % view.describe())
            t0 = time.time()
            tf, _ = port.wait_for(is_fix, t0, self.a.first_fix_timeout)
            if tf is None:
                return self.report("power", "fail", "no fix within %.0f s of power-on: the antenna needs sky view "
                                   "(a cold receiver can take minutes)" % self.a.first_fix_timeout)
            # switch off mid-cycle, right after a cycle's first sentence: the hardest moment to stop
            tg, _ = port.wait_for(lambda l: b"GGA," in l, time.time(), 3.0)
            t_off = time.time()
            self.power.off()
            time.sleep(3.5)
            if view and seen[0] is not None:
                seen.append(settled(False))
                if seen[-1] is not False:
                    fails.append("%s shows the receiver %s after power-off" % (
                        view.describe(), "on" if seen[-1] else "unreadable (%s)" % view.problem))
            nmea = lambda l: l.startswith(b"$") and not l.startswith(b"$PMTK") and nmea_ok(l)
            after = [t for t, l in port.since(t_off) if nmea(l)]
            stop = (max(after) - t_off) if after else 0.0
            late = [t for t in after if t > t_off + 1.0]
            if late:
                fails.append("sentences still arrived %.1f s after power-off (%d after the first second)"
                             % (max(after) - t_off, len(late)))
            time.sleep(max(0.0, self.a.off_seconds - 3.5))
            off_for = time.time() - t_off
            t_on = time.time()
            self.power.on()
            tr, _ = port.wait_for(nmea, t_on, 5.0)
            tfix, _ = port.wait_for(is_fix, t_on, 60.0)
        finally:
            port.close()
            self.power.port = None
        if tr is None:
            fails.append("no sentence within 5 s of power-on")
        if tfix is None:
            fails.append("no fix within 60 s of power-on after %.0f s off" % off_for)
        elif tfix - t_on > 5.0:
            fails.append("first fix %.1f s after power-on: not a hot start (backup supply/coin cell?)" % (tfix - t_on))
        detail = "%s, off mid-cycle: sentences stopped %.2f s after power-off; after %.0f s off, resumed %s and fixed %s" % (
            self.power.describe(), stop, off_for,
            "%.2f s after power-on" % (tr - t_on) if tr else "never",
            "%.2f s after power-on (hot start)" % (tfix - t_on) if tfix and tfix - t_on <= 5 else
            ("after %.1f s" % (tfix - t_on) if tfix else "never"))
        if view and None not in seen:
            detail += "; %s read %s" % (view.describe(), "/".join("on" if x else "off" for x in seen))
        self.report("power", "fail" if fails else "ok", detail + ("; " + "; ".join(fails) if fails else ""))

    # ---- 2b
    def check_firstfix(self):
        n = self.a.first_fix_cycles
        if n <= 0:
            return self.report("firstfix", "skip", "not asked: --first-fix-cycles N measures N hot starts' first-fix "
                               "error (about %.0f s each)" % (self.a.first_fix_off + self.a.first_fix_settle + 2))
        if not self.power.switchable():
            return self.report("firstfix", "skip", "power.method is %r: the board cannot switch the receiver" % self.power.method)
        port = Port(self.dev, self.baud)
        self.power.port = port
        sessions, no_fix = [], 0
        csv_path = os.path.join(self.a.work, "firstfix.csv")
        try:
            with open(csv_path, "w") as csv:
                csv.write("start,power_on_unix,age_s,fix,lat,lon,hdop\n")
                self.power.off()
                time.sleep(self.a.first_fix_off)
                for i in range(n):
                    self.progress("firstfix: start %d of %d" % (i + 1, n))
                    t_on = time.time()
                    self.power.on()
                    t_first, _ = port.wait_for(lambda l: nmea_ok(l) and gga_position(l) is not None, t_on, self.a.first_fix_timeout)
                    if t_first is None:
                        no_fix += 1
                    else:
                        time.sleep(max(0.0, t_first + self.a.first_fix_settle - time.time()))
                        fixes = []
                        for t, l in port.since(t_on):
                            pos = gga_position(l)
                            if pos and nmea_ok(l):
                                fixes.append((t - t_first, *pos))
                                csv.write("%d,%.3f,%.3f,%d,%.7f,%.7f,%s\n" % (
                                    i + 1, t_on, t - t_first, len(fixes), pos[0], pos[1], "" if pos[2] is None else pos[2]))
                        sessions.append(fixes)
                    self.power.off()
                    time.sleep(self.a.first_fix_off)
        finally:
            port.close()
            self.power.port = None
        r = first_fix_report(sessions, self.a.first_fix_settled) if sessions else None
        if r is None:
            return self.report("firstfix", "fail", "%d of %d starts got no fix within %.0f s (or none lasted %.0f s to "
                               "settle): the antenna needs sky view" % (no_fix, n, self.a.first_fix_timeout, self.a.first_fix_settled))
        idx = ", ".join("fix %d %.1f m (worst %.1f%s)" % (
            b["fix"], b["median_m"], b["worst_m"], ", HDOP %.2f" % b["hdop_median"] if b["hdop_median"] is not None else "")
            for b in r["by_index"][:3])
        wu = ", ".join("%g s: %.1f m" % (b["warm_up_s"], b["p95_m"]) for b in r["by_warm_up"])
        sug = r["suggested_warm_up_s"]
        detail = ("%d hot starts after %.0f s off, %s; from the settled position (%d fixes, median %.1f m, p95 %.1f m): "
                  "%s (medians); the fix taken past a warm-up of %s (p95); %s (its fix's p95 within %.1f m: 1.5 x the settled p95, at least 1 m); every fix in %s"
                  % (len(sessions), self.a.first_fix_off, self.power.describe(), r["settled_fixes"], r["settled_median_m"],
                     r["settled_p95_m"], idx, wu,
                     "suggested filter.warm_up = \"%gs\"" % sug if sug is not None
                     else "no warm-up up to %g s is enough" % FIRST_FIX_WARM_UPS[-1], r["bar_m"], csv_path))
        if no_fix:
            detail += "; %d starts got no fix" % no_fix
        self.report("firstfix", "ok", detail)

    # ---- 3
    def check_commands(self):
        chip = self.chipset
        if chip == "auto":
            chip = {"pmtk-standby": "mediatek", "l76x": "quectel", "ubx-backup": "ublox"}.get(self.power.method)
        if self.power.switchable():
            self.power.on()
        time.sleep(1.0)
        base = ["receiver", "send", "--device", self.dev, "--baud", str(self.baud), "--timeout", "3s"]
        tries = [chip] if chip else ["mediatek", "ublox"]
        for c in tries:
            ublox = c.startswith("ublox")
            good = ["ubx", "06", "01", "F000"] if ublox else ["version"]
            bad = ["ubx", "06", "77"] if ublox else ["raw", "PMTK999"]
            r = self.tern(*base, "--chipset", c, *good)
            if r.returncode == 2 and c != tries[-1]:
                continue                               # no answer in this dialect: try the next
            out = (r.stdout + r.stderr).strip().replace("\n", " | ")
            if r.returncode != 0:
                return self.report("commands", "fail", "%s %s not acknowledged (exit %d): %s" % (c, " ".join(good), r.returncode, out[-300:]))
            acked = next((l for l in r.stdout.splitlines() if "PMTK001" in l or "ACK" in l), "?").strip("<- ").strip()
            rb = self.tern(*base, "--chipset", c, *bad)
            outb = (rb.stdout + rb.stderr).strip()
            nak = rb.returncode == 1 and (("ACK-NAK" in outb or "NAK" in outb) if ublox else "PMTK001" in outb)
            nak_txt = next((l for l in outb.splitlines() if "PMTK001" in l or "NAK" in l), outb[-200:]).strip("<- ").strip()
            if not nak:
                return self.report("commands", "fail", "%s acked (%s), but bad command %s not refused (exit %d): %s"
                                   % (" ".join(good), acked, " ".join(bad), rb.returncode, outb[-300:]))
            return self.report("commands", "ok", "chipset %s: `%s` acknowledged (%s); bad `%s` refused (%s)"
                               % (c, " ".join(good), acked, " ".join(bad), nak_txt))

    # ---- 4
    def check_unplug(self):
        if not (self.a.unplug_cmd and self.a.replug_cmd) and not self.a.interactive:
            return self.report("unplug", "skip", "needs the cable pulled: --interactive asks you to, the emulated board pulls it itself")
        if self.power.switchable():
            self.power.on()
        m, s = pty.openpty()
        p = subprocess.Popen([self.a.tern, "nmea", "tail", "--device", self.dev, "--baud", str(self.baud)],
                             stdout=s, stderr=s, stdin=subprocess.DEVNULL)
        os.close(s)
        lines, stop = [], []

        def reader():                                  # stamps each line as it arrives, whatever we do
            buf = b""
            while not stop:
                r, _, _ = select.select([m], [], [], 0.05)
                if not r:
                    continue
                try:
                    d = os.read(m, 4096)
                except OSError:
                    return
                buf += d
                while b"\n" in buf:
                    ln, buf = buf.split(b"\n", 1)
                    lines.append((time.time(), ln.decode(errors="replace").strip()))
        rt = threading.Thread(target=reader, daemon=True)
        rt.start()

        def pump(until):
            time.sleep(max(0.0, until - time.time()))

        def first(pred, t0, timeout):
            end = time.time() + timeout
            while True:
                for t, l in list(lines):
                    if t >= t0 and pred(l):
                        return t, l
                if time.time() >= end:
                    return None, None
                time.sleep(0.05)
        try:
            t, _ = first(lambda l: FIX_LINE.match(l), 0, 30)
            if t is None:
                return self.report("unplug", "fail", "tern nmea tail showed no fix before the cable was pulled: " +
                                   " | ".join(l for _, l in lines[-5:]))
            self.cable(False)
            t_u = time.time()
            pump(time.time() + self.silence + 2.5)
            during = [l for t, l in lines if t >= t_u and l.startswith("link:")]
            fixes_during = [l for t, l in lines if t >= t_u + 1.5 and FIX_LINE.match(l)]
            self.cable(True)
            t_r = time.time()
            tb, _ = first(lambda l: FIX_LINE.match(l), t_r, 15)
            back = [l for t, l in lines if t >= t_r and l.startswith("link:")]
        finally:
            p.terminate()
            p.wait()
            stop.append(1)
            rt.join(1)
            os.close(m)
        detail = "pulled %.0f s: %s; put back: %s" % (
            t_r - t_u, "; ".join(during) or "no link change reported",
            ("fixes again after %.2f s" % (tb - t_r)) if tb else "no fix within 15 s")
        if back:
            detail += " (%s)" % "; ".join(back)
        bad = tb is None or tb - t_r > 5.0 or fixes_during
        if fixes_during:
            detail += "; fixes kept arriving while pulled: the cable was not pulled"
        self.report("unplug", "fail" if bad else "ok", detail)

    def cable(self, plugged):
        if self.a.interactive and not (self.a.unplug_cmd and self.a.replug_cmd):
            with open("/dev/tty", "r+") as t:
                t.write("\n>>> %s, then press Enter: " % ("Put the receiver's TX wire (or its cable) back" if plugged
                                                          else "Pull the receiver's TX wire (or its cable)"))
                t.flush()
                t.readline()
        else:
            subprocess.run(self.a.replug_cmd if plugged else self.a.unplug_cmd, shell=True, check=True)

    # ---- 5 and 6
    def check_scheduler(self):
        self.power.release()
        work = self.a.work
        srv = None
        url = self.a.uplink_url
        if not url:
            srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
            threading.Thread(target=srv.serve_forever, daemon=True).start()
            url = "http://127.0.0.1:%d/positions" % srv.server_address[1]
        overrides = {("", "log_level"): "debug", ("", "device"): "tern-hil",
                     ("receiver", "device"): self.dev, ("receiver", "baud"): self.baud}
        if self.a.service:
            daemon = ServiceDaemon(work)      # the unit's own data, status and control paths
        else:
            daemon = ProcessDaemon(self.a.tern, work)
            overrides.update({("", "data_dir"): os.path.join(work, "data"), ("", "status_file"): os.path.join(work, "status.json"),
                              ("", "control_socket"): os.path.join(work, "control.sock")})
            shutil.rmtree(os.path.join(work, "data"), ignore_errors=True)
        sections = {"scheduler": {"policy": "fixed", "interval": "%ds" % self.a.interval, "acquisition_timeout": "60s"},
                    "uplink": {"url": url, "batch_size": 20, "timeout": "5s"}}
        cfg = daemon.config_path
        daemon.write_config(hil_config(self.prof_text, overrides, sections))
        try:
            self._scheduler_run(daemon, cfg)
        finally:
            daemon.restore_config()
            if srv:
                srv.shutdown()

    def _scheduler_run(self, daemon, cfg):
        r = self.tern("config", "check", cfg)
        if r.returncode not in (0, 2):
            self.doctor_result = False
            return self.report("scheduler", "fail", "the HIL config %s is invalid: %s" % (cfg, (r.stdout + r.stderr).strip()))
        # the real state of the power line, sampled without tern
        sampler, sim_log, how = None, None, ""
        view = self.line_view()
        if view:
            sampler, how = LineSampler(view.read, 0.005), view.describe()
        elif self.a.sim_state_log:
            sim_log, how = self.a.sim_state_log, "the simulated receiver's own state log"
        t_start = time.time()
        tern_tr, signal_at = [], []

        def on_line(now, line):
            mm = POWER_LOG.search(line)
            if mm:
                tern_tr.append((now, mm.group(1)))
            elif SIGNAL_LOG.search(line):
                signal_at.append(now)
        start_error = daemon.start(cfg, on_line)
        if start_error:
            self.doctor_result = False
            if sampler:
                sampler.finish()
            return self.report("scheduler", "fail", start_error)
        run_for = self.a.minutes * 60.0
        doctor_at = t_start + min(max(30.0, run_for / 2), run_for - 5)
        status, memory, hardening = None, None, None
        while time.time() < t_start + run_for and daemon.alive():
            if self.doctor_result is None and time.time() >= doctor_at:
                self.doctor_result = self.tern("doctor", "--config", cfg, timeout=60)
            time.sleep(0.5)
        crashed = None if daemon.alive() else daemon.exit_description()
        if crashed is None:
            st = self.tern("status", "--config", cfg, "--json")
            try:
                status = json.loads(st.stdout)
            except ValueError:
                status = None
            memory = daemon.memory()
            hardening = daemon.hardening()
            t_stop = time.time()
            stop_problem = daemon.stop()
        else:
            stop_problem, t_stop = None, time.time()
            daemon.stop()
        time.sleep(1.0)
        line_tr = sampler.finish() if sampler else None
        unreadable = None
        if sampler and not sampler.valid:
            line_tr, unreadable = None, view.worst() or "no read gave a level"
        initial = "on" if (sampler and sampler.initial) else "off"
        if sim_log:
            line_tr = []
            try:
                for ln in open(sim_log):
                    f = ln.split()
                    if len(f) >= 2 and float(f[0]) >= t_start:
                        line_tr.append((float(f[0]), f[1]))
                    elif len(f) >= 2:
                        initial = f[1]
            except OSError:
                line_tr = None
        if crashed is not None:
            return self.report("scheduler", "fail", "%s %s after %.0f s (log: %s)"
                               % (daemon.name, crashed, time.time() - t_start, daemon.log_path))
        # drop repeats (a power-off while already off changes nothing on the line)
        dedup, state = [], initial
        for t, s in tern_tr:
            if s != state:
                dedup.append((t, s))
                state = s
        ons = sum(1 for _, s in dedup if s == "on")
        gw = (status or {}).get("daemon", {}).get("gateway", {})
        up = (status or {}).get("daemon", {}).get("uplink", {})
        extra = "%s: %d power-ons in %.1f min, %s fixes accepted, %s" % (
            daemon.name, ons, self.a.minutes, gw.get("fixes_accepted", "?"),
            "%d batches uploaded" % Collector.received if not self.a.uplink_url else "uploading to %s" % self.a.uplink_url)
        if memory:
            extra += ", " + memory
        if stop_problem:
            return self.report("scheduler", "fail", "%s; %s (log %s)" % (extra, stop_problem, daemon.log_path))
        if ons < 2:
            return self.report("scheduler", "fail", "the scheduler did not cycle the receiver (%s; log %s)" % (extra, daemon.log_path))
        if line_tr is None and unreadable:
            return self.report("scheduler", "fail", "%s; tern's power log not compared: %s gave no level in %d reads: %s"
                               % (extra, how, sampler.samples, unreadable))
        if line_tr is None:
            return self.report("scheduler", "skip", "%s; tern's power log not compared: no independent view of the "
                               "receiver's power on this board (%s%s)" % (extra, self.power.describe(), "; " + how if how else ""))
        line_run, tern_run, stop_problems, stop_detail = split_at_stop(
            line_tr, dedup, t_stop, signal_at[0] if signal_at else None)
        problems, unjudged, worst, resolution = compare_transitions(line_run, tern_run, t_start)
        problems = (hardening or []) + problems + stop_problems
        detail = "%s; %d transitions on %s (%s at the start), %d in tern's power log, worst gap %.0f ms before the stop; %s" % (
            extra, len(line_tr), how, initial, len(dedup), worst * 1000, stop_detail)
        if sampler:
            detail += " (each transition timed to %.0f ms or better) (%d samples%s)" % (
                resolution * 1000, sampler.samples, ", SCHED_FIFO" if getattr(sampler, "realtime", False) else "")
        if hardening == []:
            detail += "; the service runs as tern with NoNewPrivs, seccomp mode 2 and no capability (/proc/PID/status)"
        if problems:
            detail += ": " + "; ".join(problems[:5]) + (" …" if len(problems) > 5 else "") + " (log %s)" % daemon.log_path
        elif unjudged:
            # Not ok and not a FAIL: the rig could not time these transitions well enough to judge tern.
            detail += ": cannot judge %d of %d transitions: %s (log %s)" % (
                len(unjudged), len(line_tr), "; ".join(unjudged[:3]) + (" …" if len(unjudged) > 3 else ""), daemon.log_path)
        self.report("scheduler", "fail" if problems else "skip" if unjudged else "ok", detail)

    def report_doctor(self):
        r = self.doctor_result
        if r is False:
            return self.report("doctor", "skip", "no daemon: the scheduler check could not start tern run")
        if r is None:
            return self.report("doctor", "fail", "not run: tern run stopped before the doctor's turn")
        lines = r.stdout.splitlines()
        warns = [l[5:].strip() for l in lines if l.startswith("warn")]
        fails = [l[5:].strip() for l in lines if l.startswith("FAIL")]
        oks = [l for l in lines if l.startswith("ok")]
        if r.returncode == 0:
            self.report("doctor", "ok", "%d checks ok on the running daemon" % len(oks))
        elif r.returncode == 2:
            self.report("doctor", "ok", "%d checks ok, warnings only: %s" % (len(oks), "; ".join(warns)))
        else:
            self.report("doctor", "fail", "exit %d: %s" % (r.returncode, "; ".join(fails or lines[-3:] or [r.stderr.strip()])))

    def run(self):
        steps = [("uart", self.check_uart), ("power", self.check_power), ("firstfix", self.check_firstfix),
                 ("commands", self.check_commands),
                 ("unplug", self.check_unplug), ("scheduler", self.check_scheduler)]
        only = set(self.a.only.split(",")) if self.a.only else None
        for name, fn in steps:
            if only and name not in only:
                self.report(name, "skip", "not selected (--only)")
                continue
            self.progress("%s …" % name)
            try:
                fn()
            except Exception as e:                     # a check that breaks is a FAIL, named
                self.report(name, "fail", "%s: %s" % (type(e).__name__, e))
            if name == "scheduler":
                self.report_doctor()
        if only and "scheduler" not in only:
            self.report("doctor", "skip", "runs on the daemon of the scheduler check")
        self.power.release()
        if self.a.json:
            print(json.dumps({"checks": self.results}), flush=True)
        return 1 if any(r["status"] == "fail" for r in self.results) else 0


def main():
    p = argparse.ArgumentParser(description="Tern HIL checks (see board/hil/run.sh)")
    p.add_argument("--profile", required=True, help="board/*.toml")
    p.add_argument("--tern", default=shutil.which("tern") or "/usr/bin/tern")
    p.add_argument("--device", help="the receiver's UART (default: the profile's)")
    p.add_argument("--baud", type=int)
    p.add_argument("--minutes", type=float, default=10.0, help="how long tern run cycles the receiver")
    p.add_argument("--interval", type=int, default=15, help="the fixed scheduler's interval for the run (s)")
    p.add_argument("--uart-seconds", type=float, default=10.0)
    p.add_argument("--off-seconds", type=float, default=5.0, help="the short off period before the hot start")
    p.add_argument("--first-fix-timeout", type=float, default=120.0)
    p.add_argument("--first-fix-cycles", type=int, default=0,
                   help="firstfix: hot starts to measure (0: the check is skipped); keep the antenna still")
    p.add_argument("--first-fix-off", type=float, default=60.0, help="firstfix: seconds off before each start")
    p.add_argument("--first-fix-settle", type=float, default=60.0, help="firstfix: seconds recorded after each first fix")
    p.add_argument("--first-fix-settled", type=float, default=30.0,
                   help="firstfix: fixes this long after a start's first fix count as settled")
    p.add_argument("--line-value-file", help="the power line's level (emulated board: gpio-sim's sim_gpioN/value)")
    p.add_argument("--sim-state-log", help="the simulated receiver's state log (emulated board)")
    p.add_argument("--unplug-cmd")
    p.add_argument("--replug-cmd")
    p.add_argument("--interactive", action="store_true", help="ask a person to pull and replace the cable")
    p.add_argument("--only", help="comma-separated checks to run")
    p.add_argument("--work", default="/tmp/tern-hil-checks")
    p.add_argument("--json", action="store_true")
    p.add_argument("--service", action="store_true",
                   help="scheduler/doctor: run the installed service (systemctl, /etc/tern/tern.toml) instead of tern run")
    p.add_argument("--uplink-url", help="the server tern uploads to during the scheduler check (default: a local one)")
    a = p.parse_args()
    if a.first_fix_cycles > 0 and a.first_fix_settle <= a.first_fix_settled:
        print("checks: --first-fix-settle (%g s) must be longer than --first-fix-settled (%g s): no fix would count "
              "as settled" % (a.first_fix_settle, a.first_fix_settled), file=sys.stderr)
        return 2
    if not os.path.exists(a.tern):
        print("checks: no tern binary at %s: pass --tern PATH" % a.tern, file=sys.stderr)
        return 2
    dev = a.device
    try:
        c = Checks(a)
    except (OSError, tomllib.TOMLDecodeError) as e:
        print("checks: cannot read the profile %s: %s" % (a.profile, e), file=sys.stderr)
        return 2
    dev = c.dev
    if not os.path.exists(dev):
        print("checks: %s does not exist: enable the UART (enable_uart=1 in config.txt) or pass --device" % dev, file=sys.stderr)
        return 2
    holders = []
    real = os.path.realpath(dev)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                if os.path.realpath("/proc/%s/fd/%s" % (pid, fd)) == real and int(pid) != os.getpid():
                    holders.append("%s (%s)" % (pid, open("/proc/%s/comm" % pid).read().strip()))
                    break
        except OSError:
            pass
    if holders:
        print("checks: %s is held by %s: stop it first (sudo systemctl stop tern; a serial console: "
              "raspi-config > Interface > Serial)" % (dev, ", ".join(holders)), file=sys.stderr)
        return 2
    return c.run()


if __name__ == "__main__":
    sys.exit(main())
