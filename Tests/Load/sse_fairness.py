#!/usr/bin/env python3
"""Many clients on /api/events while thousands of files arrive at once.

    python3 Tests/Load/sse_fairness.py --url http://127.0.0.1:PORT --folder DIR \
        [--user U --password P] [--clients 200] [--files 10000] [--timeout 180]

Connects --clients event streams, waits until each has its first line, makes
--files files in DIR/load/ (each written and closed), and reads every stream
until it holds every record the log got for them (found through
/api/changes). Prints one JSON object: per client the time until it was
complete and the longest time it waited for bytes while the log held records
it did not have yet ("starved"), and whether the checked clients saw every
id in order, once.

Counting is cheap (frames counted in C by bytes.count), so 200 readers in
one Python process keep up; --verify clients also parse every id. Uses only
the standard library.
"""

import argparse
import asyncio
import base64
import json
import os
import re
import sys
import time
import urllib.request


class Client:
    def __init__(self, index, verify):
        self.index = index
        self.verify = verify
        self.frames = 0
        self.last_arrival = None
        self.max_gap = 0.0
        self.max_gap_at = None
        self.behind_since = None
        self.done_at = None
        self.carry = b""
        self.pending = b""
        self.ids = []
        self.ready = asyncio.Event()
        self.error = None


async def stream(client, host, port, auth, state):
    try:
        reader, writer = await asyncio.open_connection(host, port, limit=1 << 22)
        headers = f"GET /api/events HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
        if auth:
            headers += f"Authorization: Basic {auth}\r\n"
        writer.write((headers + "\r\n").encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(head.decode(errors="replace"))
        chunked = b"transfer-encoding: chunked" in head.lower()
        while True:
            chunk = await reader.read(1 << 20)
            if not chunk:
                raise RuntimeError("the server closed the stream")
            now = time.monotonic()
            if not client.ready.is_set() and b"retry:" in chunk:
                client.ready.set()
            window = client.carry + chunk
            found = window.count(b"\nid: ")
            if found:
                client.frames += found
                client.last_arrival = now
                state["max_frames"] = max(state["max_frames"], client.frames)
            client.carry = window[-4:]
            if client.verify:
                # Chunked transfer encoding puts size lines between parts: drop them first.
                data = client.pending + chunk
                if chunked:
                    data = re.sub(rb"\r\n[0-9a-fA-F]+\r\n", b"", data)
                parts = data.split(b"\n\n")
                client.pending = parts.pop()
                for part in parts:
                    m = re.match(rb"(?:[0-9a-fA-F]+\r\n)?id: (\d+)\n", part)
                    if m:
                        client.ids.append(int(m.group(1)))
    except asyncio.CancelledError:
        raise
    except Exception as error:  # noqa: BLE001 - reported in the summary
        client.error = repr(error)
        client.ready.set()


def get_json(url, auth):
    request = urllib.request.Request(url)
    if auth:
        request.add_header("Authorization", "Basic " + auth)
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


def latest(base, auth):
    """The log's newest number: a cursor far ahead is answered 410 with it."""
    try:
        get_json(f"{base}/api/changes?since={2**62}&limit=1", auth)
    except urllib.error.HTTPError as error:
        return json.loads(error.read())["latest"]
    raise RuntimeError("a cursor far ahead was not refused")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--verify", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=240)
    args = parser.parse_args()
    base = args.url.rstrip("/")
    host, port = base.split("//", 1)[1].rsplit(":", 1)
    port = int(port)
    auth = base64.b64encode(f"{args.user}:{args.password}".encode()).decode() if args.user else None

    start = latest(base, auth)
    state = {"max_frames": 0}
    clients = [Client(i, i < args.verify) for i in range(args.clients)]
    tasks = [asyncio.create_task(stream(c, host, port, auth, state)) for c in clients]
    await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in clients)), 60)
    errors = [c.error for c in clients if c.error]
    if errors:
        print(json.dumps({"error": "clients could not connect", "details": errors[:5]}))
        return

    folder = os.path.join(args.folder, "load")
    os.makedirs(folder, exist_ok=True)
    began = time.monotonic()
    # Another process makes the files, so these readers never pause for it.
    maker = await asyncio.create_subprocess_exec(
        sys.executable, "-c",
        "import os, sys\n"
        "folder, count = sys.argv[1], int(sys.argv[2])\n"
        "for i in range(count):\n"
        "    with open(os.path.join(folder, f'file-{i:05d}.txt'), 'wb') as f: f.write(b'x' * 100)\n",
        folder, str(args.files))

    async def monitor():
        # Starvation: a client that has fewer records than another has
        # (so the log holds records for it) and has received nothing for a while.
        while True:
            now = time.monotonic()
            for c in clients:
                if c.frames < state["max_frames"]:
                    c.behind_since = c.behind_since or now
                    waited = now - max(c.last_arrival or began, c.behind_since)
                    if waited > c.max_gap:
                        c.max_gap, c.max_gap_at = waited, now - began
                else:
                    c.behind_since = None
            await asyncio.sleep(0.05)

    watcher = asyncio.create_task(monitor())
    await maker.wait()
    made = time.monotonic()

    # The log is complete for these files once each has been reported
    # complete (finished, or added not writing) and the log stays quiet.
    complete = set()
    cursor = start
    quiet_since = None
    deadline = began + args.timeout
    while time.monotonic() < deadline:
        # In a thread: the readers go on reading meanwhile.
        page = await asyncio.to_thread(get_json, f"{base}/api/changes?since={cursor}&limit=2000", auth)
        for record in page["changes"]:
            path = record.get("path", "")
            if record["type"] == "finished" or (record["type"] in ("added", "modified") and not record.get("writing", False)):
                complete.add(path)
        if page["next"] == cursor and len(complete) >= args.files:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 2:
                break
        else:
            quiet_since = None
        cursor = page["next"]
        await asyncio.sleep(0.2)
    total = cursor - start

    # Every client reads to the end; the monitor goes on measuring meanwhile.
    while time.monotonic() < deadline:
        if all(c.frames >= total or c.error for c in clients):
            break
        await asyncio.sleep(0.05)
    watcher.cancel()
    for task in tasks:
        task.cancel()
    await asyncio.gather(watcher, *tasks, return_exceptions=True)
    for c in clients:
        if c.frames >= total:
            c.done_at = c.last_arrival

    done = sorted((c.done_at - began) for c in clients if c.done_at is not None)
    verified = [c for c in clients if c.verify]
    in_order = all(c.ids == list(range(start + 1, start + 1 + len(c.ids))) and len(c.ids) == total for c in verified)
    print(json.dumps({
        "clients": args.clients,
        "files": args.files,
        "records": total,
        "files_complete_in_log": len(complete),
        "made_seconds": round(made - began, 3),
        "complete_clients": len(done),
        "frames_min": min(c.frames for c in clients),
        "done_median_seconds": round(done[len(done) // 2], 3) if done else None,
        "done_worst_seconds": round(done[-1], 3) if done else None,
        "max_starved_seconds": round(max(c.max_gap for c in clients), 3),
        "median_starved_seconds": round(sorted(c.max_gap for c in clients)[len(clients) // 2], 3),
        "worst_starved_at_seconds": round(max(clients, key=lambda c: c.max_gap).max_gap_at or 0, 3),
        "verified_in_order": in_order,
        "verified_ids": [len(c.ids) for c in verified],
        "errors": [c.error for c in clients if c.error][:5],
    }))


if __name__ == "__main__":
    asyncio.run(main())
