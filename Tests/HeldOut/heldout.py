#!/usr/bin/env python3
"""Held-out conformance run: gpsd 3.22 regression logs that are NOT in Tern's
corpus (Tests/TernNMEATests/Corpus), are NMEA 0183 text, and whose .chk has >= 1 fix.

For each: normalise the '# Date' header (as the corpus did: '# Date = X' and
'# Date: 8 October 2020' become '# Date: YYYY-MM-DD'), run
`tern nmea decode`, convert the .chk with chk_to_fixes.py, compare with the
corpus's compare_fixes.py.  Prints a per-log table, totals and a JSON summary
(also written to OUT/summary.json).  Selection decisions go to
OUT/selection.tsv.

Besides compare_fixes.py's counts it reports the fixes that agree fully: matched by
time, and every field both report within compare_fixes.py's tolerances.

usage: heldout.py --tern PATH --gpsd-tests DIR [--out DIR]
"""
import datetime
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "TernNMEATests", "Corpus")
sys.path.insert(0, HERE)
import compare_fixes  # noqa: E402
import chk_to_fixes   # noqa: E402

FIELDS = ("lat", "lon", "alt", "speed", "track")
MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october "
    "november december".split())}


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def classify(path):
    """Return (kind, why) for a test/daemon log."""
    data = open(path, "rb").read()
    lines = [l for l in data.split(b"\n") if l.strip() and not l.startswith(b"#")]
    body = b"\n".join(lines)
    nonprint = sum(1 for c in body if c >= 128 or (c < 32 and c not in (9, 10, 13)))
    dollar = sum(1 for l in lines if l.startswith(b"$"))
    bang = sum(1 for l in lines if l.startswith(b"!"))
    if body and nonprint > 0.01 * len(body):
        return "binary", "%d of %d bytes non-printable (binary protocol%s)" % (
            nonprint, len(body), ", with %d $-lines" % dollar if dollar else "")
    if dollar == 0 and bang:
        return "ais-only", "%d !AIVDM/!AIVDO lines, no $ sentences" % bang
    if dollar + bang < 0.5 * max(1, len(lines)):
        return "not-nmea", "only %d of %d lines are $/! sentences (RTCM/NTRIP/text)" % (
            dollar + bang, len(lines))
    return "nmea", "%d $-sentences, %d !-sentences" % (dollar, bang)


def iso_date(text):
    """Parse the date of a '# Date' header into YYYY-MM-DD, or None."""
    t = text.strip()
    m = re.match(r"(\d{4})-(\d{1,2})-(\d{1,2})", t)
    if m:
        return "%04d-%02d-%02d" % tuple(int(x) for x in m.groups())
    m = re.match(r"(\d{1,2})\s+([A-Za-z]+)\s+(\d{4})", t)        # 8 October 2020
    if m and m.group(2).lower() in MONTHS:
        return "%04d-%02d-%02d" % (int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1)))
    m = re.match(r"(\d{4})-([A-Za-z]+)\s+(\d{1,2})", t)          # 2019-April 12
    if m and m.group(2).lower() in MONTHS:
        return "%04d-%02d-%02d" % (int(m.group(1)), MONTHS[m.group(2).lower()], int(m.group(3)))
    return None


def normalise(src, dst):
    """Copy a log, rewriting its first '# Date' header line to '# Date: ISO'."""
    out, done, note = [], False, "no Date header"
    for raw in open(src, "rb").read().split(b"\n"):
        if not done and raw.startswith(b"#"):
            m = re.match(rb"#\s*Date\s*[:=]\s*(.*)", raw)
            if m:
                iso = iso_date(m.group(1).decode("ascii", "replace"))
                done = True
                if iso:
                    new = ("# Date: " + iso).encode()
                    note = "kept" if new == raw.rstrip(b"\r") else \
                        "rewrote %r -> %r" % (raw.decode(), new.decode())
                    raw = new
                else:
                    note = "unparsed %r" % raw.decode()
        out.append(raw)
    open(dst, "wb").write(b"\n".join(out))
    return note


def count(res):
    return {"gpsd_fixes": res["ref_fixes"], "tern_fixes": res["cand_fixes"],
            "matched": res["matched_times"], "missing": res["missing_in_cand"],
            "extra": res["extra_in_cand"], "mode_diff": res["mode_diff"],
            "field_mismatch": sum(res[k]["mismatch"] for k in FIELDS),
            "gpsd_only_field": sum(res[k]["ref_only"] for k in FIELDS),
            "tern_only_field": sum(res[k]["cand_only"] for k in FIELDS),
            "fields": {k: res[k] for k in FIELDS}}


def agreeing(reference, candidate):
    """Fixes matched by time whose every field, where both report it, is within tolerance."""
    return sum(1 for t in set(reference) & set(candidate)
               if all(reference[t].get(k) is None or candidate[t].get(k) is None
                      or abs(reference[t][k] - candidate[t][k]) <= tol
                      for k, tol in compare_fixes.TOL.items()))


