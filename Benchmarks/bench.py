#!/usr/bin/env python3
"""Benchmarks for `fileshare watch`, measured side by side with peers in the same run.

    Benchmarks/run [options]                       # installs peers, builds, runs this
    python3 Benchmarks/bench.py --binary PATH [options]

1. scan     Initial scan of a generated tree (default 100,000 files in 10,100
            folders): wall time from process start until the watcher is ready
            (fileshare: the `scan-completed` line), median of --runs runs, as a
            ratio to `find DIR -printf '%i %s %T@\\n'`; fileshare's memory per item.
2. latency  --latency 0; --ops single file operations, one at a time (create,
            modify, rename, delete in turn), each timed from just after its last
            syscall returns until the watcher's matching line is read.
3. storm    Create --storm-files files in folders of 100 as fast as possible,
            rename a quarter, delete another quarter; wait until the watcher is
            quiet; replay its events into a set of paths and compare with the disk.
4. restart  fileshare alone: a plain start against a start with --state after
            --restart-changes files were changed while it was stopped (appended
            to, renamed, deleted): time to scan-completed, and whether exactly
            those changes were reported before it.

Peers: inotifywait (inotify-tools), watchdog, watchfiles (through peer_watch.py).
A peer that is not installed is skipped and said so. Only the Python standard
library is used here. Every process started is stopped and every temporary tree
removed on every way out.
"""

import argparse
import collections
import json
import math
import os
import platform
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchcommon  # noqa: E402
from benchcommon import (BenchError, log, proc_status, reproduce_line, spawn, stop,  # noqa: E402
                         stop_all, table)

HERE = os.path.dirname(os.path.abspath(__file__))
HELPER = os.path.join(HERE, "peer_watch.py")
now = time.perf_counter


class LineReader:
    """Reads lines from a pipe without buffering; each line carries the time it was read."""

    def __init__(self, pipe):
        self.fd = pipe.fileno()
        os.set_blocking(self.fd, False)
        self.buf = b""
        self.lines = collections.deque()
        self.eof = False

    def fill(self, timeout):
        if self.eof:
            return False
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        t = now()
        while True:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                break
            if not chunk:
                self.eof = True
                break
            self.buf += chunk
            if len(chunk) < (1 << 20):
                break
        if b"\n" in self.buf:
            parts = self.buf.split(b"\n")
            self.buf = parts.pop()
            for line in parts:
                self.lines.append((t, line))
        return True

    def next_line(self, deadline):
        """(time read, line) or None at the deadline or end of stream."""
        while not self.lines:
            remaining = deadline - now()
            if self.eof or remaining <= 0:
                return None
            self.fill(remaining)
        return self.lines.popleft()


class Collector(threading.Thread):
    """Drains a pipe in the background (so the watcher never blocks on a full pipe)."""

    def __init__(self, pipe):
        super().__init__(daemon=True)
        self.reader = LineReader(pipe)
        self.lines = []
        self.last = now()
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set() and not self.reader.eof:
            if self.reader.fill(0.1):
                while self.reader.lines:
                    t, line = self.reader.lines.popleft()
                    self.lines.append(line)
                    self.last = t

    def finish(self):
        self.halt.set()
        self.join(10)


# --------------------------------------------------------------------------
# Watchers: how to start each one, know it is ready, and read its lines.

class Watcher:
    name = "?"
    argv_note = ""

    def __init__(self, args, tmp):
        self.args = args
        self.tmp = tmp
        self.proc = None
        self.reader = None
        self.ready_info = {}
        self.collectors = []
        self.root_for_match = None

    def available(self):
        return True, ""

    def command(self, root, mode):
        raise NotImplementedError

    def start(self, root, mode, timeout):
        """Start watching root; returns seconds from spawn until ready."""
        argv = self.command(root, mode)
        self.collectors = []
        self.reader = None
        target = self.stderr_target()
        t0 = now()
        try:
            self.proc = spawn(argv, stdout=subprocess.PIPE, stderr=target, bufsize=0)
        finally:
            if target is not subprocess.PIPE:
                target.close()
        try:
            t_ready = self.wait_ready(t0 + timeout)
        except BaseException:
            self.stop()
            raise
        return t_ready - t0

    def stderr_target(self):
        return open(os.path.join(self.tmp, f"{self.name}.stderr.log"), "ab")

    def wait_ready(self, deadline):
        self.reader = LineReader(self.proc.stdout)
        while True:
            item = self.reader.next_line(deadline)
            if item is None:
                raise BenchError(f"{self.name}: not ready before the time-out "
                                 f"(exit code {self.proc.poll()}); see its stderr above")
            t, line = item
            if self.is_ready(line):
                return t

    def stop(self):
        if self.proc is not None:
            stop(self.proc, before_close=self.collectors, name=self.name)
            self.proc = None
        self.collectors = []

    def stderr_tail(self):
        path = os.path.join(self.tmp, f"{self.name}.stderr.log")
        try:
            with open(path, "rb") as f:
                return f.read()[-2000:].decode(errors="replace")
        except OSError:
            return ""


class JSONLinesWatcher(Watcher):
    """A watcher that prints one JSON object per line; ready at the line whose
    ready_key is ready_value."""
    ready_key, ready_value = None, None

    def is_ready(self, line):
        event = self.parse(line)
        if event and event.get(self.ready_key) == self.ready_value:
            self.ready_info = event
            return True
        return False

    def parse(self, line):
        try:
            return json.loads(line)
        except ValueError:
            return None


