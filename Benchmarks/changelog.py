#!/usr/bin/env python3
"""Benchmarks of the change log, side by side in one run.

    Benchmarks/changelog-run [options]      # builds, then runs this
    python3 Benchmarks/changelog.py --binary PATH --bench PATH [--baseline PATH] [options]

1. appends   Durable appends per second of the on-disk log (group commit:
             one fdatasync for whatever is pending), --records observer-like
             records (~250 bytes of JSON each) in batches of 100 (as the
             observer hands them over) and of 1; and how long one lone append
             takes to become durable (p50/p99). Beside it, in the same run:
             SQLite (Python's sqlite3, WAL, synchronous=FULL, one transaction
             per batch) and a plain file with an fdatasync after every record.
2. latency   From a file closed on disk to its `added` event at a client of
             /api/events (p50/p99 of --files files, one every 20 ms), for this
             build and, with --baseline, the server as it was before the log
             (events fanned out from memory), each started fresh on its own
             folder; and `fileshare watch --json` (kernel event to stdout) as
             the floor.
3. fanout    --clients event streams while --fanout-files files arrive at
             once (Tests/Load/sse_fairness.py): when the median and the last
             client had every record, against the floor of when the last file
             was made, and the longest any stream waited for bytes while the
             log held records for it ("starved"): no stream may be left
             behind while others are served.

Only the standard library. Every process started is stopped and every
temporary folder removed on every way out.
"""

import argparse
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import BenchError, log, reproduce_line, spawn, stop, stop_all, table  # noqa: E402

PAYLOAD = ('{"seq":%d,"time":"2026-11-24T03:04:05.678Z","type":"added","path":"Photos/2026/November/IMG_%d.jpg",'
           '"id":"9e3779b97f4a7c15","kind":"file","size":%d,"writing":false}')