def main():
    tern = arg("--tern", None)
    tests = arg("--gpsd-tests", None)
    out = arg("--out", "/tmp/tern-heldout")
    if not tern or not tests:
        sys.exit(__doc__)
    for d in ("logs", "ref", "tern"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    corpus = {f[:-4] for f in os.listdir(CORPUS) if f.endswith(".log")}
    sel, rows, nofix = [], [], {}
    for f in sorted(os.listdir(tests)):
        if not f.endswith(".log"):
            continue
        name = f[:-4]
        src = os.path.join(tests, f)
        if name in corpus:
            sel.append((name, "corpus", "already in nmea-corpus"))
            continue
        kind, why = classify(src)
        if kind != "nmea":
            sel.append((name, kind, why))
            continue
        chk = src + ".chk"
        log = os.path.join(out, "logs", f)
        note = normalise(src, log)
        ref = os.path.join(out, "ref", name + ".jsonl")
        fixes = chk_to_fixes.convert(chk, log)
        with open(ref, "w") as fp:
            for r in fixes:
                fp.write(json.dumps(r, separators=(",", ":")) + "\n")
        nref = len(compare_fixes.load(ref))
        if nref == 0:
            sel.append((name, "no-fix", "NMEA text but gpsd's .chk has no fix (%s)" % why))
            cand = os.path.join(out, "tern", name + ".jsonl")
            with open(cand, "w") as fp:
                subprocess.run([tern, "nmea", "decode", log], stdout=fp,
                               stderr=subprocess.DEVNULL)
            nofix[name] = len(compare_fixes.load(cand))
            continue
        sel.append((name, "heldout", "%s; header: %s" % (why, note)))
        cand = os.path.join(out, "tern", name + ".jsonl")
        with open(cand, "w") as fp:
            p = subprocess.run([tern, "nmea", "decode", log], stdout=fp,
                               stderr=subprocess.PIPE)
        reference, candidate = compare_fixes.load(ref), compare_fixes.load(cand)
        res = compare_fixes.compare(reference, candidate)
        row = {"log": name, "rc": p.returncode}
        row.update(count(res))
        row["agreeing"] = agreeing(reference, candidate)
        rows.append(row)
    with open(os.path.join(out, "selection.tsv"), "w") as fp:
        for s in sel:
            fp.write("\t".join(s) + "\n")

    hdr = "%-30s %5s %5s %5s %5s %5s %5s %5s %5s %5s" % (
        "log", "gpsd", "tern", "match", "miss", "extra", "fmis", "gonly", "tonly", "mode")
    print(hdr)
    print("-" * len(hdr))
    tot = {k: 0 for k in ("gpsd_fixes", "tern_fixes", "matched", "agreeing", "missing",
                          "extra", "field_mismatch", "gpsd_only_field",
                          "tern_only_field", "mode_diff")}
    ftot = {k: {"mismatch": 0, "ref_only": 0, "cand_only": 0} for k in FIELDS}
    clean = 0
    for r in rows:
        bad = r["missing"] or r["extra"] or r["field_mismatch"] or \
            r["gpsd_only_field"] or r["tern_only_field"] or r["mode_diff"]
        clean += not bad
        print("%-30s %5d %5d %5d %5d %5d %5d %5d %5d %5d%s%s" % (
            r["log"], r["gpsd_fixes"], r["tern_fixes"], r["matched"], r["missing"],
            r["extra"], r["field_mismatch"], r["gpsd_only_field"],
            r["tern_only_field"], r["mode_diff"], "" if bad else "  ok",
            "" if r["rc"] == 0 else "  (tern exit %d)" % r["rc"]))
        for k in tot:
            tot[k] += r[k]
        for k in FIELDS:
            for j in ftot[k]:
                ftot[k][j] += r["fields"][k][j]
    print("-" * len(hdr))
    print("%-30s %5d %5d %5d %5d %5d %5d %5d %5d %5d" % (
        "TOTAL (%d logs, %d clean)" % (len(rows), clean), tot["gpsd_fixes"],
        tot["tern_fixes"], tot["matched"], tot["missing"], tot["extra"],
        tot["field_mismatch"], tot["gpsd_only_field"], tot["tern_only_field"],
        tot["mode_diff"]))
    print("matched by time %.1f %% of gpsd's fixes; agreeing on every field %.1f %%" % (
        100.0 * tot["matched"] / max(1, tot["gpsd_fixes"]), 100.0 * tot["agreeing"] / max(1, tot["gpsd_fixes"])))
    print("columns: gpsd/tern = fixes; match = common times; miss = gpsd fix "
          "times Tern lacks; extra = Tern fix times gpsd lacks; fmis = field "
          "mismatches beyond tolerance; gonly/tonly = field present only in "
          "gpsd/Tern; mode = mode differs")
    print("no-fix NMEA logs (gpsd reports no fix; Tern fixes there would be "
          "false positives): " + ", ".join("%s=%d" % kv for kv in sorted(nofix.items())))
    skipped = {}
    for name, kind, why in sel:
        if kind not in ("heldout", "corpus"):
            skipped.setdefault(kind, []).append(name)
    summary = {"logs": len(rows), "clean_logs": clean, "totals": tot,
               "fields": ftot, "per_log": rows, "nofix_logs_tern_fixes": nofix,
               "skipped": skipped,
               "selection": os.path.join(out, "selection.tsv")}
    with open(os.path.join(out, "summary.json"), "w") as fp:
        json.dump(summary, fp, indent=1)
    brief = dict(summary)
    brief["per_log"] = {r["log"]: {k: r[k] for k in (
        "gpsd_fixes", "matched", "agreeing", "missing", "extra", "field_mismatch",
        "gpsd_only_field", "tern_only_field")} for r in rows}
    print("JSON " + json.dumps(brief, separators=(",", ":")))


if __name__ == "__main__":
    main()