class Fileshare(JSONLinesWatcher):
    name = "fileshare"

    def command(self, root, mode):
        argv = [self.args.binary, "watch", root, "--json"]
        if mode == "latency":
            argv += ["--latency", "0"]
        return argv

    ready_key, ready_value = "type", "scan-completed"

    def matches(self, event, op, path):
        if not event:
            return False
        kind = event.get("type")
        if op == "create":
            return kind == "added" and event.get("path") == path
        if op == "modify":
            return kind == "modified" and event.get("path") == path
        if op == "rename":
            return kind in ("renamed", "moved") and event.get("to") == path
        if op == "delete":
            return kind == "removed" and event.get("path") == path
        return False


class Inotifywait(Watcher):
    name = "inotifywait"
    FORMAT = "%e|%w%f"

    def available(self):
        if shutil.which("inotifywait"):
            return True, ""
        return False, "not installed (apt-get install inotify-tools)"

    def command(self, root, mode):
        if mode == "scan":
            return ["inotifywait", "-m", "-r", root]
        return ["inotifywait", "-m", "-r", "-e", "create,modify,delete,moved_from,moved_to",
                "--format", self.FORMAT, root]

    def stderr_target(self):
        return subprocess.PIPE

    def wait_ready(self, deadline):
        stderr = LineReader(self.proc.stderr)
        while True:
            item = stderr.next_line(deadline)
            if item is None:
                raise BenchError(f"inotifywait: no 'Watches established.' before the time-out "
                                 f"(exit code {self.proc.poll()})")
            t, line = item
            if b"Watches established" in line:
                break
            if b"Setting up watches" not in line:
                sys.stderr.write("inotifywait: " + line.decode(errors="replace") + "\n")
        # From here on, drain stderr in the background.
        collector = Collector(self.proc.stderr)
        self.collectors.append(collector)
        collector.start()
        if self.proc.stdout is not None:
            self.reader = LineReader(self.proc.stdout)
        return t

    def parse(self, line):
        text = line.decode(errors="replace")
        events, _, path = text.partition("|")
        return events.split(","), path

    def matches(self, parsed, op, path):
        events, full = parsed
        if full != os.path.join(self.root_for_match, path):
            return False
        wanted = {"create": "CREATE", "modify": "MODIFY", "rename": "MOVED_TO", "delete": "DELETE"}[op]
        return wanted in events


class Watchdog(JSONLinesWatcher):
    name = "watchdog"

    def available(self):
        try:
            import watchdog  # noqa: F401
        except ImportError:
            return False, "not installed (pip install watchdog)"
        return True, ""

    def command(self, root, mode):
        return [sys.executable, HELPER, "watchdog", root]

    ready_key, ready_value = "e", "ready"

    def matches(self, event, op, path):
        if not event:
            return False
        full = os.path.join(self.root_for_match, path)
        kind = event.get("e")
        if op == "create":
            return kind == "created" and event.get("p") == full
        if op == "modify":
            return kind == "modified" and event.get("p") == full
        if op == "rename":
            return kind == "moved" and event.get("d") == full
        if op == "delete":
            return kind == "deleted" and event.get("p") == full
        return False


class Watchfiles(Watchdog):
    name = "watchfiles"

    def available(self):
        try:
            import watchfiles  # noqa: F401
        except ImportError:
            return False, "not installed (pip install watchfiles)"
        return True, ""

    def command(self, root, mode):
        return [sys.executable, HELPER, "watchfiles", root,
                "--step-ms", str(self.args.watchfiles_step_ms),
                "--debounce-ms", str(self.args.watchfiles_debounce_ms)]

    def matches(self, event, op, path):
        if not event or "b" not in event:
            return False
        full = os.path.join(self.root_for_match, path)
        wanted = {"create": 1, "modify": 2, "rename": 1, "delete": 3}[op]
        return [wanted, full] in event["b"]


# --------------------------------------------------------------------------
# Helpers

def percentile(values, q):
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = max(0, math.ceil(q * len(ordered)) - 1)
    return ordered[index]


def fmt(value, digits=3):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def write_file(path, data):
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def disk_paths(root):
    paths = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        prefix = "" if rel == "." else rel + "/"
        for name in dirnames:
            paths[prefix + name] = "directory"
        for name in filenames:
            paths[prefix + name] = "file"
    return paths


# --------------------------------------------------------------------------
# 1. Initial scan

