#!/usr/bin/env python3
"""WebDAV benchmarks for `fileshare serve` (its face at /dav/), side by side with peers in the same run.

    Benchmarks/dav-run [options]                    # installs peers, builds, runs this
    python3 Benchmarks/dav.py --binary PATH [options]

Every server shares the same generated folder on 127.0.0.1 (a free port),
one server at a time, each started fresh for each figure and each round, with
no authentication (fileshare with --no-auth: none of the peers is
authenticated either). WebDAV roots: fileshare http://127.0.0.1:P/dav/ (P
read from its first line on stdout), wsgidav and rclone http://127.0.0.1:P/.

1. propfind  PROPFIND, Depth: 1, of a folder of --items files (default
             10,000), with the same allprop body for every server. First one
             request alone with curl, five times (the median is reported, with
             the size of the answer); the first answer must be a 207 that lists
             --items + 1 <response> elements (the folder and each file; counted
             case-insensitively, with any namespace prefix). A server that
             fails this check is reported as failed, with the status or count
             it gave, and is not measured. Then a 1 s warm-up and wrk with a Lua
             script: -c 50 -t 2 -d --duration (default 10 s) --latency,
             requests per second and p50/p99 latency.
             Then, on the same server, PROPFIND Depth: 0 of single files
             (the same body), the folder's files asked for in turn, as a
             WebDAV client asks before nearly everything it does: the first
             answer must be a 207 with one <response>; a 1 s warm-up, then
             wrk -c --item-connections (default 8) -t 2 -d --duration.
2. transfer  PUT of a --size file (default 1 GiB) with `curl -T FILE`, timed
             until the server answers, and that time plus an fsync of the
             uploaded file right after (fileshare fsyncs before it answers, the
             peers do not), so the bytes are on the disk for every server; the
             uploaded file's size is checked. Then GET of the same file (the
             shared blob.bin, read beforehand into the page cache) with
             `curl -o /dev/null`. Median of --runs rounds (default 3); in each
             round every server is started, measured once and stopped.

3. locks     LOCK + UNLOCK pairs per second through /dav/ (exclusive, Depth 0,
             each client on a file of its own, so none waits for another's
             lock), from --lock-clients threads (default 8) on keep-alive
             connections for --lock-duration seconds (default 10) after a 1 s
             warm-up: fileshare alone with its locks in the process (and its
             file), then with --database on a throwaway PostgreSQL (Debian's
             postgresql, started under the temporary folder, fsync on), where
             each LOCK and UNLOCK is a transaction under the folder's advisory
             lock. No peer: their locks are not shared between servers. Every
             LOCK must answer 200 with a Lock-Token and every UNLOCK 204;
             anything else is counted and reported. p50/p99 are of one pair.

Ratios are against fileshare and always fileshare's figure divided by the
other server's ("fs / this"): for req/s and MiB/s above 1 means fileshare is
faster; for latencies and times below 1 means fileshare is faster.

Peers: wsgidav (cheroot, default settings, --auth anonymous) and
`rclone serve webdav DIR --addr 127.0.0.1:P` (defaults: --vfs-cache-mode off,
a 5 min directory cache; its config and cache folders are pointed into the
temporary folder). A peer that is not installed is skipped and said so. A
figure that fails for a server (fileshare's /dav/ answering 404 or 405, an
upload of the wrong size, a server that does not start) is reported as
failed with what it got, and the run goes on with the others.

Processes, the folder, servers, wrk and the tables come from serve.py (imported);
only the Python standard library, curl and wrk are used. Every process started
is stopped and every temporary file removed on every way out.
"""

import argparse
import collections
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import threading
import urllib.request

sys.dont_write_bytecode = True   # importing serve.py leaves no __pycache__ behind
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve  # noqa: E402
from benchcommon import reproduce_line  # noqa: E402
from serve import GiB, MiB, BenchError, log, now  # noqa: E402
from pgtemp import PostgresTemp  # noqa: E402

