#!/usr/bin/env python3
"""The emulated Pi's view of the outside world, on this machine: the tracking server its tern
service uploads to, and the receiver's cable, which the HIL checks in the guest pull and put back.

  rig-server.py serve --port N --log UPLINK.jsonl --cable CABLE_FILE [--tls-cert PEM --tls-key PEM]
      (--tls-*: https, with that certificate: the first-boot check's server)
      POST /positions  a WireBatch (docs/servers.md, Tern's protocol): each position is appended to
                       the log as one JSON line {"id","seq","time","device","at"}; answers 200 {}
      POST /cable      body "plugged" or "unplugged": written to CABLE_FILE (uart-bridge.py --control)
  rig-server.py report UPLINK.jsonl[,MORE.jsonl…] STATUS.json [--since-seq N] [--name NAME]
      the uplink check, against the guest's `tern status --json` after the service stopped (its queue's
      last sequence L and the D positions still waiting): the server has each of 1 … L-D exactly
      once, in order, and at least one; prints one line `ok|FAIL  uplink  …` and exits 0 or 1.
      Several logs (servers the queue sent to one after another) are read as one, in that order;
      --since-seq N: positions 1 … N went elsewhere (another server, before this rig): only N+1 on count.
The guest reaches it as http://10.0.2.2:N (QEMU's user-mode network: the guest's connections are
QEMU's own, to 127.0.0.1 here). It listens on 127.0.0.1 only.
"""
import http.server, json, sys, threading, time


def serve(port, log_path, cable_path, tls_cert=None, tls_key=None):
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path.startswith("/cable"):
                state = body.decode().strip()
                if state not in ("plugged", "unplugged"):
                    return self.answer(400, {"error": "say plugged or unplugged"})
                with open(cable_path, "w") as f:
                    f.write(state + "\n")
                return self.answer(200, {"cable": state})
            try:
                batch = json.loads(body)
                rows = [{"id": p["id"], "seq": p["seq"], "time": p["time"], "device": batch["device"],
                         "at": round(time.time(), 3)} for p in batch["positions"]]
            except (ValueError, KeyError, TypeError) as e:
                return self.answer(400, {"error": "not a WireBatch: %s" % e})
            with lock, open(log_path, "a") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")
            self.answer(200, {})

        def answer(self, code, obj):
            data = json.dumps(obj).encode()
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass

        def log_message(self, *a):
            pass

    open(log_path, "a").close()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    if tls_cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls_cert, tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


def report(log_paths, status_path, since_seq=0, name="uplink"):
    rows = [json.loads(l) for path in log_paths.split(",") for l in open(path) if l.strip()]
    try:
        queue = json.load(open(status_path))["queue"]
        last, waiting = int(queue["last_sequence"] or 0), int(queue["depth"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("FAIL  %-10s no queue figures from the guest's `tern status --json` (%s): %s" % (name, status_path, e))
        return 1
    seqs = [r["seq"] for r in rows]
    ids = [r["id"] for r in rows]
    expected = list(range(since_seq + 1, last - waiting + 1))
    problems = []
    if not rows:
        problems.append("no position reached the server")
    if len(set(ids)) != len(ids):
        problems.append("%d positions arrived twice" % (len(ids) - len(set(ids))))
    if any(b <= a for a, b in zip(seqs, seqs[1:])):
        problems.append("out of order")
    missing = sorted(set(expected) - set(seqs))
    extra = sorted(set(seqs) - set(expected))
    if missing:
        problems.append("lost: seq %s sent according to the queue, not at the server" % missing[:10])
    if extra:
        problems.append("seq %s at the server but still waiting in the queue" % extra[:10])
    detail = "%d positions from %s at the server on the host (seq %s), the guest's queue: last %d, %d waiting" % (
        len(rows), rows[0]["device"] if rows else "-", "%d-%d" % (seqs[0], seqs[-1]) if seqs else "none", last, waiting)
    print("%s  %-10s %s%s" % ("FAIL" if problems else "ok  ", name, detail, ": " + "; ".join(problems) if problems else
                                   ": each exactly once, in order"))
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("mode")
        p.add_argument("--port", type=int, required=True)
        p.add_argument("--log", required=True)
        p.add_argument("--cable", required=True)
        p.add_argument("--tls-cert")
        p.add_argument("--tls-key")
        a = p.parse_args()
        serve(a.port, a.log, a.cable, a.tls_cert, a.tls_key)
    elif len(sys.argv) >= 4 and sys.argv[1] == "report":
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("mode")
        p.add_argument("logs")
        p.add_argument("status")
        p.add_argument("--since-seq", type=int, default=0)
        p.add_argument("--name", default="uplink")
        a = p.parse_args()
        sys.exit(report(a.logs, a.status, a.since_seq, a.name))
    else:
        sys.exit(__doc__)