def generate_tree(root, files, per_folder=10, subfolders=100):
    tops = max(1, files // (per_folder * subfolders))
    count_files = count_dirs = 0
    data = b"hello\n"
    for a in range(tops):
        top = os.path.join(root, f"d{a:03d}")
        os.mkdir(top)
        count_dirs += 1
        for b in range(subfolders):
            sub = os.path.join(top, f"s{b:03d}")
            os.mkdir(sub)
            count_dirs += 1
            for c in range(per_folder):
                write_file(os.path.join(sub, f"f{c}.txt"), data)
                count_files += 1
    return count_files, count_dirs


def bench_scan(args, tmp, watchers, results):
    root = os.path.join(tmp, "scan")
    empty = os.path.join(tmp, "empty")
    os.mkdir(root)
    os.mkdir(empty)
    log(f"scan: generating {args.files} files ...")
    t = now()
    nfiles, ndirs = generate_tree(root, args.files)
    items = nfiles + ndirs
    log(f"scan: {nfiles} files in {ndirs} folders generated in {now() - t:.1f} s; warming the cache")
    find_argv = ["find", root, "-printf", "%i %s %T@\\n"]
    subprocess.run(find_argv, stdout=subprocess.DEVNULL, check=True)

    times = collections.defaultdict(list)       # name -> [seconds]
    setup = collections.defaultdict(list)       # python peers: in-process set-up time
    hwm = collections.defaultdict(list)         # name -> [VmHWM bytes at ready]
    fs_rss = []
    fs_items = None
    for run in range(args.runs):
        log(f"scan: run {run + 1}/{args.runs}")
        t0 = now()
        subprocess.run(find_argv, stdout=subprocess.DEVNULL, check=True)
        times["find"].append(now() - t0)
        for w in watchers:
            try:
                elapsed = w.start(root, "scan", args.timeout)
                status = proc_status(w.proc.pid)
                if w.name == "fileshare":
                    time.sleep(0.2)  # let a late allocation show up in VmHWM
                    later = proc_status(w.proc.pid)
                    status["VmHWM"] = max(status.get("VmHWM", 0), later.get("VmHWM", 0))
                    fs_rss.append(max(status.get("VmRSS", 0), later.get("VmRSS", 0)))
                    fs_items = w.ready_info.get("items")
            finally:
                w.stop()
            times[w.name].append(elapsed)
            if "VmHWM" in status:
                hwm[w.name].append(status["VmHWM"])
            if "setup_s" in w.ready_info:
                setup[w.name].append(w.ready_info["setup_s"])

    # fileshare's baseline: the same command on an empty folder.
    base_hwm, base_rss = [], []
    fs = next((w for w in watchers if w.name == "fileshare"), None)
    for _ in range(3):
        try:
            fs.start(empty, "scan", args.timeout)
            time.sleep(0.2)
            status = proc_status(fs.proc.pid)
        finally:
            fs.stop()
        base_hwm.append(status.get("VmHWM", 0))
        base_rss.append(status.get("VmRSS", 0))

    find_median = statistics.median(times["find"])
    rows = []
    rows.append(["find -printf (floor)", fmt(find_median), "1.00", "-", "-"])
    for w in watchers:
        med = statistics.median(times[w.name])
        peak = statistics.median(hwm[w.name]) / 2**20 if hwm[w.name] else None
        note = ""
        if w.name == "fileshare":
            note = f"goal <= 1.3x find: {'met' if med <= 1.3 * find_median else 'NOT met'}"
        elif w.name == "inotifywait":
            note = "until 'Watches established.' on stderr"
        elif w.name in ("watchdog", "watchfiles"):
            note = "includes python start-up and import"
        rows.append([w.name, fmt(med), f"{med / find_median:.2f}", fmt(peak, 1), note])
        if setup[w.name]:
            smed = statistics.median(setup[w.name])
            what = "Observer.schedule+start" if w.name == "watchdog" else "RustNotify() constructor"
            rows.append([f"{w.name} (set-up only)", fmt(smed), f"{smed / find_median:.2f}", "-",
                         f"in-process: {what}"])
    hwm_med = statistics.median(hwm["fileshare"])
    rss_med = statistics.median(fs_rss)
    base_h = statistics.median(base_hwm)
    base_r = statistics.median(base_rss)
    per_item_hwm = (hwm_med - base_h) / items
    per_item_rss = (rss_med - base_r) / items
    results["scan"] = {
        "items": items, "files": nfiles, "dirs": ndirs, "fs_items": fs_items,
        "rows": rows, "find_median": find_median, "times": dict(times),
        "per_item_hwm": per_item_hwm, "per_item_rss": per_item_rss,
        "hwm": hwm_med, "rss": rss_med, "base_hwm": base_h, "base_rss": base_r,
        "fs_ratio": statistics.median(times["fileshare"]) / find_median,
    }


def report_scan(r, args):
    out = [f"## 1. Initial scan: {r['files']} files + {r['dirs']} folders = {r['items']} items "
           f"(fileshare counted {r['fs_items']}); median of {args.runs} runs, warm cache"]
    out.append(table(["tool", "median s", "x find", "peak RSS MiB", "note"], r["rows"]))
    out.append("")
    out.append(f"fileshare memory: VmHWM {r['hwm'] / 2**20:.1f} MiB after scan-completed, "
               f"{r['base_hwm'] / 2**20:.1f} MiB on an empty folder -> "
               f"{r['per_item_hwm']:.0f} bytes/item (goal < 120: "
               f"{'met' if r['per_item_hwm'] < 120 else 'NOT met'}); "
               f"by VmRSS: {r['per_item_rss']:.0f} bytes/item")
    return "\n".join(out)


# --------------------------------------------------------------------------
# 2. Latency

OPS = ("create", "modify", "rename", "delete")


def bench_latency(args, tmp, watchers, results):
    root = os.path.join(tmp, "latency")
    work = os.path.join(root, "w")
    os.makedirs(work)
    modify_files = 50
    old = time.time() - 3600  # old files: nobody is writing them when the watcher starts
    for j in range(modify_files):
        write_file(os.path.join(work, f"m{j:03d}"), b"start\n")
        os.utime(os.path.join(work, f"m{j:03d}"), (old, old))
    ops = [op for op in OPS if op in args.latency_ops]
    per_tool = {}
    serial = 0
    for w in watchers:
        log(f"latency: {w.name}, {args.ops} operations")
        w.root_for_match = root
        lat = {op: [] for op in ops}
        missed = {op: 0 for op in ops}
        streak = {op: 0 for op in ops}
        disabled = set()
        missed_examples = []
        w.start(root, "latency", args.timeout)
        try:
            time.sleep(0.2)
            reader = w.reader
            total = args.ops + args.warmup
            done = 0
            i = 0
            while done < total:
                op = ops[i % len(ops)]
                k = serial + i // len(ops)
                i += 1
                if op in disabled and op != "create":
                    # still keep the file lifecycle going so the disk state stays the same
                    if op == "rename":
                        os.rename(os.path.join(work, f"f{k}"), os.path.join(work, f"g{k}"))
                    elif op == "delete":
                        os.unlink(os.path.join(work, f"g{k}"))
                    continue
                if op == "create":
                    rel = f"w/f{k}"
                    write_file(os.path.join(root, rel), b"0123456789abcdef")
                elif op == "modify":
                    rel = f"w/m{k % modify_files:03d}"
                    fd = os.open(os.path.join(root, rel), os.O_WRONLY | os.O_APPEND)
                    os.write(fd, b"x")
                    os.close(fd)
                elif op == "rename":
                    rel = f"w/g{k}"
                    os.rename(os.path.join(work, f"f{k}"), os.path.join(root, rel))
                else:
                    rel = f"w/g{k}"
                    os.unlink(os.path.join(root, rel))
                t0 = now()
                deadline = t0 + args.op_timeout
                found = None
                while True:
                    item = reader.next_line(deadline)
                    if item is None:
                        break
                    t, line = item
                    if t < t0:
                        continue  # read before this operation: cannot be its event
                    if w.matches(w.parse(line), op, rel):
                        found = t - t0
                        break
                done += 1
                counted = done > args.warmup
                if found is None:
                    if counted:
                        missed[op] += 1
                        if len(missed_examples) < 10:
                            missed_examples.append(f"{op} {rel}")
                    streak[op] += 1
                    if streak[op] >= args.max_missed:
                        log(f"latency: {w.name} reported no event for {streak[op]} '{op}' "
                            f"operations in a row; skipping '{op}' for it")
                        disabled.add(op)
                        if op == "create":
                            break
                else:
                    streak[op] = 0
                    if counted:
                        lat[op].append(found * 1000)
        finally:
            w.stop()
        serial += args.ops + args.warmup + 4
        per_tool[w.name] = {"lat": lat, "missed": missed, "disabled": disabled,
                            "missed_examples": missed_examples}
        # remove what a skipped step may have left behind, so the next tool starts alike
        for name in os.listdir(work):
            if not name.startswith("m"):
                os.unlink(os.path.join(work, name))
    results["latency"] = {"per_tool": per_tool, "ops": ops}


def report_latency(r, args):
    ops = r["ops"]
    per_tool = r["per_tool"]
    common = [op for op in ops
              if all(op not in t["disabled"] and t["lat"][op] for t in per_tool.values())]
    out = [f"## 2. Latency: {args.ops} operations ({'/'.join(ops)} in turn) after "
           f"{args.warmup} warm-up ones, fileshare --latency 0; "
           f"p50/p99/max over the operations every tool reported ({'/'.join(common) or 'none'})"]
    rows = []
    summary = {}
    for name, t in per_tool.items():
        values = [v for op in common for v in t["lat"][op]]
        p50, p99, mx = percentile(values, 0.5), percentile(values, 0.99), (max(values) if values else None)
        summary[name] = (p50, p99)
        missed = sum(t["missed"].values())
        skipped = ",".join(sorted(t["disabled"])) or "-"
        rows.append([name, fmt(p50), fmt(p99), fmt(mx), str(len(values)), str(missed), skipped])
    base = summary.get("inotifywait")
    if base:
        for row in rows:
            p50, p99 = summary[row[0]]
            row.insert(4, f"{p50 / base[0]:.2f}" if base[0] and not math.isnan(p50) else "-")
    headers = ["tool", "p50 ms", "p99 ms", "max ms"] + (["p50 x inotifywait"] if base else []) + \
        ["n", "missed", "no event for"]
    out.append(table(headers, rows))
    out.append("")
    out.append("per operation (p50 / p99 ms):")
    rows = []
    for name, t in per_tool.items():
        row = [name]
        for op in ops:
            values = t["lat"][op]
            if op in t["disabled"] and not values:
                row.append("no event")
            else:
                row.append(f"{fmt(percentile(values, 0.5))} / {fmt(percentile(values, 0.99))}"
                           + (f" ({t['missed'][op]} missed)" if t["missed"][op] else ""))
        rows.append(row)
    out.append(table(["tool"] + list(ops), rows))
    out.append("(time from the end of the operation's last syscall to the read of the matching line; "
               "a few microseconds means the line was already in the pipe when the script looked)")
    for name, t in per_tool.items():
        if t["missed_examples"]:
            out.append(f"{name}: no matching event within {args.op_timeout:g} s for: "
                       + ", ".join(t["missed_examples"]))
    if base and "fileshare" in summary:
        diff = summary["fileshare"][1] - base[1]
        out.append("")
        out.append(f"fileshare p99 - inotifywait p99 = {diff:.3f} ms (goal within 2 ms: "
                   f"{'met' if diff <= 2 else 'NOT met'})")
    return "\n".join(out)


# --------------------------------------------------------------------------
# 3. Storm

class View:
    """The set of paths a consumer keeps by replaying events, with subtree moves and deletes."""

    def __init__(self):
        self.kind = {}
        self.children = collections.defaultdict(set)
        self.anomalies = collections.Counter()

    @staticmethod
    def parent(path):
        return path.rpartition("/")[0]

    def add(self, path, kind="?"):
        if path in self.kind:
            self.anomalies["added an existing path"] += 1
        self.kind[path] = kind
        self.children[self.parent(path)].add(path)

    def _subtree(self, path):
        found = []
        stack = [path]
        while stack:
            p = stack.pop()
            if p in self.kind:
                found.append(p)
            stack.extend(self.children.get(p, ()))
        return found

    def remove(self, path, count=True):
        if count and path not in self.kind:
            self.anomalies["removed an unknown path"] += 1
        for p in self._subtree(path):
            del self.kind[p]
            self.children.pop(p, None)
            self.children[self.parent(p)].discard(p)

    def move(self, src, dst, kind="?"):
        if src not in self.kind:
            self.anomalies["moved an unknown path"] += 1
            self.remove(dst, count=False)
            self.add(dst, kind)
            return
        moved = [(p, self.kind[p]) for p in self._subtree(src)]
        self.remove(src)
        self.remove(dst, count=False)  # a move onto an existing path replaces it
        for p, k in moved:
            self.add(dst + p[len(src):], k)


def rel_of(path, root):
    if path == root:
        return ""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def replay(name, lines, root):
    view = View()
    info = collections.Counter()
    for raw in lines:
        if name == "fileshare":
            try:
                e = json.loads(raw)
            except ValueError:
                info["unparsable lines"] += 1
                continue
            t = e.get("type")
            info[t] += 1
            if t in ("added", "duplicated"):
                view.add(e["path"], e.get("kind", "?"))
            elif t == "removed":
                view.remove(e["path"])
            elif t in ("renamed", "moved"):
                view.move(e["from"], e["to"], e.get("kind", "?"))
        elif name == "inotifywait":
            text = raw.decode(errors="replace")
            events, _, path = text.partition("|")
            events = events.split(",")
            rel = rel_of(path, root)
            for ev in events:
                info[ev] += 1
            if rel is None or rel == "":
                continue
            kind = "directory" if "ISDIR" in events else "file"
            if "CREATE" in events or "MOVED_TO" in events:
                view.add(rel, kind)
            elif "DELETE" in events or "MOVED_FROM" in events:
                view.remove(rel)
        elif name == "watchdog":
            try:
                e = json.loads(raw)
            except ValueError:
                continue
            t = e.get("e")
            info[t] += 1
            rel = rel_of(e.get("p", ""), root)
            if rel is None or rel == "":
                continue
            kind = "directory" if e.get("dir") else "file"
            if t == "created":
                view.add(rel, kind)
            elif t == "deleted":
                view.remove(rel)
            elif t == "moved":
                dst = rel_of(e.get("d", ""), root)
                if dst is None:
                    view.remove(rel)
                else:
                    view.move(rel, dst, kind)
        elif name == "watchfiles":
            try:
                e = json.loads(raw)
            except ValueError:
                continue
            if "b" not in e:
                continue
            batch = [(c, rel_of(p, root)) for c, p in e["b"]]
            info["batches"] += 1
            # A batch is an unordered set: apply its additions, then its deletions.
            # Exact for this storm, where no path comes back after being deleted.
            for c, rel in batch:
                info[{1: "added", 2: "modified", 3: "deleted"}.get(c, str(c))] += 1
                if c == 1 and rel:
                    view.add(rel)
            for c, rel in batch:
                if c == 3 and rel:
                    view.remove(rel)
    return view, info


def bench_storm(args, tmp, watchers, results):
    per_folder = 100
    folders = max(1, args.storm_files // per_folder)
    renames = max(0, min(per_folder // 4, args.storm_renames // folders))
    deletes = max(0, min(per_folder // 4, args.storm_deletes // folders))
    # In every folder, file 4i+1 is renamed and 4i+2 deleted (for the first ones), so the files
    # created right after their folder (when a watcher may not watch it yet) are kept as they are.
    rename_idx = [4 * i + 1 for i in range(renames)]
    delete_idx = [4 * i + 2 for i in range(deletes)]
    out = {}
    for w in watchers:
        root = os.path.join(tmp, f"storm-{w.name}")
        os.mkdir(root)
        log(f"storm: {w.name}")
        collector = None
        rename_map = {}
        try:
            w.start(root, "storm", args.timeout)
            collector = Collector(w.proc.stdout)
            w.collectors.append(collector)
            # lines the ready reader already read
            if w.reader is not None:
                collector.lines.extend(line for _, line in w.reader.lines)
                if w.reader.buf:
                    collector.reader.buf = w.reader.buf
            collector.start()
            t0 = now()
            for d in range(folders):
                folder = os.path.join(root, f"d{d:03d}")
                os.mkdir(folder)
                for f in range(per_folder):
                    write_file(os.path.join(folder, f"f{f:03d}.txt"), b"storm\n")
            t_created = now()
            for d in range(folders):
                for f in rename_idx:
                    src, dst = f"d{d:03d}/f{f:03d}.txt", f"d{d:03d}/r{f:03d}.txt"
                    os.rename(os.path.join(root, src), os.path.join(root, dst))
                    rename_map[src] = dst
            t_renamed = now()
            for d in range(folders):
                for f in delete_idx:
                    os.unlink(os.path.join(root, f"d{d:03d}/f{f:03d}.txt"))
            t_done = now()
            deadline = t_done + args.storm_timeout
            while now() < deadline:
                if now() - max(collector.last, t_done) >= args.quiet:
                    break
                if w.proc.poll() is not None:
                    break
                time.sleep(0.05)
            quiet_after = max(collector.last, t_done) - t_done
            timed_out = now() >= deadline
            exit_code = w.proc.poll()
        finally:
            w.stop()
        truth = disk_paths(root)
        view, info = replay(w.name, collector.lines, root)
        missing = sorted(set(truth) - set(view.kind))
        extra = sorted(set(view.kind) - set(truth))
        entry = {
            "events": len(collector.lines), "missing": missing, "extra": extra,
            "truth": len(truth), "info": info, "anomalies": view.anomalies,
            "ops_s": t_done - t0, "create_s": t_created - t0, "rename_s": t_renamed - t_created,
            "quiet_after": quiet_after, "timed_out": timed_out, "exit_code": exit_code,
        }
        if w.name == "fileshare":
            kinds = sum(1 for p, k in truth.items() if p in view.kind and view.kind[p] != k)
            entry["kind_mismatch"] = kinds
            renamed = moved = 0
            for raw in collector.lines:
                try:
                    e = json.loads(raw)
                except ValueError:
                    continue
                if e.get("type") in ("renamed", "moved") and rename_map.get(e.get("from")) == e.get("to"):
                    if e["type"] == "renamed":
                        renamed += 1
                    else:
                        moved += 1
            entry["renamed"] = renamed
            entry["moved"] = moved
            entry["stderr"] = w.stderr_tail()
        out[w.name] = entry
        shutil.rmtree(root, ignore_errors=True)
    results["storm"] = {"per_tool": out, "folders": folders, "files": folders * per_folder,
                        "renames": renames * folders, "deletes": deletes * folders}


def report_storm(r, args):
    out = [f"## 3. Storm: {r['folders']} new folders with {r['files']} files (each folder then its "
           f"files), then {r['renames']} renames (same folder), then {r['deletes']} deletes; "
           f"replayed events vs disk once quiet for {args.quiet:g} s"]
    rows = []
    for name, e in r["per_tool"].items():
        note = []
        if e["timed_out"]:
            note.append("never quiet (time-out)")
        if e["exit_code"] is not None:
            note.append(f"exited {e['exit_code']}")
        if name == "fileshare":
            note.append(f"renames as renamed: {e['renamed']}/{r['renames']}"
                        + (f", as moved: {e['moved']}" if e["moved"] else ""))
            for key in ("rescanned", "degraded", "error"):
                if e["info"].get(key):
                    note.append(f"{key}: {e['info'][key]}")
            if e.get("kind_mismatch"):
                note.append(f"wrong kind: {e['kind_mismatch']}")
        if name == "inotifywait" and e["info"].get("Q_OVERFLOW"):
            note.append(f"Q_OVERFLOW: {e['info']['Q_OVERFLOW']}")
        if name == "watchfiles":
            note.append("batches are unordered sets: replayed as adds, then deletes")
        rows.append([name, str(e["truth"]), str(e["events"]), str(len(e["missing"])),
                     str(len(e["extra"])), "OK" if not e["missing"] and not e["extra"] else "WRONG",
                     fmt(e["quiet_after"], 2), "; ".join(note)])
    out.append(table(["tool", "on disk", "lines", "missing", "extra", "result",
                      "last line s", "note"], rows))
    any_e = next(iter(r["per_tool"].values()), None)
    if any_e:
        out.append(f"(storm operations took {any_e['ops_s']:.2f} s for the first tool; "
                   f"'last line s' = seconds from the last operation to the watcher's last line)")
    for name, e in r["per_tool"].items():
        limit = 20 if name == "fileshare" else 5
        if e["missing"] or e["extra"] or e["anomalies"]:
            out.append("")
            out.append(f"{name}: event counts {dict(e['info'])}")
            if e["anomalies"]:
                out.append(f"{name}: replay anomalies {dict(e['anomalies'])}")
            if e["missing"]:
                out.append(f"{name}: missing (first {limit}): {e['missing'][:limit]}")
            if e["extra"]:
                out.append(f"{name}: extra (first {limit}): {e['extra'][:limit]}")
        if name == "fileshare" and e.get("stderr", "").strip():
            out.append(f"fileshare stderr (tail): {e['stderr'].strip()[-600:]}")
    return "\n".join(out)


# --------------------------------------------------------------------------

def versions(args, watchers):
    parts = []
    try:
        commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--", "../Sources"],
                               capture_output=True, text=True).stdout.strip()
        if commit:
            parts.append(f"fileshare {commit}{' (Sources modified)' if dirty else ''}")
    except OSError:
        pass
    for w in watchers:
        if w.name == "inotifywait":
            text = subprocess.run(["inotifywait", "--help"], capture_output=True, text=True)
            first = (text.stdout or text.stderr).splitlines()[:1]
            parts.append(first[0].strip() if first else "inotifywait")
        elif w.name == "watchdog":
            import watchdog.version
            parts.append(f"watchdog {watchdog.version.VERSION_STRING}")
        elif w.name == "watchfiles":
            import watchfiles
            parts.append(f"watchfiles {watchfiles.__version__} (RustNotify, step {args.watchfiles_step_ms} ms, "
                         f"debounce {args.watchfiles_debounce_ms} ms)")
    return ", ".join(parts)


# --------------------------------------------------------------------------
# 4. Restart from a saved state

class FileshareWithState(Fileshare):
    """fileshare watch --state FILE; keeps the events reported before scan-completed."""

    def __init__(self, args, tmp, state):
        super().__init__(args, tmp)
        self.state = state
        self.before_ready = []

    def command(self, root, mode):
        return super().command(root, mode) + ["--state", self.state]

    def is_ready(self, line):
        if super().is_ready(line):
            return True
        event = self.parse(line)
        if event and event.get("type") != "scan-started":
            self.before_ready.append(event)
        return False


def make_offline_changes(root, files, first, count):
    """Changes `count` files from index `first` on: 40% appended to, 30% renamed
    in their folder, 30% deleted. Returns the events a watcher must report."""
    expected = []
    for k in range(count):
        rel = files[(first + k) % len(files)]
        path = os.path.join(root, rel)
        share = k * 10 // count
        if share < 4:
            with open(path, "ab") as f:
                f.write(b"changed while stopped\n")
            expected.append(("modified", rel))
        elif share < 7:
            new = os.path.join(os.path.dirname(rel), f"renamed-{first + k}.txt")
            os.rename(path, os.path.join(root, new))
            expected.append(("renamed", rel, new))
        else:
            os.unlink(path)
            expected.append(("removed", rel))
    return expected


def bench_restart(args, tmp, watchers, results):
    root = os.path.join(tmp, "restart")
    os.mkdir(root)
    log(f"restart: generating {args.files} files ...")
    nfiles, ndirs = generate_tree(root, args.files)
    files = sorted(path for path, kind in disk_paths(root).items() if kind == "file")
    subprocess.run(["find", root, "-printf", "%i %s %T@\\n"], stdout=subprocess.DEVNULL, check=True)
    state = os.path.join(tmp, "restart.state")
    plain = Fileshare(args, tmp)
    stateful = FileshareWithState(args, tmp, state)
    # The first run has no state yet: every item is reported; its stop saves the state.
    try:
        stateful.start(root, "scan", args.timeout)
    finally:
        stateful.stop()
    plain_times, state_times, checks = [], [], []
    for run in range(args.runs):
        log(f"restart: run {run + 1}/{args.runs}")
        try:
            plain_times.append(plain.start(root, "scan", args.timeout))
        finally:
            plain.stop()
        expected = make_offline_changes(root, files, run * args.restart_changes, args.restart_changes)
        stateful.before_ready = []
        try:
            state_times.append(stateful.start(root, "scan", args.timeout))
        finally:
            stateful.stop()
        got = []
        for e in stateful.before_ready:
            if e.get("type") in ("renamed", "moved"):
                got.append((e["type"], e.get("from"), e.get("to")))
            else:
                got.append((e.get("type"), e.get("path")))
        checks.append((sorted(expected), sorted(got)))
    plain_median = statistics.median(plain_times)
    state_median = statistics.median(state_times)
    exact = sum(1 for want, have in checks if want == have)
    sample = next(((want, have) for want, have in checks if want != have), None)
    results["restart"] = {
        "items": nfiles + ndirs, "plain": plain_median, "state": state_median,
        "ratio": state_median / plain_median, "exact": exact, "runs": len(checks),
        "reported": [len(have) for _, have in checks], "sample": sample,
        "state_bytes": os.path.getsize(state) if os.path.exists(state) else 0,
    }


def report_restart(r, args):
    out = [f"## 4. Restart from a saved state: {r['items']} items, {args.restart_changes} changed while stopped "
           f"(40% appended to, 30% renamed, 30% deleted); median of {args.runs} runs"]
    rows = [["fileshare watch", fmt(r["plain"]), "1.00", "-"],
            ["fileshare watch --state", fmt(r["state"]), f"{r['ratio']:.2f}",
             f"{r['exact']}/{r['runs']} runs reported exactly the changes ({r['reported']} events)"]]
    out.append(table(["start", "median s", "x plain", "changes before scan-completed"], rows))
    out.append("")
    out.append(f"goal: start with state <= 1.2x a plain start: {'met' if r['ratio'] <= 1.2 else 'NOT met'}; "
               f"exactly the {args.restart_changes}: {'met' if r['exact'] == r['runs'] else 'NOT met'}; "
               f"state file {r['state_bytes'] / 2**20:.1f} MiB")
    if r["sample"]:
        want, have = r["sample"]
        out.append(f"first mismatch: missing {[x for x in want if x not in have][:5]}, "
                   f"extra {[x for x in have if x not in want][:5]}")
    return "\n".join(out)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True, help="the fileshare executable")
    p.add_argument("--only", default="scan,latency,storm,restart", help="benchmarks to run (comma-separated)")
    p.add_argument("--peers", default="inotifywait,watchdog,watchfiles",
                   help="peers to measure beside fileshare (comma-separated; '' for none)")
    p.add_argument("--files", type=int, default=100_000,
                   help="scan: files, 10 per folder, 100 folders per top folder (default 100000)")
    p.add_argument("--runs", type=int, default=5, help="scan: runs per tool (median reported)")
    p.add_argument("--ops", type=int, default=2000, help="latency: measured operations per tool")
    p.add_argument("--warmup", type=int, default=40, help="latency: operations before measuring")
    p.add_argument("--latency-ops", default=",".join(OPS),
                   help="latency: operations to cycle through (create,modify,rename,delete)")
    p.add_argument("--op-timeout", type=float, default=2.0, help="latency: seconds to wait per event")
    p.add_argument("--max-missed", type=int, default=5,
                   help="latency: stop timing an operation for a tool after this many misses in a row")
    p.add_argument("--storm-files", type=int, default=20_000, help="storm: files, 100 per new folder")
    p.add_argument("--storm-renames", type=int, default=None, help="storm: renames (default files/4)")
    p.add_argument("--storm-deletes", type=int, default=None, help="storm: deletes (default files/4)")
    p.add_argument("--quiet", type=float, default=2.0, help="storm: seconds without output = quiet")
    p.add_argument("--storm-timeout", type=float, default=300.0, help="storm: longest wait for quiet")
    p.add_argument("--restart-changes", type=int, default=100, help="restart: files changed while stopped")
    p.add_argument("--timeout", type=float, default=300.0, help="longest wait for a watcher to be ready")
    p.add_argument("--stop-grace", type=float, default=2.0,
                   help="seconds a watcher gets to exit after SIGTERM before SIGKILL")
    p.add_argument("--tmp", default="/tmp", help="where the temporary trees go")
    p.add_argument("--quick", action="store_true",
                   help="small sizes: --files 20000 --runs 3 --ops 400 --storm-files 4000")
    p.add_argument("--watchfiles-step-ms", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--watchfiles-debounce-ms", type=int, default=10, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        given = set(a.split("=")[0] for a in argv)
        if "--files" not in given:
            args.files = 20_000
        if "--runs" not in given:
            args.runs = 3
        if "--ops" not in given:
            args.ops = 400
        if "--storm-files" not in given:
            args.storm_files = 4_000
    if args.storm_renames is None:
        args.storm_renames = args.storm_files // 4
    if args.storm_deletes is None:
        args.storm_deletes = args.storm_files // 4
    args.latency_ops = [op.strip() for op in args.latency_ops.split(",") if op.strip()]
    bad = [op for op in args.latency_ops if op not in OPS]
    if bad or "create" not in args.latency_ops:
        p.error(f"--latency-ops: give some of {','.join(OPS)}, with create")
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        p.error(f"--binary {args.binary}: not an executable file; build with "
                f"'swift build -c release --scratch-path .build-release'")
    args.binary = os.path.abspath(args.binary)
    args.only = [b.strip() for b in args.only.split(",") if b.strip()]
    return args


def main(argv):
    args = parse_args(argv)
    benchcommon.STOP_GRACE = args.stop_grace

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    tmp = tempfile.mkdtemp(prefix="fileshare-bench-", dir=args.tmp)
    results = {}
    try:
        classes = {"inotifywait": Inotifywait, "watchdog": Watchdog, "watchfiles": Watchfiles}
        watchers = [Fileshare(args, tmp)]
        skipped = []
        for name in [n.strip() for n in args.peers.split(",") if n.strip()]:
            if name not in classes:
                raise SystemExit(f"--peers: unknown peer {name}")
            w = classes[name](args, tmp)
            ok, why = w.available()
            if ok:
                watchers.append(w)
            else:
                skipped.append(f"{name}: {why}")
        started = now()
        phases = []
        for name, fn in (("scan", bench_scan), ("latency", bench_latency), ("storm", bench_storm),
                         ("restart", bench_restart)):
            if name in args.only:
                t = now()
                fn(args, tmp, watchers, results)
                shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
                phases.append(f"{name} {now() - t:.0f} s")
                log(f"{name}: done in {now() - t:.0f} s")
        elapsed = now() - started

        print()
        print("# fileshare benchmarks")
        print(f"machine: {os.cpu_count()} cores, Linux {platform.release()}; {versions(args, watchers)}")
        if skipped:
            print("peers skipped: " + "; ".join(skipped))
        for line in benchcommon.killed_warnings():
            print(line)
        print("Every figure of a table was measured in this run, one tool at a time; ratios are the "
              "figures to compare across machines.")
        print()
        if "scan" in results:
            print(report_scan(results["scan"], args))
            print()
        if "latency" in results:
            print(report_latency(results["latency"], args))
            print()
        if "storm" in results:
            print(report_storm(results["storm"], args))
            print()
        if "restart" in results:
            print(report_restart(results["restart"], args))
            print()
        print(reproduce_line("Benchmarks/run", argv))
        print(f"(took {elapsed:.0f} s: {', '.join(phases)})")
        return 0
    except BenchError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
