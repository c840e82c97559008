#!/usr/bin/env python3
"""The firstfix measurement (checks.py) on recorded logs instead of a live receiver: gpsd's regression
logs' decoded fixes (`*.fixes.jsonl`, one epoch a line: lat, lon, speed, mode), as in ../shared's
nmea-corpus.

A session start is a fix right after one or more no-fix epochs (mode < 2): a power-on, or sky
regained. A start is judged when its run of fixes lasts --min-epochs and the receiver was still
(every reported speed < 0.5 m/s, or none reported; the settled fixes within 10 m of their median),
since only then is "the settled position" the truth its first fixes can be compared with. Epochs are
taken as 1 s apart (the logs' times are often missing). Scored by checks.first_fix_report: each
start's k-th fix against the median of the fixes --settled-after epochs or more after its first.

usage: board/hil/first-fix-logs.py CORPUS_DIR [--settled-after 10] [--min-epochs 15] [--json]
"""
import argparse, glob, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402


def starts(epochs, min_epochs):
    """The runs of fixes that follow a no-fix epoch, each as [(age_s, lat, lon, None)]."""
    out = []
    for i in range(1, len(epochs)):
        prev, e = epochs[i - 1], epochs[i]
        if prev.get("mode", 0) >= 2 or e.get("mode", 0) < 2 or e.get("lat") is None:
            continue
        run = []
        for g in epochs[i:]:
            if g.get("mode", 0) < 2 or g.get("lat") is None:
                break
            run.append(g)
        if len(run) >= min_epochs:
            out.append(run)
    return out


def still_report(run, settled_after):
    """The run's first_fix_report when the receiver was still (no reported speed of 0.5 m/s or more,
    the settled fixes within 10 m of their median), else None."""
    if any(g["speed"] >= 0.5 for g in run if g.get("speed") is not None):
        return None
    r = checks.first_fix_report([[(float(k), g["lat"], g["lon"], None) for k, g in enumerate(run)]], settled_after)
    return r if r is not None and r["settled_p95_m"] < 10.0 else None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("corpus")
    p.add_argument("--settled-after", type=float, default=10.0, help="epochs after a start's first fix that count as settled")
    p.add_argument("--min-epochs", type=int, default=15, help="shortest run of fixes judged")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    if a.min_epochs <= a.settled_after:
        p.error("--min-epochs must exceed --settled-after: a run needs settled fixes")
    paths = sorted(glob.glob(os.path.join(a.corpus, "*.fixes.jsonl")))
    if not paths:
        print("first-fix-logs: no *.fixes.jsonl in %s" % a.corpus, file=sys.stderr)
        return 2
    rows, looked = [], 0
    for path in paths:
        epochs = [json.loads(l) for l in open(path) if l.strip()]
        for run in starts(epochs, a.min_epochs):
            looked += 1
            r = still_report(run, a.settled_after)
            if r is None:
                continue
            rows.append({"log": os.path.basename(path).split(".")[0], "fixes": len(run),
                         "first_fixes_m": [round(b["median_m"], 1) for b in r["by_index"]],
                         "settled_median_m": round(r["settled_median_m"], 1), "settled_p95_m": round(r["settled_p95_m"], 1),
                         "suggested_warm_up_s": r["suggested_warm_up_s"]})
    if a.json:
        print(json.dumps({"logs": len(paths), "starts": looked, "judged": rows}))
    else:
        print("%d logs, %d session starts with %d+ fixes, %d still (judged):" % (len(paths), looked, a.min_epochs, len(rows)))
        for r in rows:
            print("  %-22s %3d fixes: fixes 1-5 %s m from settled (settled median %.1f, p95 %.1f m); warm-up %s" % (
                r["log"], r["fixes"], r["first_fixes_m"], r["settled_median_m"], r["settled_p95_m"],
                "%g s" % r["suggested_warm_up_s"] if r["suggested_warm_up_s"] is not None else "> 10 s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