BENCHES = ("propfind", "transfer", "locks")
SINGLE_RUNS = 5


# --------------------------------------------------------------------------
# Servers: serve.py's, seen through their WebDAV root.

class Dav:
    """Mixed in before a serve.Server: its files and folders at the WebDAV root."""
    dav_root = "/"

    def dav_url(self, rel=""):
        return f"{self.base}{self.dav_root}{rel}"

    def file_url(self, rel):
        return self.dav_url(rel)

    def collection_url(self):
        return self.dav_url("big/")


class Fileshare(Dav, serve.Fileshare):
    # Readiness stays serve.py's (GET /api/list), so a /dav/ that does not answer yet
    # is reported per figure instead of as a server that never started.
    dav_root = "/dav/"


class Wsgidav(Dav, serve.Wsgidav):
    pass


class Rclone(Dav, serve.Server):
    name = "rclone"
    ready = serve.Wsgidav.ready   # an answer to OPTIONS /

    def available(self):
        self.exe = shutil.which("rclone")
        if not self.exe:
            return False, "not installed (Debian: apt-get install rclone)"
        self.note = "serve webdav, defaults (--vfs-cache-mode off, --dir-cache-time 5m)"
        return True, ""

    def version(self):
        out = subprocess.run([self.exe, "version"], capture_output=True, text=True).stdout
        return out.splitlines()[0].strip() if out.strip() else "rclone"

    def argv(self, port):
        return [self.exe, "serve", "webdav", self.share, "--addr", f"127.0.0.1:{port}",
                "--config", os.path.join(self.tmp, "rclone.conf"),
                "--cache-dir", os.path.join(self.tmp, "rclone-cache"), "--log-level", "NOTICE"]


PEERS = {"wsgidav": Wsgidav, "rclone": Rclone}


def started(s, failures, keys):
    """Starts s; False, with why under every key, if it does not start."""
    try:
        s.start()
        return True
    except BenchError as error:
        for key in keys:
            failures.setdefault(key, f"did not start: {error}")
        log(f"{s.name}: did not start: {error}")
        s.stop()
        return False


def attempt(failures, key, fn, *a):
    """fn(*a), or None with the first failure's message kept under `key`."""
    try:
        return fn(*a)
    except BenchError as error:
        failures.setdefault(key, str(error))
        log(f"{key[0]}: {key[1]}: failed: {error}")
        return None


def ratio(fs, value):
    """fileshare's figure over this one (see the module's doc); '-' where either is missing."""
    if not fs or not value:
        return "-"
    return f"{fs / value:.2f}"


# --------------------------------------------------------------------------
# 1. PROPFIND Depth 1

def curl_propfind(url, body_path, timeout):
    argv = ["curl", "-s", "-X", "PROPFIND", "-o", body_path,
            "-w", "%{http_code} %{size_download} %{time_total}", "--data-binary", serve.PROPFIND_BODY.decode()]
    for key, value in serve.PROPFIND_HEADERS.items():
        argv += ["-H", f"{key}: {value}"]
    rc, out, err = serve.run(argv + [url], timeout)
    if rc != 0:
        raise BenchError(f"curl -X PROPFIND {url}: exit {rc} {err.strip()}")
    code, size, seconds = out.split()
    return code, int(size), float(seconds)


def propfind_alone(s, args, tmp):
    """Five PROPFINDs one after the other; the first answer is checked. Returns (median s, bytes)."""
    body_path = os.path.join(tmp, "propfind.xml")
    times, size = [], 0
    for i in range(SINGLE_RUNS):
        code, size, seconds = curl_propfind(s.collection_url(), body_path, args.curl_timeout)
        if code != "207":
            raise BenchError(f"PROPFIND {s.collection_url()}: HTTP {code}, not 207")
        if i == 0:
            with open(body_path, "rb") as f:
                count = serve.count_dav_responses(f.read())
            if count != args.items + 1:
                raise BenchError(f"PROPFIND {s.collection_url()}: {count} <response> elements, "
                                 f"not {args.items + 1} (the folder and its {args.items} files)")
        times.append(seconds)
    os.unlink(body_path)
    return statistics.median(times), size


