#!/usr/bin/env python3
"""Benchmarks for `fileshare serve`, measured side by side with peers in the same run.

    Benchmarks/serve-run [options]                  # installs peers, builds, runs this
    python3 Benchmarks/serve.py --binary PATH [options]

Every server shares the same generated folder on 127.0.0.1, one server at a
time, each started fresh for each figure, with no authentication (fileshare
with --no-auth: none of the peers is authenticated either).

1. transfer  Download and upload of a --size file (default 1 GiB) with curl,
             median of --runs rounds; each round measures every line once:
             the disk reference (a Python write + fsync of the same size, and
             the same write without fsync), the loopback ceiling (curl -T to a
             socket here that discards the body), then each server started
             fresh: one download from the page cache (`curl -o /dev/null`),
             one upload (`curl -T FILE`, a PUT) timed until the server answers,
             and that time plus an fsync of the uploaded file (fileshare
             fsyncs before it answers; the peers do not).
2. memory    Resident memory of the server while a --memory-size file (default
             4 GiB) is uploaded with a Content-Length (a sparse file, so curl
             reads no disk): VmRSS of the server's processes sampled every 50 ms,
             and VmHWM after the peak was reset (/proc/PID/clear_refs) just
             before the upload. fileshare is also measured with a chunked body
             of the same size (`curl -T -` from a pipe).
3. listing   A folder of --items files (default 10,000) listed under 50
             concurrent clients: wrk -c 50 -t 2 -d --duration --latency,
             requests per second and p99 latency. fileshare: GET
             /api/list?path=big, and PROPFIND Depth 1 of /dav/big/; nginx:
             autoindex_format json; wsgidav: PROPFIND Depth 1 (a wrk Lua
             script); copyparty: GET /big/?ls.
4. small     Small requests: --small-files files of 4 KiB, each fetched in
             turn (a wrk Lua script) by --small-connections keep-alive clients
             for --duration seconds, median of --runs rounds: GET through
             fileshare's /api/files and /dav/, one at a time and pipelined
             (8 requests per write), 304 answers (If-None-Match with each
             file's ETag), and HEAD (a Python client of our own, GET beside
             it for comparison: wrk waits for a body after a HEAD answer's
             Content-Length), beside nginx's of the
             same files (and the other peers given); fileshare again with
             credentials checked on every request (--small-auth: --user, and
             a users file with a user granted read on /). Each row also
             gives the server's CPU time (user + system, from /proc, its
             child processes included) per answer. And GET at a fixed rate
             (--small-rate requests per second, h2load --rps), for fileshare
             and nginx: the latency of a server that is not saturated; and
             at each rate of --small-sweep, up to near what fileshare
             carries at most: how far p99 stays under 1 ms. And the goal as
             one load: fileshare's GET (both faces, and with credentials)
             and nginx's at half the rate of nginx's GET measured in the
             same round, with the p99 of each.
             Ratios "beside": nginx stays up (idle) while fileshare's lines
             run, and each of fileshare's wrk lines is measured in turns of
             one second with nginx's GET; the line's ratio is to that
             (median over the rounds, each round's given in the goal lines;
             the line's p99 is its worst second's).

--pin SERVER:CLIENT puts every server on the SERVER CPUs and this script,
with all the clients it starts, on the CLIENT ones: on a machine with cores
enough, the client's work no longer takes the server's time slices (on 2
cores it makes the tail worse, each server's threads sharing one core).

Peers: nginx (static files, the dav module for PUT, autoindex json for the
listing; a minimal config generated in the temporary folder, run in the
foreground with worker_processes 2), wsgidav (cheroot), copyparty, and for the
small requests alone nio-floor (Benchmarks/NIOFloor: the least a SwiftNIO
server does for the same GET, built by serve-run when --peers names it; how
much of an answer's cost is NIO's and the kernel's). A peer that
is not installed is skipped and said so. Only the Python standard library,
curl and wrk are used here. Every process started is stopped and every
temporary file removed on every way out.
"""

import argparse
import base64
import collections
import http.client
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchcommon  # noqa: E402
from benchcommon import (BenchError, PROCS, log, proc_status, process_tree, reproduce_line, spawn, stop,  # noqa: E402
                         stop_all, table)

benchcommon.STOP_GRACE = 5.0   # servers may take a moment to shut down gracefully
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
now = time.perf_counter
MiB = 1 << 20
GiB = 1 << 30


def run(argv, timeout, **kw):
    """Runs a short-lived tool (curl, wrk) as a registered process; returns (rc, stdout, stderr)."""
    proc = spawn(argv, subprocess.PIPE, subprocess.PIPE, **kw)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc, argv[0], grace=1)
        raise BenchError(f"{shlex.join(argv)}: no answer within {timeout:g} s")
    finally:
        if proc in PROCS:
            PROCS.remove(proc)
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree_rss(pid):
    return sum(proc_status(p).get("VmRSS", 0) for p in process_tree(pid))


def reset_hwm(pids):
    """Resets VmHWM to the current RSS (write 5 to clear_refs); False if the kernel refused."""
    ok = True
    for p in pids:
        try:
            with open(f"/proc/{p}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            ok = False
    return ok


class Sampler(threading.Thread):
    """Samples the summed VmRSS of a process tree every `interval` seconds."""

    def __init__(self, pid, interval=0.05):
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.samples = []      # (time, bytes)
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            self.samples.append((now(), tree_rss(self.pid)))
            self.halt.wait(self.interval)

    def finish(self):
        self.halt.set()
        self.join(10)


# --------------------------------------------------------------------------
# Servers: how to start each one, and its URLs.

class Server:
    name = "?"
    note = ""

    def __init__(self, args, tmp, share):
        self.args = args
        self.tmp = tmp
        self.share = share
        self.proc = None
        self.base = None
        self.logs = []

    def available(self):
        return True, ""

    def version(self):
        return self.name

    def argv(self, port):
        raise NotImplementedError

    def start(self):
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        out_path = os.path.join(self.tmp, f"{self.name}.out")
        err_path = os.path.join(self.tmp, f"{self.name}.err")
        self.logs = [out_path, err_path]
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            self.proc = spawn(self.argv(port), out, err, cwd=self.tmp, preexec_fn=server_affinity(self.args))
        deadline = now() + self.args.timeout
        while now() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.name} exited with {self.proc.returncode} at start: {self.log_tail()}")
            if self.ready():
                return
            time.sleep(0.05)
        raise BenchError(f"{self.name} not ready within {self.args.timeout:g} s: {self.log_tail()}")

    def ready(self):
        try:
            with socket.create_connection(("127.0.0.1", int(self.base.rsplit(":", 1)[1])), timeout=1):
                pass
        except OSError:
            return False
        try:
            with urllib.request.urlopen(self.list_url(), timeout=10) as r:
                return r.status < 500
        except urllib.error.HTTPError as error:
            return error.code not in (502, 503)
        except (OSError, ValueError):
            return False

    def stop(self):
        if self.proc is not None:
            stop(self.proc, self.name)
            self.proc = None

    def log_tail(self):
        text = ""
        for path in self.logs:
            try:
                with open(path, errors="replace") as f:
                    text += f.read()[-800:]
            except OSError:
                pass
        return text.strip() or "(no output)"

    def file_url(self, rel):
        return f"{self.base}/{rel}"

    def upload_url(self, rel):
        return self.file_url(rel)

    def list_url(self):
        return f"{self.base}/big/"

    def wrk_script(self):
        return None

    def count_items(self, body):
        raise NotImplementedError


class Fileshare(Server):
    name = "fileshare"
    note = "--no-auth"

    def argv(self, port):
        return [self.args.binary, "serve", self.share, "--port", "0", "--no-auth"]

    def start(self):
        out_path = os.path.join(self.tmp, "fileshare.out")
        err_path = os.path.join(self.tmp, "fileshare.err")
        self.logs = [out_path, err_path]
        self.base = None
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            self.proc = spawn(self.argv(0), out, err, cwd=self.tmp, preexec_fn=server_affinity(self.args))
        deadline = now() + self.args.timeout
        while now() < deadline and self.base is None:
            if self.proc.poll() is not None:
                raise BenchError(f"fileshare exited with {self.proc.returncode} at start: {self.log_tail()}")
            with open(out_path, errors="replace") as f:
                first = f.readline()
            if first.endswith("\n"):
                m = re.match(r"Serving (.*) at (\S+)", first.strip())
                if not m:
                    raise BenchError(f"fileshare: unexpected first line {first!r}")
                self.base = m.group(2).rstrip("/")
                break
            time.sleep(0.02)
        if self.base is None:
            raise BenchError(f"fileshare printed no URL within {self.args.timeout:g} s")
        while now() < deadline:
            if self.ready():
                return
            time.sleep(0.05)
        raise BenchError(f"fileshare not ready within {self.args.timeout:g} s: {self.log_tail()}")

    def version(self):
        try:
            commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                    capture_output=True, text=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--", "../Sources"],
                                   capture_output=True, text=True).stdout.strip()
            return f"fileshare {commit}{' (Sources modified)' if dirty else ''}"
        except OSError:
            return "fileshare"

    def file_url(self, rel):
        return f"{self.base}/api/files/{rel}"

    def list_url(self):
        return f"{self.base}/api/list?path=big"

    def count_items(self, body):
        return len(json.loads(body)["items"])

    def ready(self):
        # Listings answer during the first scan (they never wait for it):
        # ready once big/ is listed whole.
        try:
            with urllib.request.urlopen(self.list_url(), timeout=10) as r:
                return r.status == 200 and self.count_items(r.read()) == self.args.items
        except (OSError, ValueError, KeyError):
            return False


