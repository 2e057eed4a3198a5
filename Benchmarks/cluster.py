#!/usr/bin/env python3
"""Benchmarks of several servers on one folder through PostgreSQL, beside one
server with its log on disk, in one run.

    Benchmarks/cluster-run [options]        # builds, then runs this
    python3 Benchmarks/cluster.py --binary PATH [options]

1. throughput  --files files created at once on disk under the leader; the
               time from the first until the last one's `added` record is
               read back through /api/changes, on a follower (the leader's
               observer writes the records into the database, the follower
               reads them from it), beside one server alone with its log on
               disk (read from itself). Records per second = files / time.
2. latency     From a file closed on disk to its `added` event at a client of
               /api/events (p50/p99 of --changes files, one every 20 ms): on a
               follower, beside one server alone.

PostgreSQL is a throwaway one, as the tests start it: initdb into a temporary
folder, a Unix socket there, no TCP, no password (as root, run as the user
postgres through setpriv). fsync stays on (--pg-fsync off to turn it off), so
a commit costs what it costs in production on this disk.

Only the standard library. Every process started is stopped and every
temporary folder removed on every way out.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import PROCS, BenchError, log, reproduce_line, spawn, stop, stop_all, table  # noqa: E402
from changelog import EventReader  # noqa: E402
from pgtemp import PostgresTemp  # noqa: E402


# --------------------------------------------------------------------------
# Servers

def serve(binary, folder, database=None):
    """Starts `fileshare serve` on a free port; returns (process, base URL)."""
    argv = [binary, "serve", folder, "--port", "0", "--no-auth"]
    if database:
        argv += ["--database", database]
    proc = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    first = proc.stdout.readline().decode()
    if not first.startswith("Serving "):
        raise BenchError(f"fileshare serve did not start: {first!r}")
    return proc, first.split()[-1].rstrip("/")


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def wait_for_leader(urls, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        leading = [u for u in urls if get_json(u + "/api/info").get("leader") is True]
        if len(leading) == 1:
            return leading[0]
        time.sleep(0.1)
    raise BenchError("no single leader")


def count_added(url, since, names):
    """Reads /api/changes from `since` on; returns (next cursor, names seen added)."""
    seen = set()
    cursor = since
    while True:
        page = get_json(f"{url}/api/changes?since={cursor}&limit=10000")
        for record in page.get("changes", []):
            if record.get("type") == "added" and record.get("path") in names:
                seen.add(record["path"])
        if not page.get("changes") or page.get("next", cursor) == cursor:
            return cursor, seen
        cursor = page["next"]


def cluster(args, tmp, database, count):
    """`count` servers on a new folder (with the database, or one alone without): (folder, urls, leader)."""
    folder = tempfile.mkdtemp(dir=tmp)
    urls = []
    for _ in range(count):
        _, url = serve(args.binary, folder, database)
        urls.append(url)
    leader = wait_for_leader(urls)
    return folder, urls, leader


def bench_throughput(args, tmp, database):
    rows, results = [], {}
    setups = [("one server, log on disk", None, 1), ("follower of a leader, log in PostgreSQL", database, 2)]
    for name, db, count in setups:
        folder, urls, leader = cluster(args, tmp, db, count)
        reader = next((u for u in urls if u != leader), leader)
        since, _ = count_added(reader, 0, set())
        names = {f"burst-{i:05d}.txt" for i in range(args.files)}
        began = time.monotonic()
        for path in sorted(names):
            with open(os.path.join(folder, path), "wb") as f:
                f.write(b"x")
        made = time.monotonic() - began
        seen = set()
        cursor = since
        deadline = time.monotonic() + 300
        while len(seen) < len(names) and time.monotonic() < deadline:
            cursor, more = count_added(reader, cursor, names)
            seen |= more
            if len(seen) < len(names):
                time.sleep(0.005)
        elapsed = time.monotonic() - began
        if len(seen) < len(names):
            raise BenchError(f"{name}: {len(names) - len(seen)} of {len(names)} records never read back")
        rate = args.files / elapsed
        results[name] = {"files": args.files, "seconds": elapsed, "records_per_second": rate, "create_seconds": made}
        rows.append([name, args.files, f"{made:.2f}", f"{elapsed:.2f}", f"{rate:,.0f}"])
        stop_all_servers()
    print("\nFiles created at once on disk, until the last `added` record is read back through /api/changes")
    print(table(["setup", "files", "create s", "read back s", "records/s"], rows))
    return results


def bench_latency(args, tmp, database):
    rows, results = [], {}
    setups = [("one server, log on disk", None, 1), ("client of a follower, log in PostgreSQL", database, 2)]
    for name, db, count in setups:
        folder, urls, leader = cluster(args, tmp, db, count)
        reader = next((u for u in urls if u != leader), leader)
        host, port = reader.split("//")[1].rsplit(":", 1)
        seen = {}
        sock = socket.create_connection((host.strip("[]"), int(port)))
        sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
        header = b""
        while b"retry:" not in header:
            header += sock.recv(4096)
        EventReader(lambda: sock.recv(65536), seen).start()
        closed = {}
        for i in range(args.changes):
            path = f"latency-{i:04d}.txt"
            with open(os.path.join(folder, path), "wb") as f:
                f.write(b"x")
            closed[path] = time.monotonic()
            time.sleep(0.02)
        deadline = time.monotonic() + 30
        while len(seen) < len(closed) and time.monotonic() < deadline:
            time.sleep(0.05)
        sock.close()
        stop_all_servers()
        delays = sorted((seen[p] - closed[p]) * 1000 for p in closed if p in seen)
        if len(delays) < len(closed):
            raise BenchError(f"{name}: {len(closed) - len(delays)} of {len(closed)} changes never arrived")
        figures = {"p50_ms": statistics.median(delays), "p99_ms": delays[int(len(delays) * 0.99) - 1],
                   "max_ms": delays[-1]}
        results[name] = figures
        rows.append([name, len(delays), f"{figures['p50_ms']:.1f}", f"{figures['p99_ms']:.1f}",
                     f"{figures['max_ms']:.1f}"])
    print("\nFrom a file closed on disk (under the leader) to its `added` event at a client of /api/events")
    print(table(["setup", "changes", "p50 ms", "p99 ms", "max ms"], rows))
    return results


def stop_all_servers():
    """Stops every fileshare serve started so far (PostgreSQL stays)."""
    for proc in list(PROCS):
        if proc.args and os.path.basename(str(proc.args[0])) == "fileshare":
            stop(proc, "fileshare serve")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="fileshare")
    parser.add_argument("--files", type=int, default=5000, help="files created at once for the throughput")
    parser.add_argument("--changes", type=int, default=300, help="changes timed for the latency (at least 200)")
    parser.add_argument("--only", choices=["throughput", "latency"])
    parser.add_argument("--pg-fsync", choices=["on", "off"], default="on")
    parser.add_argument("--quick", action="store_true", help="1,000 files and 200 changes")
    args = parser.parse_args()
    if args.quick:
        args.files, args.changes = 1000, 200
    tmp = tempfile.mkdtemp(prefix="fileshare-cluster-bench-")
    results = {}
    try:
        with PostgresTemp(tmp, fsync=args.pg_fsync == "on") as postgres:
            try:
                if args.only in (None, "throughput"):
                    results["throughput"] = bench_throughput(args, tmp, postgres.url)
                if args.only in (None, "latency"):
                    results["latency"] = bench_latency(args, tmp, postgres.url)
            finally:
                stop_all_servers()
    except BenchError as error:
        log(f"error: {error}")
        return 1
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n" + reproduce_line("Benchmarks/cluster-run", sys.argv[1:]))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