def propfind_item_lua(tmp, s, count):
    """A wrk script that sends PROPFIND Depth: 0 of big/'s files in turn to s; returns its path."""
    path = os.path.join(tmp, f"propfind-item-{s.name}.lua")
    root = s.dav_root + "big/"
    with open(path, "w") as f:
        f.write(f"local i = 0\nlocal body = '{serve.PROPFIND_BODY.decode()}'\n")
        f.write("request = function()\n")
        f.write(f"  i = (i + 1) % {count}\n")
        f.write(f'  return wrk.format("PROPFIND", string.format("{root}file-%05d.txt", i), '
                '{Depth = "0", ["Content-Type"] = "application/xml"}, body)\n')
        f.write("end\n")
    return path


def propfind_item_check(s, args, tmp):
    """One PROPFIND Depth: 0 of a file: True for a 207 with one <response>, or BenchError."""
    body_path = os.path.join(tmp, "propfind-item.xml")
    argv = ["curl", "-s", "-X", "PROPFIND", "-o", body_path, "-w", "%{http_code}", "-H", "Depth: 0",
            "-H", "Content-Type: application/xml", "--data-binary", serve.PROPFIND_BODY.decode(),
            s.dav_url("big/file-00000.txt")]
    rc, out, err = serve.run(argv, args.curl_timeout)
    if rc != 0:
        raise BenchError(f"curl -X PROPFIND (Depth 0): exit {rc} {err.strip()}")
    with open(body_path, "rb") as f:
        count = serve.count_dav_responses(f.read())
    os.unlink(body_path)
    if out.strip() != "207" or count != 1:
        raise BenchError(f"PROPFIND Depth 0 of a file: HTTP {out.strip()}, {count} <response> elements, not 207 and 1")
    return True


def bench_propfind_item(s, args, tmp, results):
    """PROPFIND Depth: 0 of single files on the started server s."""
    r, failures = results["propfind item"], results["propfind item failures"]
    key = ("propfind item", s.name)
    few = argparse.Namespace(**{**vars(args), "connections": args.item_connections})
    script = propfind_item_lua(tmp, s, args.items)
    log(f"propfind item: {s.name}, Depth 0 of single files, wrk -c {few.connections} -d {args.duration}s")
    if attempt(failures, key, propfind_item_check, s, args, tmp) is None:
        return
    if attempt(failures, key, serve.run_wrk, s.dav_url(), few, script, 1) is None:
        return  # warm-up
    w = attempt(failures, key, serve.run_wrk, s.dav_url(), few, script, args.duration)
    if w is not None:
        r[s.name] = w


def bench_propfind(args, tmp, share, servers, results):
    r = results["propfind"] = {}
    failures = results["propfind failures"] = {}
    results["propfind item"], results["propfind item failures"] = {}, {}
    script = serve.propfind_lua(tmp)
    for s in servers:
        log(f"propfind: {s.name}, {args.items} items, wrk -c {args.connections} -d {args.duration}s")
        if not started(s, failures, [("propfind", s.name)]):
            continue
        try:
            alone = attempt(failures, ("propfind", s.name), propfind_alone, s, args, tmp)
            if alone is None:
                continue
            if attempt(failures, ("propfind", s.name), serve.run_wrk, s.collection_url(), args, script, 1) is None:
                continue  # warm-up
            w = attempt(failures, ("propfind", s.name), serve.run_wrk, s.collection_url(), args, script,
                        args.duration)
            if w is not None:
                w["single"], w["bytes"] = alone
                r[s.name] = w
            bench_propfind_item(s, args, tmp, results)
        finally:
            s.stop()