class FileshareBasic(Fileshare):
    """fileshare with one user and password (HTTP Basic) checked on every request."""
    name = "fileshare-basic"
    note = "--user/--password (HTTP Basic on every request)"
    user, password = "bench", "bench-secret"

    def argv(self, port):
        return [self.args.binary, "serve", self.share, "--port", "0", "--user", self.user,
                "--password", self.password]

    def headers(self):
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        return {"Authorization": f"Basic {token}"}

    def ready(self):
        try:
            req = urllib.request.Request(self.list_url(), headers=self.headers())
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status == 200 and self.count_items(r.read()) == self.args.items
        except (OSError, ValueError, KeyError):
            return False


class FileshareUsers(FileshareBasic):
    """fileshare with a users file: a user (not an admin) granted read on /, by bcrypt's default cost."""
    name = "fileshare-users"
    note = "--users FILE (a user granted read on /; bcrypt, checked once per client)"

    def argv(self, port):
        users = os.path.join(self.tmp, "users.json")
        if not os.path.exists(users):
            for command, stdin in ((["add", self.user], self.password + "\n"), (["grant", self.user, "/", "read"], None)):
                done = subprocess.run([self.args.binary, "users", *command, "--users", users], input=stdin,
                                      capture_output=True, text=True, timeout=120)
                if done.returncode != 0:
                    raise BenchError(f"fileshare users {command[0]}: {done.stderr.strip()}")
        return [self.args.binary, "serve", self.share, "--port", "0", "--users", users]


class Nginx(Server):
    name = "nginx"

    def __init__(self, args, tmp, share):
        super().__init__(args, tmp, share)
        self.exe = shutil.which("nginx") or next(
            (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None)
        self.dav = False

    def available(self):
        if not self.exe:
            return False, "not installed (Debian: apt-get install nginx)"
        info = subprocess.run([self.exe, "-V"], capture_output=True, text=True)
        text = info.stdout + info.stderr
        self.dav = "http_dav_module" in text
        self.note = "worker_processes 2, sendfile on, keepalive_requests 1000000" + ("" if self.dav else "; no dav module: uploads skipped")
        return True, ""

    def version(self):
        info = subprocess.run([self.exe, "-v"], capture_output=True, text=True)
        return (info.stdout + info.stderr).strip().split(": ")[-1].replace("/", " ")

    def argv(self, port):
        prefix = os.path.join(self.tmp, self.name)
        os.makedirs(prefix, exist_ok=True)
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(prefix, sub), exist_ok=True)
        user = "user root;\n" if os.geteuid() == 0 else ""
        dav = ("            dav_methods PUT;\n"
               "            create_full_put_path on;\n"
               "            dav_access user:rw group:r all:r;\n") if self.dav else ""
        conf = f"""# generated by Benchmarks/serve.py
{user}worker_processes 2;
daemon off;
master_process on;
pid {prefix}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    # Kept-alive connections are not closed after 1,000 requests (the
    # default): wrk would reconnect, h2load's clients would stop.
    keepalive_requests 1000000;
    default_type application/octet-stream;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {self.share};
        client_max_body_size 0;
        location / {{
            autoindex on;
            autoindex_format json;
{dav}        }}
    }}
}}
"""
        path = os.path.join(prefix, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        return [self.exe, "-p", prefix, "-c", path, "-e", "stderr"]

    def count_items(self, body):
        return len(json.loads(body))


class NginxBeside(Nginx):
    """nginx again, up (and idle) while fileshare's small requests are measured: its GET
    is measured in turns of a second with each of them, the reference of that line's ratio."""
    name = "nginx-beside"


# WebDAV listings (wsgidav here; every server in dav.py): one PROPFIND, Depth 1, allprop.
PROPFIND_BODY = b'<?xml version="1.0" encoding="utf-8"?><propfind xmlns="DAV:"><allprop/></propfind>'
PROPFIND_HEADERS = {"Depth": "1", "Content-Type": "application/xml"}


def propfind_lua(tmp):
    """A wrk script that sends that PROPFIND; returns its path (in the temporary folder)."""
    path = os.path.join(tmp, "propfind.lua")
    with open(path, "w") as f:
        f.write('wrk.method = "PROPFIND"\n')
        for key, value in PROPFIND_HEADERS.items():
            f.write(f'wrk.headers["{key}"] = "{value}"\n')
        f.write(f"wrk.body = '{PROPFIND_BODY.decode()}'\n")
    return path


def count_dav_responses(body):
    """The <response> elements of a multistatus body, whatever the namespace prefix or case."""
    return len(re.findall(rb"<(?:[\w.-]+:)?response[\s/>]", body, re.I))


class Wsgidav(Server):
    name = "wsgidav"

    def available(self):
        try:
            import wsgidav  # noqa: F401
            import cheroot  # noqa: F401
        except ImportError:
            return False, "not installed (PyPI: wsgidav cheroot)"
        self.note = "cheroot, default threads"
        return True, ""

    def version(self):
        import wsgidav
        import cheroot
        return f"wsgidav {wsgidav.__version__} (cheroot {cheroot.__version__})"

    def argv(self, port):
        return [sys.executable, "-m", "wsgidav.server.server_cli", "--host", "127.0.0.1", "--port", str(port),
                "--root", self.share, "--auth", "anonymous", "--server", "cheroot", "--no-config", "-q", "-q"]

    def ready(self):
        try:
            req = urllib.request.Request(f"{self.base}/", method="OPTIONS")
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status < 500
        except urllib.error.HTTPError as error:
            return error.code < 500
        except (OSError, ValueError):
            return False

    def wrk_script(self):
        return propfind_lua(self.tmp)

    def fetch_listing(self):
        req = urllib.request.Request(self.list_url(), method="PROPFIND", headers=PROPFIND_HEADERS,
                                     data=PROPFIND_BODY)
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.read()

    def count_items(self, body):
        # One response per member, plus one for the folder itself.
        return count_dav_responses(body) - 1


class Copyparty(Server):
    name = "copyparty"

    def available(self):
        try:
            import copyparty  # noqa: F401
        except ImportError:
            return False, "not installed (PyPI: copyparty)"
        self.note = "-j 1 (default), --no-thumb"
        return True, ""

    def version(self):
        info = subprocess.run([sys.executable, "-m", "copyparty", "--version"], capture_output=True, text=True)
        first = (info.stdout + info.stderr).strip().splitlines()[:1]
        return " ".join(first[0].split()[:2]) if first else "copyparty"

    def argv(self, port):
        hist = os.path.join(self.tmp, "copyparty-hist")
        os.makedirs(hist, exist_ok=True)
        return [sys.executable, "-m", "copyparty", "-i", "127.0.0.1", "-p", str(port), "-q",
                "--http-only", "--no-crt", "--no-thumb", "--hist", hist, "-v", f"{self.share}::rw"]

    def list_url(self):
        return f"{self.base}/big/?ls"

    def count_items(self, body):
        data = json.loads(body)
        return len(data.get("files", [])) + len(data.get("dirs", []))


class NIOFloor(Server):
    """Benchmarks/NIOFloor: the least a SwiftNIO server does to answer a small GET (the
    same system calls as fileshare's small reads, none of its HTTP types, rights, audit or
    metrics). A reference for the small requests only: how much of an answer's cost is
    NIO's and the kernel's, and how much fileshare's own path."""
    name = "nio-floor"
    phases = ("small",)

    def available(self):
        binary = getattr(self.args, "nio_floor", None)
        if not binary or not os.access(binary, os.X_OK):
            return False, "not built (Benchmarks/serve-run builds Benchmarks/NIOFloor when --peers names it)"
        self.note = "two event loops (SwiftNIO's singleton group), one handler"
        return True, ""

    def version(self):
        return "nio-floor"

    def argv(self, port):
        return [self.args.nio_floor, self.share, str(port)]


PEERS = {"nginx": Nginx, "wsgidav": Wsgidav, "copyparty": Copyparty, "nio-floor": NIOFloor}


# --------------------------------------------------------------------------
# The shared folder

def make_share(args, tmp):
    share = os.path.join(tmp, "share")
    big = os.path.join(share, "big")
    os.makedirs(big)
    os.mkdir(os.path.join(share, "up"))
    log(f"share: {args.items} files in big/ ...")
    for i in range(args.items):
        fd = os.open(os.path.join(big, f"file-{i:05d}.txt"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        os.write(fd, b"hello %d\n" % i)
        os.close(fd)
    small = os.path.join(share, "small")
    os.mkdir(small)
    block = os.urandom(4096)
    for i in range(getattr(args, "small_files", 0)):
        with open(os.path.join(small, f"s-{i:05d}.bin"), "wb") as f:
            f.write(i.to_bytes(4, "little") + block[4:])
    log(f"share: blob.bin, {args.size / MiB:.0f} MiB of random bytes ...")
    blob = os.path.join(share, "blob.bin")
    block = os.urandom(8 * MiB)  # repeated, with a counter so no two blocks are equal
    with open(blob, "wb") as f:
        left, n = args.size, 0
        while left > 0:
            chunk = n.to_bytes(8, "little") + block[8:]
            f.write(chunk[:left])
            left -= len(chunk)
            n += 1
        f.flush()
        os.fsync(f.fileno())
    return share


def page_cache(path):
    """Reads a file once so the downloads are served from memory."""
    with open(path, "rb", buffering=0) as f:
        while f.read(8 * MiB):
            pass


def remove_uploads(share):
    up = os.path.join(share, "up")
    for name in os.listdir(up):
        path = os.path.join(up, name)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


# --------------------------------------------------------------------------
# 1. Transfers

def curl_download(url, size, timeout):
    rc, out, err = run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_total}",
                        url], timeout)
    if rc != 0:
        raise BenchError(f"curl {url}: exit {rc} {err.strip()}")
    code, got, seconds = out.split()
    if code != "200" or int(got) != size:
        raise BenchError(f"GET {url}: HTTP {code}, {got} of {size} bytes")
    return size / float(seconds)


