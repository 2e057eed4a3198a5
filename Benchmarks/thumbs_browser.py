"""The browser measure of Benchmarks/thumbs.py: the time until a folder of
1,000 photos shows all the thumbnails in the viewport, in headless Chromium
(selenium, started as Tests/Browser/browser_test.py starts it), fileshare's
gallery view beside copyparty's grid view.

Each page load starts cold: the server is started afresh with no thumbnail
made (fileshare's .fileshare/thumbnails removed; copyparty given an empty
--hist), the photos' pages are dropped from the page cache (posix_fadvise
DONTNEED on each file, which needs no root), and Chromium gets a new profile
(no HTTP cache). A script put in the page before its own scripts watches
every animation frame which tiles are in the viewport and whether each
tile's <img> is `complete && naturalWidth > 0`; the time reported is
`performance.now()` (from navigation start) at the first frame from which
every visible tile's thumbnail stayed shown, confirmed by SETTLE seconds
without change. The thumbnail requests are counted by Resource Timing.

Two measures, each on its own cold page load:
  top    — open the folder: navigation start until the first screen is shown;
  middle — open the folder, scroll to its middle as soon as the grid is laid
           out: from the scroll until that screen is shown.
"""

import io
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Tests", "Browser"))
import browser_test  # noqa: E402  (start_driver: the browser tests' Chromium options)

from benchcommon import BenchError, log  # noqa: E402

SETTLE = 2.0        # seconds every visible thumbnail must stay shown
TIMEOUT = 300.0     # seconds one screen may take (a cold decode of 40 photos on a loaded machine)

# Photo sizes the folder cycles through: 4, 8 and 12 megapixels.
SIZES = [(2400, 1800), (3264, 2448), (4000, 3000)]

# Runs in every new document before the page's own scripts.
WATCHER = r"""
(() => {
  performance.setResourceTimingBufferSize(100000);
  const TILES = %(tiles)s, IMAGE = %(image)s;
  const watch = window.__thumbs = { since: 0, shownFrom: null, visible: 0, shown: 0, broken: 0, tiles: 0 };
  function inView(r) {
    return r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
  }
  function frame(now) {
    const tiles = document.querySelectorAll(TILES);
    let visible = 0, shown = 0, broken = 0;
    for (const tile of tiles) {
      if (!inView(tile.getBoundingClientRect())) continue;
      visible++;
      const img = tile.querySelector(IMAGE);
      if (img && img.complete && img.naturalWidth > 0) shown++;
      else if (!img || img.complete) broken++;
    }
    Object.assign(watch, { visible, shown, broken, tiles: tiles.length });
    const all = visible > 0 && shown === visible;
    if (!all) watch.shownFrom = null;
    else if (watch.shownFrom === null) watch.shownFrom = performance.now();
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);
  // The middle measure: scroll to the middle, the clock starting at the scroll.
  watch.scrollToMiddle = () => {
    const root = document.scrollingElement || document.documentElement;
    window.scrollTo(0, Math.max(0, (root.scrollHeight - innerHeight) / 2));
    watch.shownFrom = null;
    watch.since = performance.now();
    return root.scrollTop;
  };
})();
"""

COUNT_REQUESTS = ("return performance.getEntriesByType('resource')"
                  ".filter((e) => e.name.includes(arguments[0])).length")


def missing_dependencies():
    """Why the measure cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError as error:
        return f"selenium is not installed for {sys.executable} ({error})"
    for path, package in ((browser_test.CHROMIUM, "chromium"), (browser_test.CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing; apt-get install {package}"
    return None


def make_photos(folder, count, picture):
    """count JPEGs, 4 to 12 megapixels, without an embedded EXIF thumbnail
    (each server decodes every photo), each different by a comment;
    picture(width, height) gives a Pillow image."""
    encoded = []
    for width, height in SIZES:
        buffer = io.BytesIO()
        picture(width, height).save(buffer, "JPEG", quality=90)
        encoded.append(buffer.getvalue())
    total = 0
    for i in range(count):
        jpeg = encoded[i % len(encoded)]
        comment = f"photo {i}".encode()
        data = jpeg[:2] + b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment + jpeg[2:]
        with open(os.path.join(folder, f"DSC_{i:05}.jpg"), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())  # clean pages, so that they can be dropped
        total += len(data)
    return total


def drop_page_cache(folder):
    """Drops the folder's files from the page cache (cold reads for every server)."""
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def cached_bytes(folder):
    """How much of the folder's files is in the page cache (util-linux fincore), or None."""
    import shutil
    import subprocess
    if not shutil.which("fincore"):
        return None
    names = [os.path.join(folder, n) for n in sorted(os.listdir(folder))]
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--raw", "--output", "RES"] + names,
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return sum(int(line) for line in out.stdout.split() if line.isdigit())