def server_rows(servers, r, failures, key, columns, row):
    """A table's rows, one per server of `columns` cells: its name and row(its
    figures) where measured; 'failed' where not, with a note saying why."""
    rows, notes = [], []
    for s in servers:
        w = r.get(s.name)
        if w is None:
            rows.append([s.name, "failed"] + ["-"] * (columns - 2))
            notes.append(f"{s.name} failed: {failures.get((key, s.name), 'not measured')}")
        else:
            rows.append([s.name] + row(w))
    return rows, notes


def report_propfind(results, args, servers):
    r, failures = results["propfind"], results["propfind failures"]
    out = [f"## 1. PROPFIND Depth: 1 of a folder of {args.items:,} files (allprop body, the same for every "
           f"server): wrk -c {args.connections} -t {args.threads} -d {args.duration}s --latency "
           f"(timeout {args.wrk_timeout} s); one request alone: curl, median of {SINGLE_RUNS}"]
    fs = r.get("fileshare")
    slow = f"> {args.duration * 1000}"  # no request finished within the run
    rows, notes = server_rows(servers, r, failures, "propfind", 11, lambda w: [
        f"{w['rps']:,.1f}", ratio(fs and fs["rps"], w["rps"]),
        serve.ms(w["p50"]) if w["requests"] else slow, serve.ms(w["p99"]) if w["requests"] else slow,
        ratio(fs and fs["p99"], w["p99"]), serve.ms(w["single"]), ratio(fs and fs["single"], w["single"]),
        f"{w['bytes'] / 1024:,.0f}", w["requests"], w["non2xx"] + w["errors"]])
    out.append(serve.table(["server", "req/s", "fs / this", "p50 ms", "p99 ms", "fs / this",
                            "one alone ms", "fs / this", "KiB per answer", "requests", "errors"], rows))
    out.append("")
    out.extend(notes)
    out.append("fs / this: fileshare's figure divided by this server's (req/s: above 1, fileshare serves more; "
               f"p99 and one alone: below 1, fileshare answers sooner). '{slow}': no request finished within "
               "the run. Every server's first answer was checked: 207 with the folder and each file as a "
               "<response>.")
    return "\n".join(out)


def report_propfind_item(results, args, servers):
    r, failures = results["propfind item"], results["propfind item failures"]
    out = [f"## 1b. PROPFIND Depth: 0 of single files (big/'s, in turn; allprop body): wrk -c "
           f"{args.item_connections} -t {args.threads} -d {args.duration}s --latency"]
    fs = r.get("fileshare")
    rows, notes = server_rows(servers, r, failures, "propfind item", 8, lambda w: [
        f"{w['rps']:,.0f}", ratio(fs and fs["rps"], w["rps"]),
        serve.ms(w["p50"]) if w["requests"] else "-", serve.ms(w["p99"]) if w["requests"] else "-",
        ratio(fs and fs["p99"], w["p99"]), w["requests"], w["non2xx"] + w["errors"]])
    out.append(serve.table(["server", "req/s", "fs / this", "p50 ms", "p99 ms", "fs / this", "requests", "errors"],
                           rows))
    out.append("")
    out.extend(notes)
    out.append("Every server's first answer was checked: 207 with one <response>.")
    return "\n".join(out)


# --------------------------------------------------------------------------
# 2. PUT and GET

def put_once(s, share, args, rel, blob):
    serve.page_cache(blob)
    speed = serve.curl_upload(s.file_url(rel), blob, args.size, args.curl_timeout)
    t = now()
    serve.fsync_path(os.path.join(share, rel))
    durable = args.size / (args.size / speed + now() - t)
    serve.check_upload(share, rel, args.size, s.name)
    return speed, durable


def get_once(s, args, blob):
    serve.page_cache(blob)
    return serve.curl_download(s.file_url("blob.bin"), args.size, args.curl_timeout)