def curl_upload(url, source, size, timeout, extra=(), stdin=None):
    argv = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_upload} %{time_total}",
            *extra, "-T", source, url]
    if stdin is None:
        rc, out, err = run(argv, timeout)
    else:
        proc = spawn(argv, subprocess.PIPE, subprocess.PIPE, **stdin)
        try:
            o, e = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop(proc, "curl", grace=1)
            raise BenchError(f"curl -T {source} {url}: no answer within {timeout:g} s")
        finally:
            if proc in PROCS:
                PROCS.remove(proc)
        rc, out, err = proc.returncode, o.decode(), e.decode()
    if rc != 0:
        # -w is written on failures too: a server that refuses early often resets the connection.
        code = out.split()[0] if out.split() else "000"
        status = f" (HTTP {code})" if code != "000" else ""
        raise BenchError(f"curl -T {url}: exit {rc}{status} {err.strip()}")
    code, sent, seconds = out.split()
    # Chunked: curl counts the chunk framing too; the file's size on disk is checked after.
    if code not in ("200", "201", "204") or int(sent) < size or (stdin is None and int(sent) != size):
        raise BenchError(f"PUT {url}: HTTP {code}, {sent} of {size} bytes sent")
    return size / float(seconds)


def disk_write(path, size, fsync):
    block = os.urandom(8 * MiB)
    t = now()
    fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o644)
    try:
        left = size
        while left > 0:
            left -= os.write(fd, block[:min(left, len(block))])
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    elapsed = now() - t
    os.unlink(path)
    os.sync()
    return size / elapsed


