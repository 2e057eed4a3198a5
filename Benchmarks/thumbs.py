#!/usr/bin/env python3
"""Thumbnails of `fileshare serve` beside copyparty's, in the same run.

Makes its samples (Pillow): 12-megapixel photos (4000x3000) as JPEG and as
PNG, N of each (200 by default; each file differs from the others by a
comment, so no server can take one for another, while every decode costs the
same). Then, for each server in turn, on the same files, warm in the page
cache: starts it with an empty thumbnail cache, asks for every file's
thumbnail (C requests at once), and reports thumbnails per second, the
median and slowest answer, and the peak memory of the server's process tree
(summed VmRSS, sampled every 50 ms, and the main process's VmHWM). Both make
thumbnails on two cores at most (fileshare's default; copyparty's --th-mt 2)
of about the same size (fileshare: 256 px on the longer side; copyparty:
--th-size 256x256 --th-crop fn, JPEG output, Pillow as its decoder).

A thumbnail counts only when the answer is 200 and an image (JPEG, PNG or
WebP by its first bytes); anything else is reported as failed.

First, the browser measure (thumbs_browser.py): a folder of 1,000 photos
(4 to 12 megapixels) opened cold in headless Chromium, fileshare's gallery
view beside copyparty's grid view: the time until every tile in view shows
its thumbnail, at the top and in the middle of the folder, and how many
thumbnails each page asked for; the median of 3 cold page loads each.

Usage (through Benchmarks/thumbs-run, which builds fileshare and installs
copyparty, Pillow and selenium into a venv):
    Benchmarks/thumbs-run [--count N] [--concurrency C] [--only jpeg,png,browser]
                          [--photos N] [--runs N]
"""

import argparse
import concurrent.futures
import http.client
import io
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import (BenchError, log, proc_status, process_tree, reproduce_line, spawn, stop,  # noqa: E402
                         stop_all, table)

WIDTH, HEIGHT = 4000, 3000


def now():
    return time.monotonic()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", required=True, help="the fileshare executable (release)")
    p.add_argument("--count", type=int, default=200, help="files of each kind (default 200)")
    p.add_argument("--concurrency", type=int, default=4, help="requests at once (default 4)")
    p.add_argument("--only", default="jpeg,png,browser",
                   help="measures: jpeg,png (thumbnails per second), browser (a folder of photos in Chromium)")
    p.add_argument("--photos", type=int, default=1000, help="photos in the browser measure's folder (default 1000)")
    p.add_argument("--runs", type=int, default=3, help="cold page loads per server and screen (default 3)")
    p.add_argument("--peers", default="copyparty", help="peers beside fileshare: copyparty or none")
    p.add_argument("--timeout", type=float, default=120, help="seconds one thumbnail may take")
    return p.parse_args(argv)


# --------------------------------------------------------------------------
# Samples