def bench_transfer(args, tmp, share, servers, results):
    """Rounds: in each, every server in turn (started, one PUT, one GET, stopped), so that
    whatever else the machine does falls on all of them alike; medians are reported."""
    blob = os.path.join(share, "blob.bin")
    runs = collections.defaultdict(list)   # (kind, name) -> speeds
    failures = results["transfer failures"] = {}
    for i in range(args.runs):
        for s in servers:
            log(f"transfer: round {i + 1}/{args.runs}: {s.name}")
            serve.remove_uploads(share)
            os.sync()
            if not started(s, failures, [("put", s.name), ("get", s.name)]):
                continue
            try:
                put = attempt(failures, ("put", s.name), put_once, s, share, args, f"up/run-{i}.bin", blob)
                if put is not None:
                    runs["put", s.name].append(put[0])
                    runs["durable", s.name].append(put[1])
                get = attempt(failures, ("get", s.name), get_once, s, args, blob)
                if get is not None:
                    runs["get", s.name].append(get)
            finally:
                s.stop()
                serve.remove_uploads(share)
                os.sync()
    results["transfer"] = {key: speeds for key, speeds in runs.items()}


def report_transfer(results, args, servers):
    runs, failures = results["transfer"], results["transfer failures"]

    def median(kind, name):
        # A figure that failed in any round is reported as failed, not as the median of the rest.
        if (kind if kind != "durable" else "put", name) in failures:
            return None
        speeds = runs.get((kind, name))
        return statistics.median(speeds) if speeds else None

    out = [f"## 2. PUT and GET of a {serve.human(args.size)} file on loopback (curl), median of {args.runs} "
           f"rounds (in each, every server started fresh and measured once)"]
    fs = {kind: median(kind, "fileshare") for kind in ("put", "durable", "get")}
    rows, notes = [], []
    for s in servers:
        row = [s.name]
        for kind in ("put", "durable", "get"):
            value = median(kind, s.name)
            row += ["failed" if value is None else serve.gbps(value), ratio(fs[kind], value)]
        rows.append(row)
        for kind in ("put", "get"):
            if (kind, s.name) in failures:
                notes.append(f"{s.name} {kind.upper()} failed: {failures[kind, s.name]}")
    out.append(serve.table(["server", "PUT MiB/s", "fs / this", "PUT+fsync MiB/s", "fs / this",
                            "GET MiB/s", "fs / this"], rows))
    out.append("")
    out.extend(notes)
    out.append("PUT: curl -T, timed until the server answers (fileshare fsyncs before it answers, the peers do "
               "not); PUT+fsync: plus an fsync of the uploaded file right after, so the bytes are on the disk "
               "for every server; every upload's size was checked on disk. GET: curl -o /dev/null of the "
               "shared file, from the page cache. fs / this: fileshare's MiB/s divided by this server's "
               "(above 1: fileshare is faster).")
    return "\n".join(out)


# --------------------------------------------------------------------------
# locks

LOCK_BODY = ('<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/>'
             '</D:lockscope><D:locktype><D:write/></D:locktype><D:owner>bench</D:owner></D:lockinfo>')


class LockingFileshare(serve.Fileshare):
    """fileshare for the locks figure: ready when it answers /api/info, with --database when given one."""

    def __init__(self, args, tmp, share, name, database=None):
        super().__init__(args, tmp, share)
        self.name = name
        self.database = database

    def argv(self, port):
        return super().argv(port) + (["--database", self.database] if self.database else [])

    def ready(self):
        try:
            with urllib.request.urlopen(f"{self.base}/api/info", timeout=10) as r:
                return r.status == 200
        except (OSError, ValueError):
            return False