class Sink(threading.Thread):
    """A bare HTTP endpoint on loopback that reads a PUT body (with a Content-Length) and
    throws it away: how fast curl -T can send on this machine, whatever the server."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/sink"
        self.halt = threading.Event()

    def run(self):
        buf = bytearray(1 << 20)
        while not self.halt.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(30)
                try:
                    head = b""
                    while b"\r\n\r\n" not in head:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        head += chunk
                    header, _, rest = head.partition(b"\r\n\r\n")
                    fields = {k.strip().lower(): v.strip() for k, _, v in
                              (line.partition(b":") for line in header.split(b"\r\n")[1:])}
                    left = int(fields.get(b"content-length", b"0")) - len(rest)
                    if fields.get(b"expect", b"").lower() == b"100-continue":
                        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    view = memoryview(buf)
                    while left > 0:
                        n = conn.recv_into(view, min(left, len(buf)))
                        if n == 0:
                            break
                        left -= n
                    conn.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def finish(self):
        self.halt.set()
        self.sock.close()
        self.join(5)


def check_upload(share, rel, size, name):
    path = os.path.join(share, rel)
    got = os.path.getsize(path) if os.path.isfile(path) else None
    if got != size:
        raise BenchError(f"{name}: after the upload {rel} is {got} bytes, not {size}")


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def bench_transfer(args, tmp, share, servers, results):
    """Rounds: in each, the disk reference, the loopback ceiling, then every server in turn
    (started, one download, one upload, stopped), so that whatever else the machine does
    falls on all of them alike; the median of the rounds is reported."""
    blob = os.path.join(share, "blob.bin")
    runs = collections.defaultdict(list)   # (kind, name) -> speeds
    for i in range(args.runs):
        log(f"transfer: round {i + 1}/{args.runs}: disk reference, loopback ceiling")
        os.sync()
        runs["disk", "fsync"].append(disk_write(os.path.join(tmp, "disk.bin"), args.size, True))
        runs["disk", "cache"].append(disk_write(os.path.join(tmp, "disk.bin"), args.size, False))
        sink = Sink()
        sink.start()
        try:
            page_cache(blob)
            runs["disk", "sink"].append(curl_upload(sink.url, blob, args.size, args.curl_timeout))
        finally:
            sink.finish()
        for s in servers:
            log(f"transfer: round {i + 1}/{args.runs}: {s.name}")
            s.start()
            try:
                page_cache(blob)
                runs["download", s.name].append(curl_download(s.file_url("blob.bin"), args.size, args.curl_timeout))
                if getattr(s, "dav", True) is False:
                    continue
                remove_uploads(share)
                os.sync()
                page_cache(blob)
                rel = f"up/run-{i}.bin"
                speed = curl_upload(s.upload_url(rel), blob, args.size, args.curl_timeout)
                # Until the bytes are on the disk: an fsync of the uploaded file right after the
                # answer (next to nothing for fileshare, which fsyncs before it answers).
                t = now()
                fsync_path(os.path.join(share, rel))
                runs["upload", s.name].append(speed)
                runs["durable", s.name].append(args.size / (args.size / speed + now() - t))
                check_upload(share, rel, args.size, s.name)
            finally:
                s.stop()
                remove_uploads(share)
                os.sync()
    r = results["transfer"] = {"download": {}, "upload": {}, "durable": {}, "disk": {}}
    for (kind, name), speeds in runs.items():
        r[kind][name] = statistics.median(speeds)


def human(size):
    return f"{size / GiB:g} GiB" if size >= GiB else f"{size / MiB:g} MiB"


def gbps(value):
    return "-" if value is None else f"{value / MiB:,.0f}"


def report_transfer(r, args, servers):
    size = human(args.size)
    out = [f"## 1. Transfer of a {size} file on loopback (curl), median of {args.runs} rounds "
           f"(each: every line of the table once, servers started fresh)"]
    names = [s.name for s in servers]
    peers = [n for n in names if n != "fileshare"]
    best_dl = max((r["download"][n] for n in peers if n in r["download"]), default=None)
    best_ul = max((r["durable"][n] for n in peers if n in r["durable"]), default=None)
    rows = []
    for n in names:
        dl, ul, du = r["download"].get(n), r["upload"].get(n), r["durable"].get(n)
        rows.append([n, gbps(dl), f"{dl / best_dl:.2f}" if dl and best_dl else "-",
                     gbps(ul), gbps(du), f"{du / best_ul:.2f}" if du and best_ul else "-",
                     f"{du / r['disk']['fsync']:.2f}" if du else "-"])
    rows.append(["disk: write + fsync", "", "", "", gbps(r["disk"]["fsync"]), "", "1.00"])
    rows.append(["page cache: write, no fsync", "", "", gbps(r["disk"]["cache"]), "", "", ""])
    rows.append(["curl -T to a discarding socket", "", "", gbps(r["disk"]["sink"]), "", "",
                 f"{r['disk']['sink'] / r['disk']['fsync']:.2f}"])
    out.append(table(["server", "download MiB/s", "x best peer", "upload MiB/s", "upload+fsync MiB/s",
                      "x best peer", "x disk"], rows))
    out.append("")
    fs_dl = r["download"].get("fileshare")
    nginx_dl = r["download"].get("nginx")
    if fs_dl and nginx_dl:
        out.append(f"goal: fileshare download >= 0.90x nginx's: {fs_dl / nginx_dl:.2f}x, "
                   f"{'met' if fs_dl >= 0.9 * nginx_dl else 'NOT met'}")
    else:
        out.append("goal: fileshare download >= 0.90x nginx's: not measured (nginx missing)")
    fs_ul = r["durable"].get("fileshare")
    if fs_ul:
        ratio = fs_ul / r["disk"]["fsync"]
        out.append(f"goal: fileshare upload at disk speed (>= 0.90x write + fsync): {ratio:.2f}x, "
                   f"{'met' if ratio >= 0.9 else 'NOT met'}")
    out.append("upload: timed until the server answers (fileshare fsyncs before it answers, the peers do not); "
               "upload+fsync: plus an fsync of the uploaded file right after, so the bytes are on the disk for "
               "every server (the ratios and the goal use this one).")
    return "\n".join(out)


# --------------------------------------------------------------------------
# 2. Memory during a large upload

def memory_run(s, share, args, chunked):
    size = args.memory_size
    rel = "up/memory.bin"
    pid = s.proc.pid
    time.sleep(0.5)
    pids = process_tree(pid)
    before = tree_rss(pid)
    hwm_reset = reset_hwm(pids)
    sampler = Sampler(pid, 0.05)
    sampler.start()
    t0 = now()
    try:
        if chunked:
            # Exactly `size` zero bytes through a pipe, without a length: curl sends them chunked.
            feeder = spawn(["head", "-c", str(size), "/dev/zero"], subprocess.PIPE, subprocess.DEVNULL)
            try:
                speed = curl_upload(s.upload_url(rel), "-", size, args.curl_timeout,
                                    extra=("-H", "Transfer-Encoding: chunked"), stdin={"stdin": feeder.stdout})
            finally:
                feeder.stdout.close()
                stop(feeder, "head")
        else:
            sparse = os.path.join(os.path.dirname(share), "sparse.bin")
            with open(sparse, "wb") as f:
                f.truncate(size)
            try:
                speed = curl_upload(s.upload_url(rel), sparse, size, args.curl_timeout)
            finally:
                os.unlink(sparse)
    finally:
        sampler.finish()
    elapsed = now() - t0
    hwm = sum(proc_status(p).get("VmHWM", 0) for p in pids) if hwm_reset else None
    check_upload(share, rel, size, s.name)
    samples = sampler.samples
    peak = max(v for _, v in samples)
    half = t0 + elapsed / 2
    first = max((v for t, v in samples if t < half), default=before)
    second = max((v for t, v in samples if t >= half), default=before)
    return {"before": before, "peak": peak, "hwm": hwm, "first": first, "second": second,
            "speed": speed, "samples": len(samples), "procs": len(pids)}


def bench_memory(args, tmp, share, servers, results):
    r = results["memory"] = {}
    for s in servers:
        if getattr(s, "dav", True) is False:
            continue
        modes = [False, True] if s.name == "fileshare" else [False]
        if s.name != "fileshare" and not args.memory_peers:
            continue
        for chunked in modes:
            label = s.name + (" (chunked)" if chunked else "")
            log(f"memory: {label}, {human(args.memory_size)} upload")
            remove_uploads(share)
            os.sync()
            s.start()
            try:
                r[label] = memory_run(s, share, args, chunked)
            finally:
                s.stop()
                remove_uploads(share)
                os.sync()


def report_memory(r, args):
    size = human(args.memory_size)
    out = [f"## 2. Server memory during a {size} upload (VmRSS sampled every 50 ms, summed over the "
           f"server's processes; VmHWM reset just before the upload)"]
    rows = []
    for label, m in r.items():
        rows.append([label, m["procs"], f"{m['before'] / MiB:.1f}", f"{m['peak'] / MiB:.1f}",
                     "-" if m["hwm"] is None else f"{m['hwm'] / MiB:.1f}",
                     f"{(m['peak'] - m['before']) / MiB:+.1f}",
                     f"{m['first'] / MiB:.1f} / {m['second'] / MiB:.1f}", gbps(m["speed"])])
    out.append(table(["server", "procs", "RSS before MiB", "peak RSS MiB", "VmHWM MiB", "growth MiB",
                      "peak 1st / 2nd half MiB", "upload MiB/s"], rows))
    out.append("")
    for label in ("fileshare", "fileshare (chunked)"):
        m = r.get(label)
        if not m:
            continue
        peak = max(m["peak"], m["hwm"] or 0)
        flat = m["second"] <= m["first"] + 4 * MiB
        out.append(f"goal: {label} flat and under 64 MiB: peak {peak / MiB:.1f} MiB "
                   f"({'met' if peak < 64 * MiB else 'NOT met'}), "
                   f"2nd half {'flat' if flat else 'still growing'} "
                   f"({(m['second'] - m['first']) / MiB:+.1f} MiB over the 1st)")
    return "\n".join(out)


# --------------------------------------------------------------------------
# 3. Listing under load

def parse_duration(text):
    m = re.match(r"([\d.]+)(us|ms|s|m)", text)
    if not m:
        return None
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[m.group(2)]
    return float(m.group(1)) * scale


def run_wrk(url, args, script, duration):
    argv = ["wrk", "-c", str(args.connections), "-t", str(args.threads), "-d", f"{duration}s",
            "--latency", "--timeout", f"{args.wrk_timeout}s"]
    if script:
        argv += ["-s", script]
    argv.append(url)
    rc, out, err = run(argv, duration + args.wrk_timeout + 30)
    if rc != 0:
        raise BenchError(f"wrk: exit {rc}: {err.strip() or out.strip()}")
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
    total = re.search(r"(\d+) requests in", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    requests = int(total.group(1)) if total else 0
    if requests == 0:  # wrk prints zeros when no request finished within the run
        p50 = p99 = None
    return {
        "rps": float(m.group(1)) if m else 0.0,
        "p50": parse_duration(p50.group(1)) if p50 else None,
        "p99": parse_duration(p99.group(1)) if p99 else None,
        "requests": requests,
        "non2xx": int(non2xx.group(1)) if non2xx else 0,
        "errors": sum(int(x) for x in errors.groups()) if errors else 0,
        "timeouts": int(errors.group(4)) if errors else 0,
        "raw": out,
    }


def run_wrk_in_turns(reference, measured, args, seconds):
    """wrk on two servers in turns of one second, `seconds` turns each
    (reference first), each combined as one run: req/s the mean of its
    turns, p50 their median, p99 the worst turn's (a bound: percentiles of
    separate runs do not add up), counts summed. The machine's speed drifts
    over seconds (other tenants' work); in turns this short, both servers
    see the same machine, and a ratio of the two hardly moves with it."""
    turns = ([], [])
    for _ in range(max(1, seconds)):
        for (url, script), kept in zip((reference, measured), turns):
            kept.append(run_wrk(url, args, script, 1))

    def combined(runs):
        p50s = sorted(w["p50"] for w in runs if w["p50"] is not None)
        p99s = [w["p99"] for w in runs if w["p99"] is not None]
        return {
            "rps": sum(w["rps"] for w in runs) / len(runs),
            "p50": p50s[len(p50s) // 2] if p50s else None,
            "p99": max(p99s) if p99s else None,
            "requests": sum(w["requests"] for w in runs),
            "non2xx": sum(w["non2xx"] for w in runs),
            "errors": sum(w["errors"] for w in runs),
            "timeouts": sum(w["timeouts"] for w in runs),
            "raw": "\n".join(w["raw"] for w in runs),
        }
    return combined(turns[0]), combined(turns[1])


def bench_listing(args, tmp, share, servers, results):
    r = results["listing"] = {}
    for s in servers:
        log(f"listing: {s.name}, {args.items} items, wrk -c {args.connections} -d {args.duration}s")
        s.start()
        try:
            t = now()
            body = s.fetch_listing() if hasattr(s, "fetch_listing") else urllib.request.urlopen(
                s.list_url(), timeout=120).read()
            single = now() - t
            count = s.count_items(body)
            if count != args.items:
                raise BenchError(f"{s.name}: the listing of big/ has {count} items, not {args.items}")
            run_wrk(s.list_url(), args, s.wrk_script(), 1)  # warm-up
            w = run_wrk(s.list_url(), args, s.wrk_script(), args.duration)
            w["bytes"] = len(body)
            w["single"] = single
            r[s.name] = w
            if s.name == "fileshare":
                # fileshare keeps a large listing while its tree is unchanged,
                # so the figure above is of a folder at rest. Here the folder
                # changes 100 times a second (a busy hot folder): a kept
                # listing rarely serves, and the clients asking at once share
                # the making of the next one.
                log(f"listing: fileshare, folder changing 100/s, wrk -c {args.connections} -d {args.duration}s")
                r["fileshare, changing 100/s"] = listing_while_changing(s, args, share)
                log(f"listing: fileshare PROPFIND Depth 1, wrk -c {args.connections} -d {args.duration}s")
                url = f"{s.base}/dav/big/"
                t = now()
                req = urllib.request.Request(url, method="PROPFIND", headers=PROPFIND_HEADERS, data=PROPFIND_BODY)
                with urllib.request.urlopen(req, timeout=120) as answer:
                    body = answer.read()
                single = now() - t
                if count_dav_responses(body) - 1 != args.items:
                    raise BenchError(f"fileshare: PROPFIND of big/ lists {count_dav_responses(body) - 1} items")
                run_wrk(url, args, propfind_lua(tmp), 1)  # warm-up
                w = run_wrk(url, args, propfind_lua(tmp), args.duration)
                w["bytes"] = len(body)
                w["single"] = single
                r["fileshare PROPFIND"] = w
        finally:
            s.stop()


def listing_while_changing(s, args, share):
    """wrk on the listing while a thread sets a file's time in big/ every 10 ms."""
    stop = threading.Event()
    touched = os.path.join(share, "big", sorted(os.listdir(os.path.join(share, "big")))[0])

    def touch():
        n = 0
        while not stop.wait(0.01):
            n += 1
            os.utime(touched, ns=(n * 1_000_000_000, n * 1_000_000_000))

    thread = threading.Thread(target=touch, daemon=True)
    thread.start()
    try:
        w = run_wrk(s.list_url(), args, s.wrk_script(), args.duration)
    finally:
        stop.set()
        thread.join()
    w["bytes"] = len(urllib.request.urlopen(s.list_url(), timeout=120).read())
    w["single"] = None
    return w


def ms(value):
    """Milliseconds; two decimals under 10 ms, where "1.0" would not say on which side of 1 ms it is."""
    if value is None:
        return "-"
    return f"{value * 1000:.2f}" if value < 0.01 else f"{value * 1000:.1f}"


def report_listing(r, args):
    out = [f"## 3. Listing a folder of {args.items} files: wrk -c {args.connections} -t {args.threads} "
           f"-d {args.duration}s --latency (timeout {args.wrk_timeout} s)"]
    peers = {n: w for n, w in r.items() if not n.startswith("fileshare")}
    best_rps = max((w["rps"] for w in peers.values()), default=None)
    best_p99 = min((w["p99"] for w in peers.values() if w["p99"]), default=None)
    rows = []
    slow = f"> {args.duration * 1000}"  # no request finished within the run
    for n, w in r.items():
        rows.append([n, f"{w['rps']:,.1f}", f"{w['rps'] / best_rps:.2f}" if best_rps else "-",
                     ms(w["p50"]) if w["requests"] else slow, ms(w["p99"]) if w["requests"] else slow,
                     f"{w['p99'] / best_p99:.2f}" if best_p99 and w["p99"] else "-",
                     f"{w['bytes'] / 1024:,.0f}", ms(w["single"]), w["requests"],
                     w["non2xx"] + w["errors"]])
    out.append(table(["server", "req/s", "x best peer", "p50 ms", "p99 ms", "p99 x best peer",
                      "KiB per listing", "one alone ms", "requests", "errors"], rows))
    out.append("")
    fs = r.get("fileshare")
    if fs and peers:
        ahead = all(fs["rps"] > w["rps"] for w in peers.values())
        inf = float("inf")
        faster = all((fs["p99"] if fs["requests"] else inf) < (w["p99"] if w["requests"] else inf)
                     for w in peers.values())
        versus = f"{fs['rps'] / best_rps:.2f}x the best" if best_rps else "no peer finished a request"
        out.append(f"goal: fileshare ahead of every peer: req/s {'met' if ahead else 'NOT met'} ({versus}), "
                   f"p99 {'met' if faster else 'NOT met'}")
    out.append("Listings: fileshare GET /api/list?path=big; nginx autoindex_format json; "
               "wsgidav PROPFIND Depth 1 (allprop); copyparty GET /big/?ls. "
               "fileshare keeps a large listing while its tree is unchanged; 'changing 100/s': the same "
               "while a file of big/ has its time set every 10 ms, so a kept listing rarely serves. "
               "Clients asking for one listing (or one PROPFIND) at once share the making of the next. "
               f"'> {args.duration * 1000}': no request finished within the run.")
    return "\n".join(out)


class Drippers:
    """Slow clients (slowloris): each connects, sends the start of a request and
    then a byte of its header every second, never finishing it. One thread drives
    them all; ``closed`` counts the connections the server has ended."""

    def __init__(self, base, count):
        host, port = base.rsplit("//", 1)[1].rsplit(":", 1)
        self.sockets, self.closed, self.stopped = [], 0, threading.Event()
        for _ in range(count):
            sock = socket.create_connection((host, int(port)), timeout=10)
            sock.sendall(b"GET /big/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: ")
            sock.setblocking(False)
            self.sockets.append(sock)
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self):
        while not self.stopped.wait(1.0):
            for sock in list(self.sockets):
                try:
                    sock.send(b"a")
                    if sock.recv(4096, socket.MSG_PEEK) == b"":
                        raise ConnectionResetError
                except BlockingIOError:
                    pass
                except OSError:
                    self.sockets.remove(sock)
                    self.closed += 1
                    sock.close()

    def stop(self):
        self.stopped.set()
        self.thread.join()
        for sock in self.sockets:
            sock.close()