def base_image(width=WIDTH, height=HEIGHT):
    """A picture (12 megapixels by default) with gradients and grain: neither
    flat (too easy to compress and decode) nor pure noise (unlike a photo)."""
    from PIL import Image
    small = Image.merge("RGB", (
        Image.linear_gradient("L").resize((width // 8, height // 8)),
        Image.radial_gradient("L").resize((width // 8, height // 8)),
        Image.effect_noise((width // 8, height // 8), 60)))
    big = small.resize((width, height), Image.BICUBIC)
    grain = Image.effect_noise((width, height), 12).convert("RGB")
    return Image.blend(big, grain, 0.15)


def make_samples(folder, count, kinds):
    """count JPEGs and PNGs of the same picture, each with its own comment."""
    image = base_image()
    made = {}
    if "jpeg" in kinds:
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=90)
        jpeg = buffer.getvalue()
        names = []
        for i in range(count):
            # A COM segment right after SOI: the same pixels, another file.
            comment = f"sample {i}".encode()
            data = jpeg[:2] + b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment + jpeg[2:]
            name = f"photo-{i:04}.jpg"
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
            names.append(name)
        made["jpeg"] = (names, len(jpeg))
    if "png" in kinds:
        buffer = io.BytesIO()
        image.save(buffer, "PNG", compress_level=6)
        png = buffer.getvalue()
        names = []
        for i in range(count):
            # A tEXt chunk after IHDR (8 + 25 bytes in).
            text = b"Comment\x00" + f"sample {i}".encode()
            chunk = len(text).to_bytes(4, "big") + b"tEXt" + text + (zlib.crc32(b"tEXt" + text) & 0xFFFFFFFF).to_bytes(4, "big")
            data = png[:33] + chunk + png[33:]
            name = f"image-{i:04}.png"
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
            names.append(name)
        made["png"] = (names, len(png))
    return made


def warm(folder):
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                while f.read(1 << 20):
                    pass


# --------------------------------------------------------------------------
# Memory

class Sampler(threading.Thread):
    """The peak of the summed VmRSS of a process tree, sampled every 50 ms."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            total = sum(proc_status(p).get("VmRSS", 0) for p in process_tree(self.pid))
            self.peak = max(self.peak, total)
            self.halt.wait(0.05)

    def finish(self):
        self.halt.set()
        self.join(10)


# --------------------------------------------------------------------------
# Servers

class Fileshare:
    name = "fileshare"

    def __init__(self, args, tmp, share):
        self.args, self.tmp, self.share = args, tmp, share

    def version(self):
        out = subprocess.run([self.args.binary, "--version"], capture_output=True, text=True).stdout.strip()
        return out or "fileshare"

    def start(self):
        shutil.rmtree(os.path.join(self.share, ".fileshare", "thumbnails"), ignore_errors=True)
        self.out = os.path.join(self.tmp, "fileshare.out")
        with open(self.out, "wb") as out, open(os.path.join(self.tmp, "fileshare.err"), "wb") as err:
            self.proc = spawn([self.args.binary, "serve", self.share, "--port", "0", "--no-auth"], out, err)
        deadline = now() + 60
        while now() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"fileshare exited with {self.proc.returncode}")
            with open(self.out, errors="replace") as f:
                first = f.readline()
            m = re.match(r"Serving .* at (\S+)", first.strip()) if first.endswith("\n") else None
            if m:
                self.base = urllib.parse.urlsplit(m.group(1))
                return
            time.sleep(0.05)
        raise BenchError("fileshare printed no URL within 60 s")

    def thumbnail_path(self, name):
        return "/api/thumbnail/" + urllib.parse.quote(name)

    def stop(self):
        stop(self.proc, self.name, grace=5)

    # The browser measure (thumbs_browser.py): the folder in the gallery view,
    # chosen as the page remembers it (localStorage, per folder; '' is the root).
    @property
    def gallery_url(self):
        return f"http://{self.base.netloc}/#/"

    gallery_setup = ["try { localStorage.setItem('fileshare.view:', 'gallery'); } catch (e) {}"]
    gallery_selectors = ("#gallery-grid > li", "img")
    thumbnail_marker = "/api/thumbnail/"


class Copyparty:
    name = "copyparty"

    def __init__(self, args, tmp, share):
        self.args, self.tmp, self.share = args, tmp, share

    def version(self):
        info = subprocess.run([sys.executable, "-m", "copyparty", "--version"], capture_output=True, text=True)
        first = (info.stdout + info.stderr).strip().splitlines()[:1]
        pil = subprocess.run([sys.executable, "-c", "import PIL; print(PIL.__version__)"],
                             capture_output=True, text=True).stdout.strip()
        return (" ".join(first[0].split()[:2]) if first else "copyparty") + f", Pillow {pil}"

    def start(self):
        port = free_port()
        hist = os.path.join(self.tmp, "copyparty-hist")
        shutil.rmtree(hist, ignore_errors=True)
        os.makedirs(hist)
        self.proc = spawn([sys.executable, "-m", "copyparty", "-i", "127.0.0.1", "-p", str(port), "-q",
                           "--http-only", "--no-crt", "--hist", hist, "--th-mt", "2", "--th-size", "256x256",
                           "--th-crop", "fn", "--th-dec", "pil", "--no-vthumb", "--no-athumb",
                           "-v", f"{self.share}::r"], subprocess.DEVNULL, subprocess.DEVNULL)
        self.base = urllib.parse.urlsplit(f"http://127.0.0.1:{port}")
        deadline = now() + 60
        while now() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"copyparty exited with {self.proc.returncode}")
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                connection.request("GET", "/?ls")
                if connection.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise BenchError("copyparty did not answer within 60 s")

    def thumbnail_path(self, name):
        # th=j: a JPEG thumbnail (made on the request, waited for).
        return "/" + urllib.parse.quote(name) + "?th=j"

    def stop(self):
        stop(self.proc, self.name, grace=5)

    # The browser measure: copyparty's grid view, which "?imgs" on a link turns
    # on (its README, "thumbnails"); each tile an <a> holding a lazy <img>
    # whose src asks for "?th=w" (WebP) in Chromium.
    @property
    def gallery_url(self):
        return f"http://{self.base.netloc}/?imgs"

    gallery_setup = []
    gallery_selectors = ("#ggrid > a", "img")
    thumbnail_marker = "th="


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def is_image(body):
    return body[:3] == b"\xff\xd8\xff" or body[:8] == b"\x89PNG\r\n\x1a\n" or (body[:4] == b"RIFF" and body[8:12] == b"WEBP")


def fetch_all(server, names, args):
    """Every name's thumbnail, C at once: (seconds, latencies, failures)."""
    local = threading.local()

    def one(name):
        if not hasattr(local, "connection"):
            local.connection = http.client.HTTPConnection(server.base.hostname, server.base.port, timeout=args.timeout)
        started = now()
        try:
            local.connection.request("GET", server.thumbnail_path(name))
            response = local.connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as error:
            local.connection.close()
            del local.connection
            return now() - started, f"{name}: {error}"
        if response.status != 200 or not is_image(body):
            return now() - started, f"{name}: {response.status} {body[:60]!r}"
        return now() - started, None

    started = now()
    with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
        results = list(pool.map(one, names))
    return now() - started, [r[0] for r in results], [r[1] for r in results if r[1]]


def run(server_class, kind, names, args, tmp, share):
    server = server_class(args, tmp, share)
    server.start()
    sampler = Sampler(server.proc.pid)
    sampler.start()
    try:
        seconds, latencies, failures = fetch_all(server, names, args)
    finally:
        sampler.finish()
        hwm = proc_status(server.proc.pid).get("VmHWM", 0)
        stop(server.proc, server.name, grace=5)
    made = len(names) - len(failures)
    return {
        "server": server.name, "version": server.version(), "kind": kind, "made": made, "failed": failures,
        "seconds": seconds, "rate": made / seconds if seconds else 0,
        "median": statistics.median(latencies), "slowest": max(latencies),
        "peak": sampler.peak, "hwm": hwm,
    }


def browser_measure(servers, args, tmp):
    """The folder of photos in Chromium (thumbs_browser.py), before the other measures fill the page cache."""
    import thumbs_browser
    why = thumbs_browser.missing_dependencies()
    if why:
        raise BenchError(f"the browser measure cannot run: {why}")
    photos = os.path.join(tmp, "photos")
    os.mkdir(photos)
    log(f"thumbs: making {args.photos} photos of 4, 8 and 12 megapixels")
    size = thumbs_browser.make_photos(photos, args.photos, base_image)
    thumbs_browser.drop_page_cache(photos)
    resident = thumbs_browser.cached_bytes(photos)
    summary = thumbs_browser.measure([c(args, tmp, photos) for c in servers], photos, tmp, args.runs)
    shutil.rmtree(photos, ignore_errors=True)
    return {"summary": summary, "size": size, "resident": resident, "load": os.getloadavg()[0]}


def print_browser(browser, args):
    import thumbs_browser
    cold = ("the photos dropped from the page cache before each load"
            + (f" ({mib(browser['resident'])} of {mib(browser['size'])} left cached after a drop)"
               if browser["resident"] is not None else ""))
    print(f"Browser: a folder of {args.photos} JPEGs (4, 8 and 12 megapixels, {mib(browser['size'])}), "
          f"headless Chromium at 1280x900, median of {args.runs} cold page loads per server and screen "
          f"(fresh server, no thumbnail made, new browser profile; {cold}); "
          f"{os.cpu_count()} cores, load {browser['load']:.1f} at the end")
    rows = []
    for r in browser["summary"]:
        rows.append([r["kind"], r["server"], f"{r['median']:.0f} ms", ", ".join(f"{v:.0f}" for v in r["all"]),
                     str(r["visible"]), f"{r['tiles']}", f"{r['requests']:.0f} ({', '.join(map(str, r['requests_all']))})"])
    print(table(["screen", "server", "all shown", "runs (ms)", "tiles in view", "tiles in page", "thumbnail requests"],
                rows))
    print(f"  top: from navigation start; middle: from the scroll to the middle, made as soon as the grid "
          f"was laid out; each until every tile in view showed its thumbnail for {thumbs_browser.SETTLE:g} s")
    for kind in ("top", "middle"):
        ours = next((r for r in browser["summary"] if r["kind"] == kind and r["server"] == "fileshare"), None)
        for peer in (r for r in browser["summary"] if r["kind"] == kind and r["server"] != "fileshare"):
            if ours and ours["median"]:
                print(f"{kind}: fileshare shows the screen's thumbnails in {ours['median'] / peer['median']:.2f}x "
                      f"the time of {peer['server']} ({ours['median']:.0f} ms against {peer['median']:.0f} ms)")


def mib(value):
    return f"{value / (1 << 20):.0f} MiB"


def main(argv):
    args = parse_args(argv)
    measures = [k for k in args.only.split(",") if k]
    kinds = [k for k in measures if k in ("jpeg", "png")]
    unknown = [k for k in measures if k not in ("jpeg", "png", "browser")]
    if unknown:
        log(f"thumbs: unknown measure {', '.join(unknown)} (jpeg, png, browser)")
        return 2
    servers = [Fileshare] + ([Copyparty] if "copyparty" in args.peers else [])
    tmp = tempfile.mkdtemp(prefix="fileshare-thumbs-bench-")
    share = os.path.join(tmp, "share")
    os.mkdir(share)
    try:
        results = []
        browser = None
        if "browser" in measures:
            browser = browser_measure(servers, args, tmp)
        if kinds:
            log(f"thumbs: making {args.count} {' and '.join(k.upper() for k in kinds)} samples of {WIDTH}x{HEIGHT}")
        samples = make_samples(share, args.count, kinds)
        warm(share)
        for kind in kinds:
            names, size = samples[kind]
            for server_class in servers:
                log(f"thumbs: {server_class.name}, {len(names)} {kind} ({mib(size)} each)")
                results.append(run(server_class, kind, names, args, tmp, share))
        load = os.getloadavg()[0]
        if browser:
            print_browser(browser, args)
        if not kinds:
            print(reproduce_line("Benchmarks/thumbs-run", argv))
            return 0
        print(f"Thumbnails: {args.count} {'/'.join(kinds)} files of {WIDTH}x{HEIGHT} each, "
              f"{args.concurrency} requests at once, cold caches, files in the page cache "
              f"({os.cpu_count()} cores, load {load:.1f} at the end)")
        for r in results:
            if r["server"] == "fileshare":
                print(f"  {r['server']}: {r['version']}")
                break
        for r in results:
            if r["server"] != "fileshare":
                print(f"  {r['server']}: {r['version']}")
                break
        rows = [[r["kind"], r["server"], f"{r['rate']:.1f}", f"{r['median'] * 1000:.0f} ms",
                 f"{r['slowest'] * 1000:.0f} ms", mib(r["peak"]), mib(r["hwm"]), f"{r['made']}/{args.count}"]
                for r in results]
        print(table(["kind", "server", "thumbs/s", "median", "slowest", "peak RSS (tree)", "VmHWM (main)", "made"],
                    rows))
        for kind in kinds:
            ours = next((r for r in results if r["kind"] == kind and r["server"] == "fileshare"), None)
            for peer in (r for r in results if r["kind"] == kind and r["server"] != "fileshare"):
                if ours and peer["rate"] and ours["peak"]:
                    print(f"{kind}: fileshare makes {ours['rate'] / peer['rate']:.2f}x the thumbnails per second of "
                          f"{peer['server']}, with {peer['peak'] / ours['peak']:.2f}x less peak memory "
                          f"({mib(ours['peak'])} against {mib(peer['peak'])})")
        for r in results:
            for failure in r["failed"][:3]:
                print(f"warning: {r['server']} {r['kind']}: {failure}")
        print(reproduce_line("Benchmarks/thumbs-run", argv))
        return 0
    except BenchError as error:
        log(f"thumbs: {error}")
        return 1
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
