#!/usr/bin/env python3
"""diffx.py REF CAND: list per-time differences between two fix streams
(same tolerances as compare_fixes.py)."""
import json, sys
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from compare_fixes import load, TOL
a, b = load(sys.argv[1]), load(sys.argv[2])
for t in sorted(set(a) | set(b)):
    x, y = a.get(t), b.get(t)
    if x is None:
        print("EXTRA  ", t, json.dumps(y)); continue
    if y is None:
        print("MISSING", t, json.dumps(x)); continue
    d = []
    for k, tol in TOL.items():
        p, q = x.get(k), y.get(k)
        if p is None and q is None: continue
        if p is None or q is None or min(abs(p-q), 360-abs(p-q) if k=="track" else 1e9) > tol:
            d.append("%s ref=%s cand=%s" % (k, p, q))
    if x.get("mode") != y.get("mode"): d.append("mode ref=%s cand=%s" % (x.get("mode"), y.get("mode")))
    if d: print("DIFF   ", t, "; ".join(d))