def timed_gets(url, headers, seconds):
    """GETs of `url`, one after another on new connections, for `seconds`:
    (the sorted times of those answered 200, how many were not within 5 s)."""
    times, failed = [], 0
    end = now() + seconds
    while now() < end:
        started = now()
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as answer:
                answer.read()
                ok = answer.status == 200
        except (OSError, urllib.error.HTTPError):
            ok = False
        if ok:
            times.append(now() - started)
        else:
            failed += 1
    return sorted(times), failed


def bench_slow(args, tmp, share, servers, results):
    """Ordinary requests, one after another on new connections, first alone and
    then while --slow-clients connections drip a header byte a second (every
    server keeps them for its header timeout, 60 s by default in fileshare and
    nginx, longer than the run): what the slow clients cost everyone else."""
    r = results["slow"] = collections.OrderedDict()
    for s in servers:
        log(f"slow: {s.name}: ordinary GETs alone, then beside {args.slow_clients} dripping clients, "
            f"{args.duration} s each")
        s.start()
        try:
            url, headers = s.file_url("big/file-00000.txt"), server_headers(s)
            alone, _ = timed_gets(url, headers, args.duration)
            drippers = Drippers(s.base, args.slow_clients)
            try:
                times, failed = timed_gets(url, headers, args.duration)
                r[s.name] = {"alone": alone, "times": times, "failed": failed, "dropped": drippers.closed}
            finally:
                drippers.stop()
        finally:
            s.stop()


def report_slow(r, args):
    out = [f"## 5. Slow clients: {args.slow_clients} connections dripping a header byte a second; "
           f"ordinary GETs of a 9-byte file, each on a new connection, for {args.duration} s"]
    rows = []
    for name, w in r.items():
        times = w["times"]
        median = statistics.median(times) if times else None
        alone = statistics.median(w["alone"]) if w["alone"] else None
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))] if times else None
        rows.append([name, ms(alone), len(times), ms(median), ms(p99), ms(times[-1]) if times else "-",
                     f"{median / alone:.2f}" if median and alone else "-", w["failed"], w["dropped"]])
    out.append(table(["server", "median alone ms", "answered", "median ms", "p99 ms", "slowest ms",
                      "median x alone", "not answered (5 s)", "slow clients dropped"], rows))
    out.append("")
    out.append("'median x alone': what the slow clients cost an ordinary request on that server (1.00: nothing). "
               "A server whose workers the slow clients hold answers nobody else: 'not answered' counts "
               "the ordinary requests that got no answer within 5 s.")
    return "\n".join(out)


PIPELINE_DEPTH = 8


def small_script(tmp, label, prefix, kind, count, headers, etags=None):
    """A wrk script that asks for the small files in turn (prefix + s-NNNNN.bin): one
    request at a time ("get"), PIPELINE_DEPTH at once ("pipelined"), or each with its
    ETag in If-None-Match ("304", answered 304 Not Modified)."""
    path = os.path.join(tmp, "small-" + re.sub(r"[^\w]+", "-", label) + ".lua")
    fields = "".join(f'["{k}"] = "{v}", ' for k, v in headers.items())
    with open(path, "w") as f:
        f.write("counter = 0\n")
        if etags is not None:
            f.write("etags = {" + ", ".join(json.dumps(e) for e in etags) + "}\n")
        f.write(f"""function one()
  counter = counter + 1
  local i = counter % {count}
  local headers = {{ {fields}}}
""")
        if etags is not None:
            f.write('  headers["If-None-Match"] = etags[i + 1]\n')
        f.write(f"""  return wrk.format("GET", string.format("{prefix}s-%05d.bin", i), headers)
end
request = function()
""")
        if kind == "pipelined":
            f.write(f"""  local batch = {{}}
  for n = 1, {PIPELINE_DEPTH} do batch[n] = one() end
  return table.concat(batch)
end
""")
        else:
            f.write("  return one()\nend\n")
    return path


# The label's tail of the lines at half of nginx's GET rate (kind rate:half).
HALF_RATE = "GET at half nginx's GET rate (h2load)"


def small_lines(server, sweep=()):
    """(label, URL prefix, kind) of each small-request line of a server; kind is
    get, pipelined, 304 (wrk), head and client-get (a client of our own), rate
    (h2load at --small-rate), rate:half (h2load at half the rate of nginx's GET
    measured in turns with fileshare's /api/files GET in the same round: the
    goal's "half of nginx's requests per second, p99 under 1 ms" as one load),
    or rate:N (h2load at N requests a second, one line per rate of
    --small-sweep, for fileshare's /api/files and nginx)."""
    swept = [(rate, f"GET at {rate:,} req/s (h2load)") for rate in sweep]
    if server.name == "fileshare":
        return [("fileshare /api/files GET", "/api/files/small/", "get"),
                (f"fileshare /api/files GET, pipelined x{PIPELINE_DEPTH}", "/api/files/small/", "pipelined"),
                ("fileshare /api/files 304", "/api/files/small/", "304"),
                ("fileshare /api/files HEAD (own client)", "/api/files/small/", "head"),
                ("fileshare /api/files GET (own client)", "/api/files/small/", "client-get"),
                ("fileshare /dav/ GET", "/dav/small/", "get"),
                (f"fileshare /dav/ GET, pipelined x{PIPELINE_DEPTH}", "/dav/small/", "pipelined"),
                ("fileshare /api/files GET at a fixed rate (h2load)", "/api/files/small/", "rate"),
                ("fileshare /dav/ GET at a fixed rate (h2load)", "/dav/small/", "rate"),
                (f"fileshare /api/files {HALF_RATE}", "/api/files/small/", "rate:half"),
                (f"fileshare /dav/ {HALF_RATE}", "/dav/small/", "rate:half")] + [
                (f"fileshare /api/files {text}", "/api/files/small/", f"rate:{rate}") for rate, text in swept]
    if server.name in ("fileshare-basic", "fileshare-users"):
        return [(f"{server.name} /api/files GET", "/api/files/small/", "get"),
                (f"{server.name} /dav/ GET", "/dav/small/", "get"),
                (f"{server.name} /api/files {HALF_RATE}", "/api/files/small/", "rate:half")]
    if server.name == "nginx":
        return [("nginx GET", "/small/", "get"),
                (f"nginx GET, pipelined x{PIPELINE_DEPTH}", "/small/", "pipelined"),
                ("nginx 304", "/small/", "304"),
                ("nginx HEAD (own client)", "/small/", "head"),
                ("nginx GET (own client)", "/small/", "client-get"),
                ("nginx GET at a fixed rate (h2load)", "/small/", "rate"),
                (f"nginx {HALF_RATE}", "/small/", "rate:half")] + [
                (f"nginx {text}", "/small/", f"rate:{rate}") for rate, text in swept]
    if server.name == "nio-floor":
        return [("nio-floor GET", "/small/", "get"),
                ("nio-floor GET at a fixed rate (h2load)", "/small/", "rate"),
                (f"nio-floor {HALF_RATE}", "/small/", "rate:half")]
    return [(f"{server.name} GET", server.file_url("small/")[len(server.base):], "get")]


def server_headers(server):
    return server.headers() if hasattr(server, "headers") else {}


def fetch_etags(server, prefix, count):
    """The ETag of each small file, asked with HEAD over one kept-alive connection."""
    host, port = server.base.rsplit("//", 1)[1].rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    etags = []
    try:
        for i in range(count):
            connection.request("HEAD", f"{prefix}s-{i:05d}.bin", headers=server_headers(server))
            answer = connection.getresponse()
            answer.read()
            etag = answer.getheader("ETag")
            if answer.status != 200 or not etag:
                raise BenchError(f"{server.name}: HEAD {prefix}s-{i:05d}.bin: {answer.status}, ETag {etag!r}")
            etags.append(etag)
    finally:
        connection.close()
    return etags


def keepalive_worker(host, port, method, paths, headers, connections, duration, queue):
    try:
        queue.put(keepalive_run(host, port, method, paths, headers, connections, duration))
    except Exception as error:  # noqa: BLE001 - reported to the parent, which raises it
        queue.put(f"{type(error).__name__}: {error}")


