#!/usr/bin/env python3
"""Peer watchers for Benchmarks/bench.py: watch ROOT recursively, print events as JSON lines.

    peer_watch.py watchdog ROOT
    peer_watch.py watchfiles ROOT [--step-ms N] [--debounce-ms N]

The first stdout line is {"e": "ready", ...}, printed once the watches are in place:
- watchdog: after Observer.schedule() and Observer.start() return. start() runs the
  inotify emitter's on_thread_start(), which adds every directory watch before it
  returns, so the tree is watched from then on.
- watchfiles: after the RustNotify() constructor returns. It calls notify's
  watcher.watch(root, Recursive), which waits until notify's event loop has walked
  the tree and added every inotify watch.
"setup_s" is the time spent in that set-up alone, "import_s" the time to import the
library (both measured inside this process, so without the interpreter's start-up).

Then one line per event (watchdog: {"e": type, "p": src, "d": dest, "dir": bool})
or one line per batch (watchfiles: {"b": [[change, path], ...]}, change 1 added,
2 modified, 3 deleted; a batch is an unordered set), flushed after every line.
"""

import json
import os
import sys
import time


def run_watchdog(root):
    t_start = time.perf_counter()
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer
    import watchdog.version

    out = sys.stdout

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event):
            dest = getattr(event, "dest_path", "") or ""
            out.write(json.dumps({
                "e": event.event_type,
                "p": os.fsdecode(event.src_path),
                "d": os.fsdecode(dest),
                "dir": bool(event.is_directory),
            }) + "\n")
            out.flush()

    t_imported = time.perf_counter()
    observer = Observer()
    observer.schedule(Handler(), root, recursive=True)
    observer.start()
    t_ready = time.perf_counter()
    out.write(json.dumps({
        "e": "ready",
        "setup_s": t_ready - t_imported,
        "import_s": t_imported - t_start,
        "observer": type(observer).__name__,
        "version": watchdog.version.VERSION_STRING,
    }) + "\n")
    out.flush()
    try:
        while True:
            time.sleep(3600)
    finally:
        observer.stop()


def run_watchfiles(root, step_ms, debounce_ms):
    t_start = time.perf_counter()
    from watchfiles._rust_notify import RustNotify
    import watchfiles

    out = sys.stdout
    t_imported = time.perf_counter()
    # watch_paths, debug, force_polling, poll_delay_ms, recursive, ignore_permission_denied
    notify = RustNotify([root], False, False, 50, True, False)
    t_ready = time.perf_counter()
    out.write(json.dumps({
        "e": "ready",
        "setup_s": t_ready - t_imported,
        "import_s": t_imported - t_start,
        "version": watchfiles.__version__,
        "step_ms": step_ms,
        "debounce_ms": debounce_ms,
    }) + "\n")
    out.flush()
    while True:
        result = notify.watch(debounce_ms, step_ms, 0, None)
        if isinstance(result, str):
            if result == "signal":
                return
            continue
        out.write(json.dumps({"b": sorted(result)}) + "\n")
        out.flush()


def main(argv):
    if len(argv) < 3 or argv[1] not in ("watchdog", "watchfiles"):
        sys.stderr.write(__doc__)
        return 2
    mode, root = argv[1], os.path.abspath(argv[2])
    if mode == "watchdog":
        run_watchdog(root)
    else:
        step_ms, debounce_ms = 1, 10
        rest = argv[3:]
        while rest:
            flag, value = rest[0], int(rest[1])
            rest = rest[2:]
            if flag == "--step-ms":
                step_ms = value
            elif flag == "--debounce-ms":
                debounce_ms = value
            else:
                raise SystemExit(f"unknown option {flag}")
        run_watchfiles(root, step_ms, debounce_ms)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (KeyboardInterrupt, BrokenPipeError):
        sys.exit(0)