class Page:
    """One server's folder page in a fresh Chromium."""

    def __init__(self, server, work, kind):
        self.server, self.kind = server, kind
        profile = os.path.join(work, f"chromium-{server.name}-{kind}-{time.monotonic_ns()}")
        os.makedirs(profile)
        self.driver = browser_test.start_driver(profile)
        self.driver.set_script_timeout(30)
        tiles, image = server.gallery_selectors
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                    {"source": WATCHER % {"tiles": repr(tiles), "image": repr(image)}})
        for script in server.gallery_setup:
            self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})

    def watch(self):
        return self.driver.execute_script("const w = window.__thumbs; return w ? {since: w.since, "
                                          "shownFrom: w.shownFrom, visible: w.visible, shown: w.shown, "
                                          "broken: w.broken, tiles: w.tiles, now: performance.now()} : null")

    def wait_shown(self, what):
        """Waits until every visible tile's thumbnail has stayed shown SETTLE s; the watch then."""
        end = time.monotonic() + TIMEOUT
        last = None
        while time.monotonic() < end:
            w = self.watch()
            last = w
            if w and w["shownFrom"] is not None and w["now"] - w["shownFrom"] >= SETTLE * 1000:
                return w
            time.sleep(0.1)
        raise BenchError(f"{self.server.name}: the {what} screen's thumbnails were not all shown within "
                         f"{TIMEOUT:.0f} s ({last})")

    def requests(self):
        return self.driver.execute_script(COUNT_REQUESTS, self.server.thumbnail_marker)

    def quit(self):
        try:
            self.driver.quit()
        except Exception as error:  # noqa: BLE001 - the figures are taken; say it and go on
            log(f"thumbs: quitting Chromium: {error}")


def measure_once(server, kind, folder, work):
    """One cold page load of one server: {ms, requests, visible, tiles}."""
    server.start()
    page = None
    try:
        page = Page(server, work, kind)
        drop_page_cache(folder)
        page.driver.get(server.gallery_url)
        if kind == "top":
            w = page.wait_shown("first")
            ms = w["shownFrom"]
        else:
            # As soon as the grid is laid out (at least two screens tall), to its middle.
            end = time.monotonic() + 60
            while time.monotonic() < end:
                tall = page.driver.execute_script(
                    "const r = document.scrollingElement || document.documentElement;"
                    "return window.__thumbs && window.__thumbs.tiles > 0 && r.scrollHeight >= 2 * innerHeight")
                if tall:
                    break
                time.sleep(0.05)
            else:
                raise BenchError(f"{server.name}: the grid was not two screens tall within 60 s (too few photos?)")
            page.driver.execute_script("return window.__thumbs.scrollToMiddle()")
            w = page.wait_shown("middle")
            ms = w["shownFrom"] - w["since"]
        return {"ms": ms, "requests": page.requests(), "visible": w["visible"], "tiles": w["tiles"],
                "at": w["shownFrom"]}
    finally:
        if page is not None:
            page.quit()
        server.stop()


def measure(servers, folder, work, runs):
    """Median of `runs` cold page loads per server and measure, the servers taking turns."""
    results = {}
    for run in range(runs):
        for kind in ("top", "middle"):
            for server in servers:
                log(f"thumbs: browser, {server.name}, {kind} screen, run {run + 1} of {runs}")
                results.setdefault((server.name, kind), []).append(measure_once(server, kind, folder, work))
    summary = []
    for (name, kind), rows in results.items():
        summary.append({
            "server": name, "kind": kind,
            "median": statistics.median(r["ms"] for r in rows), "all": [r["ms"] for r in rows],
            "requests": statistics.median(r["requests"] for r in rows),
            "requests_all": [r["requests"] for r in rows],
            "visible": rows[0]["visible"], "tiles": max(r["tiles"] for r in rows),
        })
    return summary