def lock_pairs(base, path, deadline, stats):
    """LOCK then UNLOCK `path` until `deadline` on one keep-alive connection; adds to stats."""
    host, port = base.split("//", 1)[1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    pairs, errors, times = 0, collections.Counter(), []
    try:
        while now() < deadline:
            start = now()
            connection.request("LOCK", path, LOCK_BODY, {"Content-Type": "text/xml", "Depth": "0",
                                                         "Timeout": "Second-60"})
            response = connection.getresponse()
            response.read()
            token = response.getheader("Lock-Token")
            if response.status != 200 or not token:
                errors[f"LOCK {response.status}"] += 1
                continue
            connection.request("UNLOCK", path, headers={"Lock-Token": token})
            response = connection.getresponse()
            response.read()
            if response.status != 204:
                errors[f"UNLOCK {response.status}"] += 1
                continue
            pairs += 1
            times.append(now() - start)
    except (OSError, http.client.HTTPException) as error:
        errors[type(error).__name__] += 1
    finally:
        connection.close()
    with stats["mutex"]:
        stats["pairs"] += pairs
        stats["errors"].update(errors)
        stats["times"].extend(times)


def lock_round(s, args, duration):
    """Pairs per second (and the pairs' latencies) of --lock-clients threads for `duration` s."""
    stats = {"mutex": threading.Lock(), "pairs": 0, "errors": collections.Counter(), "times": []}
    deadline = now() + duration
    started = now()
    threads = [threading.Thread(target=lock_pairs, args=(s.base, f"/dav/locks/c{i}.txt", deadline, stats))
               for i in range(args.lock_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return stats["pairs"] / (now() - started), sorted(stats["times"]), stats["errors"]


def bench_locks(args, tmp, share, servers, results):
    os.makedirs(os.path.join(share, "locks"), exist_ok=True)
    for i in range(args.lock_clients):
        with open(os.path.join(share, "locks", f"c{i}.txt"), "w") as f:
            f.write("locked again and again\n")
    figures = {}

    def measure(name, database):
        s = LockingFileshare(args, tmp, share, f"fileshare ({name})", database)
        try:
            s.start()
            log(f"locks: {s.name}, {args.lock_clients} clients, {args.lock_duration} s")
            lock_round(s, args, 1)   # warm-up
            figures[name] = lock_round(s, args, args.lock_duration)
        except BenchError as error:
            figures[name] = error
        finally:
            s.stop()

    measure("file", None)
    try:
        with PostgresTemp(tmp) as pg:
            results["locks-postgres"] = pg.version()
            measure("database", pg.url)
    except BenchError as error:
        figures["database"] = error
    results["locks"] = figures


def report_locks(results, args):
    figures = results["locks"]
    out = [f"LOCK + UNLOCK pairs, {args.lock_clients} clients on keep-alive connections, "
           f"{args.lock_duration} s ({results.get('locks-postgres', 'PostgreSQL')} for --database)"]
    rows, notes = [], []
    file_rate = figures.get("file")[0] if isinstance(figures.get("file"), tuple) else None
    for name, label in (("file", "in the process (file)"), ("database", "in PostgreSQL (--database)")):
        figure = figures.get(name)
        if not isinstance(figure, tuple):
            rows.append([label, "failed", "", "", ""])
            notes.append(f"{label}: {figure}")
            continue
        rate, times, errors = figure
        p50 = times[len(times) // 2] * 1000 if times else 0
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000 if times else 0
        rows.append([label, f"{rate:,.0f}", f"{p50:.2f}", f"{p99:.2f}",
                     f"{file_rate / rate:.2f}" if file_rate and rate else ""])
        if errors:
            notes.append(f"{label}: unexpected answers: {dict(errors)}")
    out.append(serve.table(["locks", "pairs/s", "p50 ms", "p99 ms", "file / this"], rows))
    out.extend(notes)
    return "\n".join(out)


# --------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True, help="the fileshare executable")
    p.add_argument("--only", default=",".join(BENCHES), help="benchmarks to run: propfind, transfer, locks (comma-separated)")
    p.add_argument("--peers", default=",".join(PEERS),
                   help="peers to measure beside fileshare (comma-separated; '' for none)")
    p.add_argument("--items", type=int, default=10_000, help="propfind: files in the listed folder")
    p.add_argument("--duration", type=int, default=10, help="propfind: seconds of the wrk run")
    p.add_argument("--connections", type=int, default=50, help="propfind: wrk -c")
    p.add_argument("--threads", type=int, default=2, help="propfind: wrk -t")
    p.add_argument("--wrk-timeout", type=int, default=10, help="propfind: wrk --timeout, seconds")
    p.add_argument("--item-connections", type=int, default=8,
                   help="propfind: wrk -c of the PROPFIND Depth 0 of single files")
    p.add_argument("--size", type=serve.parse_size, default=GiB, help="transfer: file size (default 1G)")
    p.add_argument("--runs", type=int, default=3, help="transfer: rounds, each measuring every server once (median reported)")
    p.add_argument("--curl-timeout", type=float, default=600.0, help="longest wait for one request")
    p.add_argument("--timeout", type=float, default=60.0, help="longest wait for a server to be ready")
    p.add_argument("--tmp", default="/tmp", help="where the temporary folder goes")
    p.add_argument("--lock-clients", type=int, default=8, help="locks: client threads")
    p.add_argument("--lock-duration", type=int, default=10, help="locks: seconds measured for each server")
    p.add_argument("--quick", action="store_true", help="small sizes: --items 1000 --size 256M --duration 3")
    args = p.parse_args(argv)
    if args.quick:
        given = set(a.split("=")[0] for a in argv)
        if "--items" not in given:
            args.items = 1000
        if "--size" not in given:
            args.size = 256 * MiB
        if "--duration" not in given:
            args.duration = 3
    serve.check_binary_and_only(p, args)
    for b in args.only:
        if b not in BENCHES:
            p.error(f"--only: unknown benchmark {b} (known: {', '.join(BENCHES)})")
    for name in [n.strip() for n in args.peers.split(",") if n.strip()]:
        if name not in PEERS:
            p.error(f"--peers: unknown peer {name} (known: {', '.join(PEERS)})")
    if args.items < 1 or args.size < 1 or args.runs < 1:
        p.error("--items, --size and --runs must be positive")
    return args


def main(argv):
    args = parse_args(argv)

    def body(tmp):
        for tool in ("curl",) + (("wrk",) if "propfind" in args.only else ()):
            if not shutil.which(tool):
                raise BenchError(f"{tool} is needed (Debian: apt-get install {tool})")
        # Only what the chosen benchmarks use: the listed folder, the file to transfer.
        made = argparse.Namespace(items=args.items if "propfind" in args.only else 0,
                                  size=args.size if "transfer" in args.only else 0, tmp=args.tmp, memory_size=0)
        serve.check_space(made)
        load_before = os.getloadavg()[0]
        share = serve.make_share(made, tmp)
        servers, skipped = serve.pick_servers(Fileshare, PEERS, args.peers, args, tmp, share)
        results, phases, elapsed = serve.run_phases(
            (("propfind", bench_propfind), ("transfer", bench_transfer), ("locks", bench_locks)), args, tmp, share,
            servers)

        serve.print_header("fileshare WebDAV benchmarks", servers, skipped, load_before)
        print("WebDAV roots: fileshare /dav/, the peers /")
        print()
        if "propfind" in results:
            print(report_propfind(results, args, servers))
            print()
            print(report_propfind_item(results, args, servers))
            print()
        if "transfer" in results:
            print(report_transfer(results, args, servers))
            print()
        if "locks" in results:
            print(report_locks(results, args))
            print()
        print(reproduce_line("Benchmarks/dav-run", argv))
        print(f"(took {elapsed:.0f} s: {', '.join(phases)})")
        return 0

    return serve.guarded("dav bench", "fileshare-dav-bench-", args, body)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
