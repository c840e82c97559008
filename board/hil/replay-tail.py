#!/usr/bin/env python3
"""Replays NMEA logs into a pseudo-terminal at a UART's pace and times `tern nmea tail` on it.

For each log: the lines (gpsd-style '#' comments dropped) are written into the PTY's master side in
10 ms chunks, each when a UART at --baud would have sent its last byte; `tern nmea tail --device
<slave>` reads the other side. Measured: the time from the log's last byte to tern printing the line of
its last receiver cycle (a fix, or "no fix yet": it must come without any later byte, nothing follows); how many fix lines it printed
against the fixes `tern nmea decode` finds in the same bytes (none may be lost on the live path); and
how many were dated after the system clock + 1 day (a week-rollover correction must never do that).
Prints one JSON object; exits 1 when a log with fixes has its last cycle printed later than --limit-ms or never, when a fix
is lost, or when one is dated in the future.

    board/hil/replay-tail.py --tern .build/debug/tern LOG...
"""
import argparse
import datetime
import json
import os
import pty
import select
import subprocess
import sys
import time


def replay(tern, log, baud, settle):
    with open(log, "rb") as f:
        data = b"".join(l for l in f.read().splitlines(keepends=True) if not l.startswith(b"#"))
    master, slave = pty.openpty()
    path = os.ttyname(slave)
    # As on the board, nobody else holds the UART (tern refuses a held one); the master keeps the PTY.
    os.close(slave)
    proc = subprocess.Popen([tern, "nmea", "tail", "--device", path, "--baud", str(baud)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []  # (time, line)
    buffer = b""

    def drain(timeout):
        nonlocal buffer
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 65536)
            now = time.monotonic()
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                lines.append((now, line.decode(errors="replace")))
            return bool(chunk)
        return False

    # Wait for tern to open the port (it prints the device line first): bytes written before it reads
    # would be lost to it, and counted against it. A loaded machine can take seconds to start it.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any("baud" in l for _, l in lines) and proc.poll() is None:
        drain(0.1)
    if not any("baud" in l for _, l in lines):
        proc.kill()
        _, err = proc.communicate(timeout=10)
        os.close(master)
        sys.exit(f"replay-tail: tern nmea tail never opened {path} ({os.path.basename(log)}): {err.decode(errors='replace').strip() or 'no error printed'}")
    chunk = max(1, baud // 1000)
    start = time.monotonic()
    last_byte = start
    for offset in range(0, len(data), chunk):
        end = min(offset + chunk, len(data))
        due = start + end * 10 / baud
        while time.monotonic() < due:
            drain(max(0.0, due - time.monotonic()))
        last_byte = time.monotonic()
        os.write(master, data[offset:end])
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline:
        drain(deadline - time.monotonic())
    proc.terminate()
    proc.wait(timeout=10)
    os.close(master)
    # Every receiver cycle with a date prints a line: a fix, or "no fix yet" while acquiring.
    epochs = [(t, l) for t, l in lines if l[:1].isdigit()]
    fixes = [(t, l) for t, l in epochs if "no fix yet" not in l]
    latency = round((epochs[-1][0] - last_byte) * 1000, 1) if epochs else None
    decoded = subprocess.run([tern, "nmea", "decode", "-"], input=data, capture_output=True, check=True).stdout
    # Fix times (decode reports an epoch again when a late sentence amends it: count each time once).
    expected = {r["time"].rstrip("Z") for r in map(json.loads, decoded.splitlines()) if r.get("mode", 0) >= 2 and r.get("time")}
    printed = {l.split()[0] for _, l in fixes}
    # tail prints UTC without a zone.
    tomorrow = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) + datetime.timedelta(days=1)
    future = [l.split()[0] for _, l in fixes
              if datetime.datetime.fromisoformat(l.split()[0].rstrip("Z")) > tomorrow]
    return {"log": os.path.basename(log), "bytes": len(data), "fix_lines": len(fixes),
            "fixes_decoded": len(expected), "decoded_not_printed": sorted(expected - printed), "first_fix": fixes[0][1].split()[0] if fixes else None,
            "dated_in_the_future": len(future), "last_epoch_after_last_byte_ms": latency}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--tern", default=".build/debug/tern")
    parser.add_argument("--baud", type=int, default=9600)
    parser.add_argument("--settle", type=float, default=2.0, help="seconds to wait for output after the last byte")
    parser.add_argument("--limit-ms", type=float, default=100.0)
    args = parser.parse_args()
    results = [replay(args.tern, log, args.baud, args.settle) for log in args.logs]
    late = [r["log"] for r in results if r["fixes_decoded"] and (r["last_epoch_after_last_byte_ms"] is None
            or r["last_epoch_after_last_byte_ms"] > args.limit_ms)]
    lost = [r["log"] for r in results if r["decoded_not_printed"]]
    future = [r["log"] for r in results if r["dated_in_the_future"]]
    latencies = sorted(r["last_epoch_after_last_byte_ms"] for r in results if r["last_epoch_after_last_byte_ms"] is not None)
    print(json.dumps({"benchmark": "replay-tail", "baud": args.baud, "limit_ms": args.limit_ms,
                      "logs": len(results), "max_ms": latencies[-1] if latencies else None,
                      "late_or_missing": late, "lost_fixes": lost, "dated_in_the_future": future,
                      "results": results}, indent=2))
    sys.exit(1 if late or lost or future else 0)


if __name__ == "__main__":
    main()
