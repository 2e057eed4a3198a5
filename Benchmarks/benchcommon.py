"""What the benchmark scripts (bench.py, serve.py, dav.py) share: the process
registry (every process started is stopped on every way out), /proc readings,
tables, and the reproduce line."""

import collections
import os
import shlex
import signal
import subprocess
import sys


class BenchError(Exception):
    pass


def log(message):
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Processes: every one is registered and stopped on every way out.

PROCS = []
KILLED = collections.Counter()   # name -> processes that ignored SIGTERM and were killed
STOP_GRACE = 2.0                 # seconds after SIGTERM before SIGKILL; a script may set its own


def spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, **kw):
    """Starts a process in its own session (so its whole group can be stopped) and registers it."""
    proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True, **kw)
    PROCS.append(proc)
    return proc


def stop(proc, name="?", grace=None, before_close=()):
    """SIGTERM the process group we started, SIGKILL it if it does not go (and
    whatever of the group outlived its leader); then close its pipes."""
    try:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(STOP_GRACE if grace is None else grace)
            except subprocess.TimeoutExpired:
                KILLED[name] += 1
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(30)
        else:
            # The leader is gone; make sure nothing of its group is left.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    finally:
        for collector in before_close:  # threads still reading its pipes: let them see the end
            collector.finish()
        for f in (proc.stdout, proc.stderr):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        if proc in PROCS:
            PROCS.remove(proc)


def stop_all():
    for proc in list(PROCS):
        try:
            stop(proc, grace=2)
        except Exception as error:  # keep going: stop the others
            print(f"warning: could not stop pid {proc.pid}: {error}", file=sys.stderr)


def killed_warnings():
    """One line for each program that had to be killed with SIGKILL."""
    return [f"warning: {name} did not exit within {STOP_GRACE:g} s of SIGTERM {count} time(s); "
            f"it was killed with SIGKILL" for name, count in KILLED.items()]


def proc_status(pid):
    """VmHWM and VmRSS of a process, in bytes."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    values[key] = int(rest.split()[0]) * 1024
    except OSError:
        pass
    return values


# --------------------------------------------------------------------------
# Output

def process_tree(pid):
    """pid and all its descendants (through /proc/PID/task/TID/children)."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return seen


def table(headers, rows):
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(str(cell)))
    lines = ["  ".join(str(h).ljust(widths[i]) for i, h in enumerate(headers))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(str(c).ljust(widths[i]) for i, c in enumerate(row)))
    return "\n".join(lines)


def reproduce_line(wrapper, argv):
    """The command that runs the same benchmark again: the wrapper script with
    the given options, less the executables the wrapper builds and passes itself
    (--binary, and serve-run's --nio-floor)."""
    built = ("--binary", "--nio-floor")
    cleaned, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in built:
            skip = True
            continue
        if a.startswith(tuple(f"{name}=" for name in built)):
            continue
        cleaned.append(a)
    return f"Reproduce: {wrapper} {shlex.join(cleaned)}".rstrip()