def bench_appends(args, tmp):
    rows = []
    results = {}
    for batch in (100, 1):
        records = args.records if batch > 1 else max(1, args.records // 20)
        folder = tempfile.mkdtemp(dir=tmp)
        out = subprocess.run([args.bench, os.path.join(folder, "changes"), str(records), str(batch)],
                             capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise BenchError(f"changelog-bench failed: {out.stdout}{out.stderr}")
        figures = json.loads(out.stdout.strip().splitlines()[-1])
        results[f"fileshare/{batch}"] = figures
        rows.append([f"fileshare log, batches of {batch}", records, f"{figures['appends_per_second']:,.0f}",
                     f"{figures['lone_p50_ms']:.2f}", f"{figures['lone_p99_ms']:.2f}"])

        path = os.path.join(tempfile.mkdtemp(dir=tmp), "log.sqlite")
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE changes (seq INTEGER PRIMARY KEY, record TEXT NOT NULL)")
        began = time.monotonic()
        index = 0
        while index < records:
            count = min(batch, records - index)
            db.execute("BEGIN")
            db.executemany("INSERT INTO changes (seq, record) VALUES (?, ?)",
                           ((i + 1, PAYLOAD % (i + 1, i, i * 1000)) for i in range(index, index + count)))
            db.execute("COMMIT")
            index += count
        elapsed = time.monotonic() - began
        lone = []
        for i in range(200):
            t = time.monotonic()
            db.execute("BEGIN")
            db.execute("INSERT INTO changes (seq, record) VALUES (?, ?)", (records + i + 1, PAYLOAD % (i, i, i)))
            db.execute("COMMIT")
            lone.append(time.monotonic() - t)
        db.close()
        lone.sort()
        results[f"sqlite/{batch}"] = {"appends_per_second": records / elapsed}
        rows.append([f"SQLite WAL synchronous=FULL, a commit per batch of {batch}", records, f"{records / elapsed:,.0f}",
                     f"{lone[100] * 1000:.2f}", f"{lone[198] * 1000:.2f}"])

    # A plain file, flushed after every record: what a log without group commit pays.
    path = os.path.join(tempfile.mkdtemp(dir=tmp), "plain.log")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    count = max(200, args.records // 100)
    lone = []
    began = time.monotonic()
    for i in range(count):
        t = time.monotonic()
        os.write(fd, (PAYLOAD % (i, i, i) + "\n").encode())
        os.fdatasync(fd)
        lone.append(time.monotonic() - t)
    elapsed = time.monotonic() - began
    os.close(fd)
    lone.sort()
    results["plain/1"] = {"appends_per_second": count / elapsed}
    rows.append(["plain file, fdatasync per record", count, f"{count / elapsed:,.0f}",
                 f"{lone[len(lone) // 2] * 1000:.2f}", f"{lone[int(len(lone) * 0.99)] * 1000:.2f}"])
    print("\nDurable appends per second (same disk, same run)")
    print(table(["log", "records", "appends/s", "lone p50 ms", "lone p99 ms"], rows))
    ratio = results["fileshare/100"]["appends_per_second"] / results["sqlite/100"]["appends_per_second"]
    print(f"fileshare / SQLite, batches of 100: {ratio:.2f}x")
    return results


class EventReader(threading.Thread):
    """Reads /api/events (or watch's stdout) and notes when each path's `added` arrives."""

    def __init__(self, stream, seen):
        super().__init__(daemon=True)
        self.stream = stream
        self.seen = seen

    def run(self):
        pending = b""
        while True:
            try:
                chunk = self.stream()
            except OSError:
                return
            if not chunk:
                return
            now = time.monotonic()
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                start = line.find(b"{")
                if start < 0 or b'"type":"added"' not in line:
                    continue
                try:
                    event = json.loads(line[start:])
                except ValueError:
                    continue
                self.seen.setdefault(event.get("path"), now)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure_latency(name, argv, folder, files, sse):
    seen = {}
    proc = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        if sse:
            first = proc.stdout.readline().decode()
            if not first.startswith("Serving "):
                raise BenchError(f"{name} did not start: {first!r}")
            port = int(first.rsplit(":", 1)[1].strip().rstrip("/"))
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
            header = b""
            while b"retry:" not in header:
                header += sock.recv(4096)
            reader = EventReader(lambda: sock.recv(65536), seen)
        else:
            while b"scan-completed" not in proc.stdout.readline():
                pass
            reader = EventReader(lambda: os.read(proc.stdout.fileno(), 65536), seen)
        reader.start()
        closed = {}
        for i in range(files):
            path = f"latency-{i:04d}.txt"
            with open(os.path.join(folder, path), "wb") as f:
                f.write(b"x")
            closed[path] = time.monotonic()
            time.sleep(0.02)
        deadline = time.monotonic() + 10
        while len(seen) < files and time.monotonic() < deadline:
            time.sleep(0.05)
        if sse:
            sock.close()
    finally:
        stop(proc, name)
    delays = sorted((seen[p] - closed[p]) * 1000 for p in closed if p in seen)
    if len(delays) < files:
        raise BenchError(f"{name}: {files - len(delays)} of {files} files never arrived")
    return {"p50_ms": statistics.median(delays), "p99_ms": delays[int(len(delays) * 0.99) - 1], "max_ms": delays[-1]}


def bench_latency(args, tmp):
    runs = [("fileshare serve (change log)", args.binary, True)]
    if args.baseline:
        runs.append(("fileshare serve before the log", args.baseline, True))
    runs.append(("fileshare watch --json (floor)", args.binary, False))
    results = {}
    rows = []
    for name, binary, sse in runs:
        folder = tempfile.mkdtemp(dir=tmp)
        argv = ([binary, "serve", folder, "--port", str(free_port()), "--no-auth"] if sse
                else [binary, "watch", folder, "--json", "--latency", "0.05"])
        figures = measure_latency(name, argv, folder, args.files, sse)
        results[name] = figures
        rows.append([name, args.files, f"{figures['p50_ms']:.2f}", f"{figures['p99_ms']:.2f}", f"{figures['max_ms']:.2f}"])
    print("\nFrom a file closed on disk to its `added` event at the client (same run)")
    print(table(["path", "files", "p50 ms", "p99 ms", "max ms"], rows))
    if args.baseline:
        new = results["fileshare serve (change log)"]["p99_ms"]
        old = results["fileshare serve before the log"]["p99_ms"]
        print(f"p99 with the log: {new:.2f} ms against {old:.2f} ms before it ({new - old:+.2f} ms)")
    return results


def bench_fanout(args, tmp):
    folder = tempfile.mkdtemp(dir=tmp)
    port = free_port()
    server = spawn([args.binary, "serve", folder, "--port", str(port), "--no-auth"],
                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        first = server.stdout.readline().decode()
        if not first.startswith("Serving "):
            raise BenchError(f"fileshare serve did not start: {first!r}")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Load", "sse_fairness.py")
        run = subprocess.run(
            [sys.executable, script, "--url", f"http://127.0.0.1:{port}", "--folder", folder,
             "--clients", str(args.clients), "--files", str(args.fanout_files)],
            capture_output=True, text=True, timeout=600)
    finally:
        stop(server, "fileshare serve")
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines:
        raise BenchError(f"sse_fairness.py exited with {run.returncode}: {run.stderr[-500:]}")
    summary = json.loads(lines[-1])
    if summary.get("errors") or summary.get("complete_clients") != args.clients or not summary.get("verified_in_order"):
        raise BenchError(f"not every client got every record in order: {summary}")
    made = summary["made_seconds"]
    print(f"\n{args.clients} event streams while {args.fanout_files} files arrive (same run)")
    print(table(["", "seconds"], [
        ["the last file made (the floor)", f"{made:.2f}"],
        ["the median stream had every record", f"{summary['done_median_seconds']:.2f}"],
        ["the last stream had every record", f"{summary['done_worst_seconds']:.2f}"],
        ["the longest a stream waited while the log held records for it", f"{summary['max_starved_seconds']:.2f}"],
        ["the same, median of the streams", f"{summary['median_starved_seconds']:.2f}"],
    ]))
    print(f"the last stream complete {summary['done_worst_seconds'] - made:+.2f} s after the floor")
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="fileshare, release build")
    parser.add_argument("--bench", required=True, help="changelog-bench, release build")
    parser.add_argument("--baseline", help="fileshare as it was before the change log, release build")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--clients", type=int, default=200, help="fanout: event streams")
    parser.add_argument("--fanout-files", type=int, default=10_000, help="fanout: files made at once")
    parser.add_argument("--only", choices=["appends", "latency", "fanout"])
    parser.add_argument("--quick", action="store_true", help="20,000 records, 100 files, 50 streams of 2,000 files")
    args = parser.parse_args()
    if args.quick:
        args.records, args.files, args.clients, args.fanout_files = 20_000, 100, 50, 2_000
    tmp = tempfile.mkdtemp(prefix="fileshare-changelog-bench-")
    results = {}
    try:
        if args.only in (None, "appends"):
            results["appends"] = bench_appends(args, tmp)
        if args.only in (None, "latency"):
            results["latency"] = bench_latency(args, tmp)
        if args.only in (None, "fanout"):
            results["fanout"] = bench_fanout(args, tmp)
    except BenchError as error:
        log(f"error: {error}")
        return 1
    finally:
        stop_all()
        subprocess.run(["rm", "-rf", tmp])
    # The wrapper builds the bench and the baseline itself: leave them out (with their values).
    argv, skip = [], False
    for a in sys.argv[1:]:
        if skip:
            skip = False
        elif a in ("--bench", "--baseline"):
            skip = True
        elif not a.startswith(("--bench=", "--baseline=")):
            argv.append(a)
    print("\n" + reproduce_line("Benchmarks/changelog-run", argv))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