def keepalive_run(host, port, method, paths, headers, connections, duration):
    """One client process of keepalive_load: `connections` kept-alive sockets, one request
    at a time on each, the paths in turn; (answers, latencies, bad statuses)."""
    import selectors
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    requests = [f"{method} {p} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode() for p in paths]
    sel = selectors.DefaultSelector()
    state = {}
    counter = 0
    for _ in range(connections):
        sock = socket.create_connection((host, port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        state[sock] = [b"", None, 0.0]  # buffer, body bytes still expected, start
        sel.register(sock, selectors.EVENT_READ)
    latencies, answers, bad = [], 0, 0

    def send(sock):
        nonlocal counter
        counter += 1
        state[sock][2] = now()
        try:
            sock.sendall(requests[counter % len(requests)])
        except OSError:
            pass  # closed by the server: the next read says so, and the request is sent again

    for sock in state:
        send(sock)
    end = now() + duration
    while now() < end:
        for key, _ in sel.select(timeout=1):
            sock = key.fileobj
            try:
                data = sock.recv(262144)
            except OSError:  # reset: the server closed while a request was on its way
                data = b""
            st = state[sock]
            if not data:
                # The server ended the connection (nginx does after keepalive_requests): a client opens the next.
                sel.unregister(sock)
                sock.close()
                del state[sock]
                sock = socket.create_connection((host, port))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                state[sock] = [b"", None, 0.0]
                sel.register(sock, selectors.EVENT_READ)
                send(sock)
                continue
            st[0] += data
            while True:
                if st[1] is None:
                    head_end = st[0].find(b"\r\n\r\n")
                    if head_end < 0:
                        break
                    head = st[0][:head_end].decode("latin-1")
                    st[0] = st[0][head_end + 4:]
                    if not head.startswith("HTTP/1.1 2") and not head.startswith("HTTP/1.1 304"):
                        bad += 1
                    m = re.search(r"(?im)^content-length:\s*(\d+)", head)
                    st[1] = int(m.group(1)) if m and method != "HEAD" else 0
                if len(st[0]) < st[1]:
                    break
                st[0] = st[0][st[1]:]
                st[1] = None
                latencies.append(now() - st[2])
                answers += 1
                send(sock)
                break
    for sock in state:
        sock.close()
    return answers, latencies, bad


def keepalive_load(base, prefix, method, count, headers, args, duration):
    """Requests by a client of our own (for HEAD: wrk waits for a body after a HEAD
    answer's Content-Length): two processes, --small-connections kept-alive
    connections in all, one request at a time on each; GET through it too, so HEAD
    is compared with GET by the same client."""
    import multiprocessing
    host, port = base.rsplit("//", 1)[1].rsplit(":", 1)
    paths = [f"{prefix}s-{i:05d}.bin" for i in range(count)]
    queue = multiprocessing.Queue()
    half = max(1, args.small_connections // 2)
    workers = [multiprocessing.Process(target=keepalive_worker,
                                       args=(host, int(port), method, paths[i::2], headers, half, duration, queue))
               for i in range(2)]
    for w in workers:
        w.start()
    results = [queue.get(timeout=duration + 60) for _ in workers]
    for w in workers:
        w.join(10)
    for r in results:
        if isinstance(r, str):
            raise BenchError(f"keepalive_load: {r}")
    answers = sum(r[0] for r in results)
    latencies = sorted(x for r in results for x in r[1])
    pick = (lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]) if latencies else (lambda q: None)
    return {"rps": answers / duration, "p50": pick(0.50), "p99": pick(0.99), "requests": answers,
            "non2xx": sum(r[2] for r in results), "errors": 0, "timeouts": 0, "raw": ""}


def rate_load(base, prefix, count, headers, args, tmp, label, rate):
    """GETs of the small files in turn at a fixed `rate` (h2load --rps): at --small-rate,
    well below what either server carries at most, the latency a client sees from a
    server that is not saturated, which the closed loop of wrk (every client sending
    again the moment it is answered, on the cores the server uses) cannot show; at the
    rates of --small-sweep, up to near saturation. Per-request times from
    h2load's log; p50, p99 and p99.9 over every request of the run."""
    name = re.sub(r"[^\w]+", "-", label)
    urls = os.path.join(tmp, f"rate-{name}.txt")
    with open(urls, "w") as f:
        for i in range(count):
            f.write(f"{base}{prefix}s-{i:05d}.bin\n")
    log_path = os.path.join(tmp, f"rate-{name}.tsv")
    if os.path.exists(log_path):
        os.remove(log_path)  # h2load appends to its log
    per_client = max(1, rate // args.small_connections)
    argv = ["h2load", "--h1", "-c", str(args.small_connections), "-t", "1", f"--rps={per_client}",
            "-D", str(args.duration), "-i", urls, f"--log-file={log_path}"]
    for key, value in headers.items():
        argv += ["-H", f"{key}: {value}"]
    rc, out, err = run(argv, args.duration + 60)
    if rc != 0:
        raise BenchError(f"h2load: exit {rc}: {err.strip() or out.strip()}")
    times, statuses = [], collections.Counter()
    with open(log_path) as f:
        for line in f:
            fields = line.split("\t")
            if len(fields) >= 3:
                statuses[fields[1]] += 1
                times.append(int(fields[2]) / 1e6)
    times.sort()
    if not times:
        raise BenchError(f"h2load: no request finished: {out.strip()[-300:]}")
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]
    non2xx = sum(n for status, n in statuses.items() if not status.startswith("2"))
    return {"rps": len(times) / args.duration, "p50": pick(0.50), "p99": pick(0.99), "p999": pick(0.999),
            "requests": len(times), "non2xx": non2xx, "errors": 0, "timeouts": 0, "raw": out}


def tree_cpu_seconds(pid):
    """CPU time (user + system) of a process and of every process under it, from
    /proc: nginx's workers are its master's children. None where /proc is missing."""
    try:
        parents = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    parents[int(entry)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
                except (OSError, IndexError, ValueError):
                    continue
        tree, found = {pid}, True
        while found:
            found = False
            for child, (parent, _) in parents.items():
                if parent in tree and child not in tree:
                    tree.add(child)
                    found = True
        return sum(parents[p][1] for p in tree if p in parents) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None


def bench_small(args, tmp, share, servers, results):
    r = results["small"] = collections.OrderedDict()
    small_args = argparse.Namespace(**vars(args))
    small_args.connections = args.small_connections
    runs = list(servers)
    if servers and servers[0].name == "fileshare":
        runs[1:1] = [cls(args, tmp, share) for cls in (FileshareBasic, FileshareUsers)
                     if cls.name.split("-")[1] in args.small_auth.split(",")]
    # The machine's speed drifts over the minutes of a round (other tenants'
    # work): a ratio to nginx's GET measured a minute before or after moves
    # with it, and even one measured just before moved by ±0.15. So each of
    # fileshare's wrk lines is measured in turns of a second with nginx's GET
    # (``run_wrk_in_turns``), and its ratio is to that (column "beside").
    beside = None
    if args.small_beside and any(s.name == "nginx" for s in servers):
        beside = NginxBeside(args, tmp, share)
        beside.available()
    beside_script = small_script(tmp, "nginx GET beside", "/small/", "get", args.small_files, {}) if beside else None
    for round_ in range(args.runs):
        # Half of nginx's GET rate in this round (beside fileshare's /api/files GET), for the rate:half lines.
        half_rate = None
        for s in runs:
            if beside and s.name.startswith("fileshare") and beside.proc is None:
                beside.start()
                if round_ == 0:
                    run_wrk(beside.base + "/small/", small_args, beside_script, 1)  # warm-up
            if beside and not s.name.startswith("fileshare"):
                beside.stop()  # one nginx at a time
            s.start()
            try:
                for label, prefix, kind in small_lines(s, args.small_sweep):
                    reference = None
                    interleave = beside and beside.proc is not None and kind in ("get", "pipelined", "304")
                    before = tree_cpu_seconds(s.proc.pid) if s.proc else None
                    if kind == "rate" or kind.startswith("rate:"):
                        if not shutil.which("h2load"):
                            log(f"small: {label}: h2load not installed (Debian: nghttp2-client), skipped")
                            continue
                        if kind == "rate:half":
                            if half_rate is None:
                                log(f"small: {label}: no nginx GET measured beside fileshare's in this round "
                                    f"(--no-small-beside, or nginx not among the peers), skipped")
                                continue
                            rate = half_rate
                        else:
                            rate = int(kind.split(":")[1]) if ":" in kind else args.small_rate
                        log(f"small: round {round_ + 1}: {label}, {rate} req/s, "
                            f"{args.small_connections} connections, {args.duration} s")
                        w = rate_load(s.base, prefix, args.small_files, server_headers(s), args, tmp, label, rate)
                        w["asked"] = rate
                    elif kind in ("head", "client-get"):
                        method = "HEAD" if kind == "head" else "GET"
                        log(f"small: round {round_ + 1}: {label}, own client, "
                            f"{args.small_connections} connections, {args.duration} s")
                        if round_ == 0:
                            keepalive_load(s.base, prefix, method, args.small_files, server_headers(s), args, 1)
                        w = keepalive_load(s.base, prefix, method, args.small_files, server_headers(s), args,
                                           args.duration)
                    else:
                        etags = fetch_etags(s, prefix, args.small_files) if kind == "304" else None
                        script = small_script(tmp, label, prefix, kind, args.small_files, server_headers(s), etags)
                        if not interleave:
                            log(f"small: round {round_ + 1}: {label}, wrk -c {args.small_connections} "
                                f"-d {args.duration}s")
                        if round_ == 0:
                            run_wrk(s.base + prefix, small_args, script, 1)  # warm-up
                        if interleave:
                            log(f"small: round {round_ + 1}: {label}, and nginx GET beside it, in turns of "
                                f"1 s, wrk -c {args.small_connections}, {args.duration} s each")
                            reference, w = run_wrk_in_turns(
                                (beside.base + "/small/", beside_script), (s.base + prefix, script),
                                small_args, args.duration)
                            if reference["non2xx"] or reference["errors"] or not reference["rps"]:
                                raise BenchError(f"nginx GET beside {label}: {reference['non2xx']} non-2xx "
                                                 f"answers, {reference['errors']} socket errors")
                            if label == "fileshare /api/files GET":
                                half_rate = int(reference["rps"] / 2)
                        else:
                            w = run_wrk(s.base + prefix, small_args, script, args.duration)
                    after = tree_cpu_seconds(s.proc.pid) if s.proc else None
                    # The server's own CPU per answer: unlike req/s, it hardly moves with how
                    # fast the machine happens to be during the run, and it is what a request costs.
                    requests = w["requests"]  # answers: wrk counts each pipelined one
                    w["cpu_us"] = ((after - before) * 1e6 / requests
                                   if before is not None and after is not None and requests else None)
                    if w["non2xx"] or w["errors"]:
                        raise BenchError(f"{label}: {w['non2xx']} non-2xx answers, {w['errors']} socket errors")
                    if reference:
                        w["beside"] = w["rps"] / reference["rps"]
                        w["beside_p99"] = reference["p99"]
                        r.setdefault("nginx GET beside fileshare's lines", []).append(reference)
                    r.setdefault(label, []).append(w)
            finally:
                s.stop()
    if beside:
        beside.stop()


def median_cpu(runs):
    """The median over the rounds of the server's CPU per answer, µs; None when not measured."""
    cpus = sorted(w["cpu_us"] for w in runs if w.get("cpu_us") is not None)
    return cpus[len(cpus) // 2] if cpus else None


def beside_ratios(runs):
    """Each round's req/s of a line over nginx's GET measured in turns with it, in round order."""
    return [w["beside"] for w in runs if w.get("beside")]


def report_small(r, args):
    out = [f"## 4. Small requests: {args.small_files} files of 4 KiB in turn, wrk -c {args.small_connections} "
           f"-t {args.threads} -d {args.duration}s (HEAD, and GET beside it: a client of our own), "
           f"median of {args.runs}"]
    medians = {}
    for label, runs in r.items():
        pick = sorted(runs, key=lambda w: w["rps"])[len(runs) // 2]
        medians[label] = pick
    nginx = medians.get("nginx GET")
    rows = []
    for label, w in medians.items():
        cpu = median_cpu(r[label])
        cpu = f"{cpu:.1f}" if cpu is not None else "-"
        besides = beside_ratios(r[label])
        rows.append([label, f"{w['rps']:,.0f}", f"{w['rps'] / nginx['rps']:.2f}" if nginx else "-",
                     f"{statistics.median(besides):.2f}" if besides else "-",
                     ms(w["p50"]), ms(w["p99"]), cpu, w["requests"]])
    out.append(table(["server and request", "req/s", "x nginx GET", "x nginx GET beside", "p50 ms", "p99 ms",
                      "server CPU us/req", "requests"], rows))
    out.append("")
    for name in ("fileshare", "fileshare-basic", "fileshare-users"):
        for face in ("/api/files", "/dav/"):
            line = medians.get(f"{name} {face} GET")
            if not line or not nginx:
                continue
            besides = beside_ratios(r[f"{name} {face} GET"])
            ratio = statistics.median(besides) if besides else line["rps"] / nginx["rps"]
            every = f"; each round {', '.join(f'{x:.2f}' for x in besides)}" if besides else ""
            fast = line["p99"] is not None and line["p99"] < 0.001
            # In turns, both p99s are the worst second's: nginx's in the same turns is the one to compare.
            beside_p99 = line.get("beside_p99")
            reference = f"; nginx beside it {ms(beside_p99)} ms, each the worst second's" if beside_p99 else ""
            out.append(f"goal: {name} {face} GET at least half of nginx's req/s: "
                       f"{'met' if ratio >= 0.5 else 'NOT met'} ({ratio:.2f}x"
                       f"{' nginx GET beside it, median' if besides else ''}{every}); "
                       f"p99 under 1 ms: {'met' if fast else 'NOT met'} ({ms(line['p99'])} ms{reference})")
    # Pipelined: half of nginx's pipelined GET; 304 and HEAD: at least a GET's rate.
    nginx_pipelined = medians.get(f"nginx GET, pipelined x{PIPELINE_DEPTH}")
    for face in ("/api/files", "/dav/"):
        line = medians.get(f"fileshare {face} GET, pipelined x{PIPELINE_DEPTH}")
        if line and nginx_pipelined:
            ratio = line["rps"] / nginx_pipelined["rps"]
            out.append(f"goal: fileshare {face} GET pipelined x{PIPELINE_DEPTH} at least half of nginx's pipelined: "
                       f"{'met' if ratio >= 0.5 else 'NOT met'} ({ratio:.2f}x)")
    get = medians.get("fileshare /api/files GET")
    own_get = medians.get("fileshare /api/files GET (own client)")
    for label, reference in (("fileshare /api/files 304", get), ("fileshare /api/files HEAD (own client)", own_get)):
        line = medians.get(label)
        if line and reference:
            ratio = line["rps"] / reference["rps"]
            out.append(f"goal: {label} at least as fast as its GET: {'met' if ratio >= 0.97 else 'NOT met'} "
                       f"({ratio:.2f}x the GET by the same client)")
    rate = medians.get("fileshare /api/files GET at a fixed rate (h2load)")
    if rate:
        nginx_rate = medians.get("nginx GET at a fixed rate (h2load)")
        fast = rate["p99"] < 0.001
        out.append(f"at a fixed rate of {args.small_rate} req/s (h2load): /api/files GET p99 {ms(rate['p99'])} ms, "
                   f"p99.9 {ms(rate['p999'])} ms"
                   + (f"; nginx p99 {ms(nginx_rate['p99'])} ms, p99.9 {ms(nginx_rate['p999'])} ms" if nginx_rate else "")
                   + f"; p99 under 1 ms: {'met' if fast else 'NOT met'}")
    # Half of nginx's rate, p99 under 1 ms: one load, each round's own rate.
    nginx_half = r.get(f"nginx {HALF_RATE}")
    for name in ("fileshare /api/files", "fileshare /dav/", "fileshare-basic /api/files",
                 "fileshare-users /api/files"):
        runs = r.get(f"{name} {HALF_RATE}")
        if not runs:
            continue
        p99 = statistics.median(w["p99"] for w in runs)
        held = [w for w in runs if w["p99"] < 0.001 and w["rps"] >= 0.97 * w["asked"]]
        rounds = ", ".join(f"{w['asked']:,} asked, {w['rps']:,.0f} done, p99 {ms(w['p99'])} ms" for w in runs)
        reference = ""
        if nginx_half:
            reference = "; nginx at the same rates: " + ", ".join(f"p99 {ms(w['p99'])} ms" for w in nginx_half)
        out.append(f"goal: {name} GET at half of nginx's GET rate with p99 under 1 ms (h2load): "
                   f"{'met' if len(held) == len(runs) else 'NOT met'} (held in {len(held)} of {len(runs)} "
                   f"rounds; median p99 {ms(p99)} ms; each round {rounds}{reference})")
    # The floor: what NIO and the kernel cost an answer, beside what fileshare's and nginx's cost.
    floor = medians.get("nio-floor GET")
    if floor:
        parts = []
        for who in ("nio-floor", "fileshare /api/files", "nginx"):
            for line, what in ((f"{who} GET", "saturated (wrk)"),
                               (f"{who} GET at a fixed rate (h2load)", f"at {args.small_rate:,} req/s"),
                               (f"{who} {HALF_RATE}", "at half nginx's rate")):
                cpu = median_cpu(r.get(line, []))
                if cpu is not None:
                    parts.append(f"{who} {what} {cpu:.1f}")
        floor_half = r.get(f"nio-floor {HALF_RATE}")
        half = ("; its p99 at half nginx's rate: " + ", ".join(f"{ms(w['p99'])} ms" for w in floor_half)
                if floor_half else "")
        out.append(f"nio-floor (the least a SwiftNIO server does for the same GET): {floor['rps']:,.0f} req/s "
                   f"saturated, p99 {ms(floor['p99'])} ms{half}. Server CPU per answer, us: " + "; ".join(parts))
    for who in ("fileshare /api/files", "nginx"):
        points = []
        for rate in args.small_sweep:
            runs = r.get(f"{who} GET at {rate:,} req/s (h2load)")
            if not runs:
                continue
            p99 = statistics.median(w["p99"] for w in runs)
            p999 = statistics.median(w["p999"] for w in runs)
            done = statistics.median(w["rps"] for w in runs)
            points.append((rate, done, p99, p999))
        if points:
            # Up to the first rate where it does not hold (a rate above one that
            # failed is not "up to").
            under = None
            for rate, done, p99, _ in sorted(points):
                if p99 >= 0.001 or done < 0.97 * rate:
                    break
                under = rate
            failed = [rate for rate, done, p99, _ in points if p99 >= 0.001 or done < 0.97 * rate]
            out.append(f"{who} GET at fixed rates (h2load, median of the rounds): "
                       + "; ".join(f"{rate:,} req/s asked, {done:,.0f} done, p99 {ms(p99)} ms, p99.9 {ms(p999)} ms"
                                   for rate, done, p99, p999 in points)
                       + (f" — p99 under 1 ms up to {under:,} req/s" if under else " — p99 under 1 ms at none")
                       + (f" (not at {', '.join(f'{rate:,}' for rate in failed)})" if failed else ""))
    out.append("Pipelined: wrk sends the requests of a batch in one write and waits for all their answers "
               "(p50/p99 are per batch). 304: each GET carries the file's ETag in If-None-Match. "
               "Fixed rate: h2load --rps, the same files in turn, latency of every request; at half nginx's "
               "GET rate: half the req/s of nginx's GET measured in turns with fileshare's /api/files GET "
               "in the same round, the same rate for every server of that round. "
               "Server CPU: user + system time of the server's processes during the run, per answer "
               "(median of the rounds). x nginx GET: over the median nginx GET row; x nginx GET beside: "
               "the median over the rounds of the line's req/s over nginx's GET measured in turns of 1 s "
               "with it (nginx idle beside fileshare; --no-small-beside leaves it out; the line's p99 is "
               "then its worst second's): the machine's speed drifts over seconds, and in turns this short "
               "both see the same machine.")
    return "\n".join(out)


# --------------------------------------------------------------------------

def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B").rstrip("I")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def check_binary_and_only(p, args):
    """--binary must be an executable (made absolute); --only becomes a list of names."""
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        p.error(f"--binary {args.binary}: not an executable file; build with "
                f"'swift build -c release --scratch-path .build-release --product fileshare'")
    args.binary = os.path.abspath(args.binary)
    args.only = [b.strip() for b in args.only.split(",") if b.strip()]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True, help="the fileshare executable")
    p.add_argument("--only", default="transfer,memory,listing,small,slow", help="benchmarks to run (comma-separated)")
    p.add_argument("--peers", default="nginx,wsgidav,copyparty",
                   help="peers to measure beside fileshare (comma-separated; '' for none)")
    p.add_argument("--size", type=parse_size, default=GiB, help="transfer: file size (default 1G)")
    p.add_argument("--runs", type=int, default=3, help="transfer: rounds, each measuring every server once (median reported)")
    p.add_argument("--memory-size", type=parse_size, default=4 * GiB, help="memory: upload size (default 4G)")
    p.add_argument("--no-memory-peers", dest="memory_peers", action="store_false",
                   help="memory: measure fileshare alone")
    p.add_argument("--items", type=int, default=10_000, help="listing: files in the listed folder")
    p.add_argument("--duration", type=int, default=10, help="listing: seconds of each wrk run")
    p.add_argument("--connections", type=int, default=50, help="listing: wrk -c")
    p.add_argument("--threads", type=int, default=2, help="listing: wrk -t")
    p.add_argument("--wrk-timeout", type=int, default=10, help="listing: wrk --timeout, seconds")
    p.add_argument("--slow-clients", type=int, default=300,
                   help="slow: clients dripping a header byte a second while ordinary requests are timed")
    p.add_argument("--small-files", type=int, default=2000, help="small: files of 4 KiB asked for in turn")
    p.add_argument("--small-connections", type=int, default=8, help="small: wrk -c (keep-alive clients)")
    p.add_argument("--small-rate", type=int, default=4000,
                   help="small: the fixed rate of the h2load lines (requests per second, all clients)")
    p.add_argument("--small-sweep", type=lambda text: [int(x) for x in text.split(",") if x.strip()],
                   default=[20000, 30000, 40000],
                   help="small: fileshare's /api/files GET and nginx's at each of these fixed rates "
                        "(h2load, comma-separated requests per second; '' for none): p99 as the load nears "
                        "what the server carries at most")
    p.add_argument("--small-auth", default="basic,users",
                   help="small: fileshare also with credentials: basic (--user), users (--users FILE); '' for none")
    p.add_argument("--no-small-beside", dest="small_beside", action="store_false",
                   help="small: no nginx GET measured in turns with each of fileshare's wrk lines (the "
                        "ratio 'beside'); a shorter phase, ratios that drift with the machine")
    p.add_argument("--pin", type=parse_pin, default=None, metavar="SERVER:CLIENT",
                   help="the servers on these CPUs, this script and every client it starts (wrk, h2load, "
                        "curl, its own) on those, e.g. 0:1 (CPU lists as taskset takes them: 0,2 or 0-3): "
                        "client and server then never wait for each other's time slice")
    p.add_argument("--nio-floor", default=None, metavar="PATH",
                   help="the nio-floor executable (Benchmarks/NIOFloor), for --peers nio-floor")
    p.add_argument("--curl-timeout", type=float, default=600.0, help="longest wait for one transfer")
    p.add_argument("--timeout", type=float, default=60.0, help="longest wait for a server to be ready")
    p.add_argument("--tmp", default="/tmp", help="where the temporary folder goes")
    p.add_argument("--quick", action="store_true",
                   help="small sizes: --size 256M --memory-size 1G --duration 5")
    args = p.parse_args(argv)
    if args.quick:
        given = set(a.split("=")[0] for a in argv)
        if "--size" not in given:
            args.size = 256 * MiB
        if "--memory-size" not in given:
            args.memory_size = GiB
        if "--duration" not in given:
            args.duration = 5
    check_binary_and_only(p, args)
    return args


def parse_cpus(text):
    cpus = set()
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def parse_pin(text):
    server, sep, client = text.partition(":")
    try:
        pin = (parse_cpus(server), parse_cpus(client))
    except ValueError:
        pin = None
    if not sep or not pin or not all(pin) or pin[0] & pin[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: expected SERVER:CLIENT, two CPU lists apart, e.g. 0:1")
    return pin


def server_affinity(args):
    """For Popen's preexec_fn: the server's process on --pin's server CPUs (its
    threads and children inherit them); None without --pin."""
    pin = getattr(args, "pin", None)  # dav.py's servers are these, without --pin
    if not pin:
        return None
    cpus = pin[0]
    return lambda: os.sched_setaffinity(0, cpus)


def check_space(args):
    need = args.size * 3 + args.memory_size + 256 * MiB  # blob, upload, disk test, memory upload
    st = os.statvfs(args.tmp)
    free = st.f_bavail * st.f_frsize
    if free < need:
        raise BenchError(f"{args.tmp} has {free / GiB:.1f} GiB free; this run needs about {need / GiB:.1f} GiB")


def pick_servers(first, peers, names, args, tmp, share):
    """`first` (fileshare) and the peers named (comma-separated) from the table `peers`;
    returns (servers, skipped), skipped saying why each missing peer is left out."""
    servers, skipped = [first(args, tmp, share)], []
    for name in [n.strip() for n in names.split(",") if n.strip()]:
        if name not in peers:
            raise SystemExit(f"--peers: unknown peer {name} (known: {', '.join(peers)})")
        s = peers[name](args, tmp, share)
        ok, why = s.available()
        if ok:
            servers.append(s)
        else:
            skipped.append(f"{name}: {why}")
            log(f"{name}: skipped: {why}")
    return servers, skipped


def print_header(title, servers, skipped, load_before, pin=None):
    """The machine line, what each server runs with, and the warnings every report starts with."""
    print()
    print(f"# {title}")
    print(f"machine: {os.cpu_count()} cores, Linux {platform.release()}; "
          + ", ".join(s.version() for s in servers) + f", {curl_version()}")
    print("authentication: none for any server (fileshare --no-auth; no peer is authenticated); "
          "all on 127.0.0.1, HTTP")
    print("peer settings: " + "; ".join(f"{s.name} {s.note}" for s in servers if s.note))
    if pin:
        print(f"pinned (--pin): the servers on CPUs {sorted(pin[0])}, the clients on CPUs {sorted(pin[1])}")
    print(f"load average (1 min) at the start: {load_before:.2f}")
    if load_before > 0.5:
        print(f"warning: the machine was busy with other work (load above 0.5 on {os.cpu_count()} cores): "
              f"the figures are noisy; the ratios within a round suffer least")
    if skipped:
        print("peers skipped: " + "; ".join(skipped))
    for line in benchcommon.killed_warnings():
        print(line)
    print("Every figure of a table was measured in this run, one server at a time (but for an idle nginx beside "
          "fileshare in the small requests, the reference measured in turns with each line); ratios are the "
          "figures to compare across machines.")
    print()


def run_phases(benches, args, tmp, share, servers):
    """Runs each (name, fn) of `benches` that --only names, in order; returns
    (results, how long each took as text, the time of all)."""
    results, phases = {}, []
    started = now()
    for name, fn in benches:
        if name in args.only:
            t = now()
            # A server with `phases` takes part in those alone (nio-floor: the small requests).
            fn(args, tmp, share, [s for s in servers if name in getattr(s, "phases", (name,))], results)
            phases.append(f"{name} {now() - t:.0f} s")
            log(f"{name}: done in {now() - t:.0f} s")
    return results, phases, now() - started


def guarded(label, prefix, args, body):
    """Runs body(tmp) with a fresh temporary folder under --tmp; on every way out (errors,
    Ctrl-C, SIGTERM, SIGHUP) stops every process started and removes the folder.
    Returns body's exit code, 1 on a BenchError, 130 when interrupted."""

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    tmp = None
    try:
        tmp = tempfile.mkdtemp(prefix=prefix, dir=args.tmp)
        return body(tmp)
    except BenchError as error:
        print(f"{label}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{label}: interrupted", file=sys.stderr)
        return 130
    finally:
        stop_all()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    args = parse_args(argv)

    def body(tmp):
        if args.pin:
            # This script and all it starts but the servers: the clients.
            os.sched_setaffinity(0, args.pin[1])
        for tool in ("curl",) + (("wrk",) if "listing" in args.only or "small" in args.only else ()):
            if not shutil.which(tool):
                raise BenchError(f"{tool} is needed (Debian: apt-get install {tool})")
        check_space(args)
        load_before = os.getloadavg()[0]
        share = make_share(args, tmp)
        servers, skipped = pick_servers(Fileshare, PEERS, args.peers, args, tmp, share)
        results, phases, elapsed = run_phases(
            (("transfer", bench_transfer), ("memory", bench_memory), ("listing", bench_listing),
             ("small", bench_small), ("slow", bench_slow)),
            args, tmp, share, servers)

        print_header("fileshare serve benchmarks", servers, skipped, load_before, args.pin)
        if "transfer" in results:
            print(report_transfer(results["transfer"], args, servers))
            print()
        if "memory" in results:
            print(report_memory(results["memory"], args))
            print()
        if "listing" in results:
            print(report_listing(results["listing"], args))
            print()
        if "small" in results:
            print(report_small(results["small"], args))
            print()
        if "slow" in results:
            print(report_slow(results["slow"], args))
            print()
        print(reproduce_line("Benchmarks/serve-run", argv))
        print(f"(took {elapsed:.0f} s: {', '.join(phases)})")
        return 0

    return guarded("serve bench", "fileshare-serve-bench-", args, body)


def curl_version():
    try:
        first = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        return " ".join(first.split()[:2])
    except (OSError, IndexError):
        return "curl"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
