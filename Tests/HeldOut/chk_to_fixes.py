#!/usr/bin/env python3
"""Turn a gpsd regression .chk (test/daemon/NAME.log.chk) into per-epoch
fixes JSON lines in the nmea-corpus format:

    {"time":..., "lat":..., "lon":..., "alt":..., "speed":..., "track":..., "mode":...}

usage: chk_to_fixes.py NAME.log.chk [OUT.jsonl] [--log NAME.log]

(--log defaults to the .chk path without ".chk"; it is read only for its
"# Date:" header, see WKRO below.)

- Only TPV reports are used (other classes and the echoed sentences are
  ignored; lines that are not JSON are skipped, binary junk included).
- alt = metres above MSL: "altMSL", falling back to the legacy "alt"
  (3.22 prints both, equal), never altHAE.
- Epochs are grouped by time: for each TPV time the LAST report with that
  time (the fully merged one) is kept, in order of first appearance.
  Reports without a time are kept one per report (they are never fixes for
  compare_fixes.py, which skips records without time).
"""
import datetime
import json
import sys

# gpsd 3.22 gpsd_utc_resolve() (gpsd/timebase.c:297-307): when its leap
# second count is > 17 (BUILD_LEAPSECONDS=18 in the regression build) and the
# NMEA UTC date is before 2017-01-01 it "fast forwards" the time by 1024 GPS
# weeks.  That rewrote every pre-2017 log's times in the 3.22 .chk files
# (2010-06-12 -> 2030-01-26).  The corpus was made by a later gpsd that does
# not do this when the log has a "# Date:" header (it still does it for a log
# without one, e.g. neo-m8n's "# Date = ...", and for tcp-torture, fed over
# TCP), so undo it only then: a TPV
# time T is shifted back by WKRO seconds when the log has a "Date:" comment
# line, T - WKRO is before 2017 and its day (dd/mm/yy) is a date that an RMC
# or ZDA sentence echoed in the same .chk actually carried.
WKRO = 619315200
Y2017 = datetime.datetime(2017, 1, 1, tzinfo=datetime.timezone.utc)

FIELDS = ("time", "lat", "lon", "alt", "speed", "track", "mode")


def raw_date(line, dates):
    """Record the (yy, mm, dd) an echoed RMC/ZDA sentence carries."""
    f = line.split("*")[0].split(",")
    try:
        if f[0][3:6] == "RMC" and len(f) > 9 and len(f[9]) == 6:
            d = f[9]
            dates.add((int(d[4:6]), int(d[2:4]), int(d[0:2])))
        elif f[0][3:6] == "ZDA" and len(f) > 4 and f[4]:
            dates.add((int(f[4]) % 100, int(f[3]), int(f[2])))
    except ValueError:
        pass


def unshift(t, dates):
    if not t:
        return t
    ts = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc)
    back = ts - datetime.timedelta(seconds=WKRO)
    if back < Y2017 and (back.year % 100, back.month, back.day) in dates:
        return back.strftime("%Y-%m-%dT%H:%M:%S.") + \
            "%03dZ" % (back.microsecond // 1000)
    return t


def has_date_header(log):
    """True when gpsd saw a '# Date:' comment (and the log is not fed over
    TCP: the corpus keeps the 1024-week shift for tcp-torture, whose header
    says 'Transport: TCP')."""
    date = tcp = False
    try:
        with open(log, "rb") as fp:
            for raw in fp:
                if raw.startswith(b"#"):
                    date = date or b"Date:" in raw
                    tcp = tcp or (b"Transport:" in raw and b"TCP" in raw)
    except OSError:
        pass
    return date and not tcp


def tpvs(path, log=None):
    if log is None and path.endswith(".chk"):
        log = path[:-4]
    undo = has_date_header(log)
    dates = set()
    with open(path, "rb") as fp:
        for raw in fp:
            line = raw.decode("utf-8", "replace").strip()
            if line.startswith(("$", "!")):
                raw_date(line, dates)
                continue
            if not line.startswith('{"class":"TPV"'):
                continue
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("class") != "TPV":
                continue
            if undo:
                r["time"] = unshift(r.get("time"), dates)
            yield r


def to_fix(r):
    alt = r.get("altMSL", r.get("alt"))
    return {"time": r.get("time"), "lat": r.get("lat"), "lon": r.get("lon"),
            "alt": alt, "speed": r.get("speed"), "track": r.get("track"),
            "mode": r.get("mode", 0)}


def convert(path, log=None):
    out = []          # list of fix dicts in order
    index = {}        # time -> position in out
    for r in tpvs(path, log):
        f = to_fix(r)
        t = f["time"]
        if t is None:
            out.append(f)
        elif t in index:
            out[index[t]] = f
        else:
            index[t] = len(out)
            out.append(f)
    return out


def main():
    argv = sys.argv[1:]
    log = None
    if "--log" in argv:
        i = argv.index("--log")
        log = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) not in (1, 2):
        sys.exit(__doc__)
    fixes = convert(argv[0], log)
    fp = open(argv[1], "w") if len(argv) == 2 else sys.stdout
    for f in fixes:
        fp.write(json.dumps(f, separators=(",", ":")) + "\n")
    if fp is not sys.stdout:
        fp.close()


if __name__ == "__main__":
    main()
