#!/usr/bin/env python3
"""The page's gallery and viewer (gallery.js, viewer.js), driven in headless Chromium.

Starts `fileshare serve` on a temporary folder holding a folder of 3,000
pictures and a folder of things to read, and checks through the page:

  - the gallery toggle is remembered per folder (across a reload; another
    folder keeps the list);
  - in the gallery of 3,000 pictures only the thumbnails of the tiles on
    screen are asked for (the requests counted by Resource Timing), the page
    holds a screen's worth of tiles, and scrolling to the end shows the last;
  - the arrows move between tiles and Enter opens the viewer;
  - the viewer steps to the next and previous file with → and ←, and Escape
    closes it;
  - the comic reader shows page 1 then page 2 (natural order: "page2"
    before "page10"), read from the CBZ by range, stored and deflated pages;
  - a Markdown file with <script>, an <img onerror> and javascript: links
    renders inert: headings, lists, code and a safe link as DOM, the rest as
    text, nothing run;
  - axe-core finds no violation in the gallery, the comic reader and the
    Markdown view.

Shares browser_test.py's server, driver and check helpers. Exit 0 when every
check passed, 1 otherwise, 77 when selenium or Chromium is missing.

Usage: python3 Tests/Browser/gallery_test.py --binary .build/debug/fileshare [--keep]
"""

import argparse
import io
import os
import signal
import struct
import sys
import tempfile
import zipfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_test as common  # noqa: E402

PICTURES = 3000


def png(width, height, rgb):
    """A PNG of one colour, written with zlib alone."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    row = b"\x00" + bytes(rgb) * width
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


def comic():
    """A CBZ whose pages sort differently by natural order (page1, page2, page10) and by bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        # Written out of order; page 2 deflated, the others stored.
        archive.writestr(zipfile.ZipInfo("Comic/page10.png"), png(30, 40, (0, 0, 255)), compress_type=zipfile.ZIP_STORED)
        archive.writestr(zipfile.ZipInfo("Comic/page2.png"), png(20, 40, (0, 255, 0)), compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr(zipfile.ZipInfo("Comic/page1.png"), png(10, 40, (255, 0, 0)), compress_type=zipfile.ZIP_STORED)
        archive.writestr("Comic/notes.txt", "not a page")
        archive.writestr("__MACOSX/Comic/._page1.png", "resource fork")
    return buffer.getvalue()


MARKDOWN = """# Reading list

Some *emphasis*, **strong** words and `inline <code>`.

<script>window.__pwned = 'script';</script>
<img src="x" onerror="window.__pwned = 'img'">

- [a safe link](https://example.com/docs)
- [a bad link](javascript:window.__pwned='link')
- [a tabbed bad link](java\tscript:window.__pwned='tab')
- [Another file](a%20first.txt)

```
<b>code stays text</b>
```
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the fileshare executable")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (kept anyway on failure)")
    args = parser.parse_args()

    why = common.missing_dependencies()
    if why:
        common.say(f"gallery: skipped: {why}")
        return common.SKIP
    binary = os.path.abspath(args.binary)

    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    def terminated(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, terminated)

    work = tempfile.mkdtemp(prefix="fileshare-gallery-")
    shared = os.path.join(work, "Shared Files")
    pictures = os.path.join(shared, "Pictures")
    reading = os.path.join(shared, "Reading")
    os.makedirs(pictures)
    os.makedirs(reading)
    picture = png(8, 8, (200, 120, 40))
    for number in range(PICTURES):
        with open(os.path.join(pictures, f"IMG_{number:05}.png"), "wb") as f:
            f.write(picture)
    files = {"a first.txt": b"the first file\n", "comic.cbz": comic(), "notes.md": MARKDOWN.encode(),
             "z last.txt": b"the last file\n"}
    for name, data in files.items():
        with open(os.path.join(reading, name), "wb") as f:
            f.write(data)

    checks = common.Checks()
    server = None
    driver = None

    def wait(timeout=common.WAIT):
        return WebDriverWait(driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(StaleElementReferenceException,))

    def script(text, *arguments):
        return driver.execute_script(text, *arguments)

    def press(*keys):
        ActionChains(driver).send_keys(*keys).perform()

    def open_folder(path):
        driver.get(server.url + "#/" + path)
        wait().until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
        wait().until(lambda d: d.find_elements(By.CSS_SELECTOR, "#file-list > li"))

    def gallery_on():
        return script("return document.body.classList.contains('gallery-mode')")

    def thumbnail_requests():
        return script("return performance.getEntriesByType('resource')"
                      ".filter((e) => e.name.includes('/api/thumbnail/')).length")

    def title():
        return driver.find_element(By.ID, "preview-title").text

    def axe_clean(where):
        return "axe: " + common.axe_check(driver, where)

    try:
        server = common.Server(binary, shared, work)
        if not checks.run("server starts", lambda: server.wait_for_url() and server.url):
            return common.finish(checks, work, args.keep, server)

        def toggle_remembered():
            nonlocal driver
            driver = common.start_driver(work)
            common.sign_in(driver, server.url)
            # Every request counted, past Resource Timing's default 250.
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                   {"source": "performance.setResourceTimingBufferSize(100000);"})
            open_folder("Pictures")
            if gallery_on():
                raise AssertionError("a folder opens as a list at first")
            driver.find_element(By.ID, "view-toggle").click()
            wait().until(lambda d: gallery_on() and d.find_elements(By.CSS_SELECTOR, "#gallery-grid > li"))
            if driver.find_element(By.ID, "view-toggle").get_attribute("aria-pressed") != "true":
                raise AssertionError("the toggle does not say it is pressed")
            open_folder("Reading")
            if gallery_on():
                raise AssertionError("another folder opens as a gallery too")
            open_folder("Pictures")
            wait().until(lambda d: gallery_on())
            driver.refresh()
            wait().until(lambda d: gallery_on() and d.find_elements(By.CSS_SELECTOR, "#gallery-grid > li"))
            return "Pictures stays a gallery across a reload, Reading a list"
        checks.run("the gallery toggle is remembered per folder", toggle_remembered,
                   requires=["server starts"])

        def only_visible():
            # The page as just reloaded in the gallery: only the tiles on screen asked for.
            wait().until(lambda d: thumbnail_requests() > 0)
            tiles = len(driver.find_elements(By.CSS_SELECTOR, "#gallery-grid > li"))
            # Settled: the count stays the same between two looks while nothing scrolls.
            previous = [-1]

            def settled():
                now = thumbnail_requests()
                same = now == previous[0]
                previous[0] = now
                return same
            common.wait_until(settled, 20, "the thumbnail requests do not settle", interval=0.5)
            asked = thumbnail_requests()
            # At most twice the tiles: the first layout, before the page had a
            # scroll bar, may have had a column more.
            if tiles > 200 or asked > 2 * tiles:
                raise AssertionError(f"{tiles} tiles in the page and {asked} thumbnails asked for, of {PICTURES}")
            script("window.scrollTo(0, document.documentElement.scrollHeight)")
            last = f"IMG_{PICTURES - 1:05}.png"
            wait().until(lambda d: d.find_elements(By.CSS_SELECTOR, f"#gallery-grid a.tile[title={common.css_string(last)}]"))
            after = len(driver.find_elements(By.CSS_SELECTOR, "#gallery-grid > li"))
            scrolled = thumbnail_requests()
            if after > 200 or scrolled > 4 * tiles:
                raise AssertionError(f"after scrolling to the end: {after} tiles, {scrolled} thumbnails asked for")
            script("window.scrollTo(0, 0)")
            return f"{tiles} tiles, {asked} thumbnails asked for of {PICTURES}; {scrolled} after scrolling to the end"
        checks.run("only the visible tiles' thumbnails are asked for in a folder of 3,000", only_visible,
                   requires=["the gallery toggle is remembered per folder"])

        def gallery_keys():
            wait().until(lambda d: d.find_elements(By.CSS_SELECTOR, '#gallery-grid > li[data-index="0"] a.tile'))
            driver.find_element(By.CSS_SELECTOR, '#gallery-grid > li[data-index="0"] a.tile').send_keys(Keys.ARROW_RIGHT)
            wait().until(lambda d: script("return document.activeElement.closest('li').dataset.index") == "1")
            press(Keys.ARROW_DOWN)
            columns = script("return document.activeElement.closest('li').dataset.index")
            if int(columns) <= 1:
                raise AssertionError(f"↓ went to tile {columns}")
            press(Keys.ENTER)
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
            opened = title()
            press(Keys.ARROW_RIGHT)
            wait().until(lambda d: title() != opened)
            press(Keys.ESCAPE)
            wait().until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
            wait().until(lambda d: script("const li = document.activeElement.closest('#gallery-grid > li');"
                                          "return li ? li.querySelector('a').title : null") is not None)
            # axe-core on a gallery of a few items (on 3,000 hidden rows it runs past the script timeout).
            open_folder("Reading")
            driver.find_element(By.ID, "view-toggle").click()
            wait().until(lambda d: gallery_on() and d.find_elements(By.CSS_SELECTOR, "#gallery-grid > li"))
            detail = axe_clean("in the gallery")
            driver.find_element(By.ID, "view-toggle").click()
            wait().until(lambda d: not gallery_on())
            return f"→ ↓ Enter from the grid, {opened} then the next; {detail}"
        checks.run("the gallery by keyboard: arrows between tiles, Enter opens, Escape comes back", gallery_keys,
                   requires=["only the visible tiles' thumbnails are asked for in a folder of 3,000"])

        def viewer_and_comic():
            open_folder("Reading")
            driver.find_element(By.CSS_SELECTOR, common.row_selector("a first.txt") + " a.open").click()
            wait().until(lambda d: title() == "a first.txt")
            press(Keys.ARROW_RIGHT)
            wait().until(lambda d: title() == "comic.cbz")

            def page():
                return script("const img = document.querySelector('.comic-page img');"
                              "return img && img.complete && img.naturalWidth ? [img.dataset.page, img.alt, img.naturalWidth] : null")
            wait().until(lambda d: page() and page()[0] == "Comic/page1.png")
            first = page()
            if first[2] != 10 or first[1] != "Page 1 of 3":
                raise AssertionError(f"page 1 shows {first}")
            detail = axe_clean("in the comic reader")
            press(Keys.ARROW_RIGHT)
            wait().until(lambda d: page() and page()[0] != "Comic/page1.png")
            second = page()
            if second[0] != "Comic/page2.png" or second[2] != 20 or second[1] != "Page 2 of 3":
                raise AssertionError(f"the second page shown is {second}, not page2.png (20 pixels wide, deflated)")
            press(Keys.ARROW_RIGHT)
            wait().until(lambda d: page() and page()[0] == "Comic/page10.png")
            # Past the last page, → steps to the next file; ← from there back to the comic.
            press(Keys.ARROW_RIGHT)
            wait().until(lambda d: title() == "notes.md")
            press(Keys.ARROW_LEFT)
            wait().until(lambda d: title() == "comic.cbz")
            wait().until(lambda d: page() and page()[0] == "Comic/page1.png")
            return f"page1, page2, page10 in that order, → and ← between files; {detail}"
        checks.run("the viewer's → and ←, and the comic reader in natural page order", viewer_and_comic,
                   requires=["server starts"])

        def markdown():
            if title() != "notes.md":
                press(Keys.ESCAPE)
                open_folder("Reading")
                driver.find_element(By.CSS_SELECTOR, common.row_selector("notes.md") + " a.open").click()
            wait().until(lambda d: d.find_elements(By.CSS_SELECTOR, ".markdown h1"))
            shown = script("""
                const m = document.querySelector('.markdown');
                return {
                  heading: m.querySelector('h1') && m.querySelector('h1').textContent,
                  em: !!m.querySelector('em'), strong: !!m.querySelector('strong'),
                  code: Array.from(m.querySelectorAll('code')).map((c) => c.textContent),
                  items: m.querySelectorAll('ul > li').length,
                  scripts: m.querySelectorAll('script, img, iframe, object, embed, [onerror], [onclick]').length,
                  hrefs: Array.from(m.querySelectorAll('a')).map((a) => a.getAttribute('href')),
                  unsafe: Array.from(document.querySelectorAll('a[href]')).filter((a) => /^\\s*j/i.test(a.getAttribute('href'))).length,
                  text: m.textContent,
                  pwned: window.__pwned === undefined ? null : String(window.__pwned),
                };""")
            problems = []
            if shown["heading"] != "Reading list":
                problems.append(f"heading {shown['heading']!r}")
            if not (shown["em"] and shown["strong"]) or shown["items"] != 4:
                problems.append(f"emphasis or list items missing: {shown}")
            if "inline <code>" not in shown["code"] or "<b>code stays text</b>" not in shown["code"]:
                problems.append(f"code {shown['code']}")
            if shown["scripts"] or shown["unsafe"] or shown["pwned"] is not None:
                problems.append(f"something live: {shown['scripts']} elements, {shown['unsafe']} javascript: links, "
                                f"ran: {shown['pwned']}")
            if "<script>window.__pwned" not in shown["text"]:
                problems.append("the <script> is not shown as text")
            if "https://example.com/docs" not in shown["hrefs"] or not any(
                    h and h.endswith("/Reading/a%20first.txt") for h in shown["hrefs"]):
                problems.append(f"links {shown['hrefs']}")
            if problems:
                raise AssertionError("; ".join(problems))
            return f"links {shown['hrefs']}; {axe_clean('with Markdown shown')}"
        checks.run("a Markdown file with <script> and javascript: links renders inert", markdown,
                   requires=["server starts"])

        def console():
            entries = driver.get_log("browser")
            thrown = [e["message"] for e in entries if e.get("level") == "SEVERE" and e.get("source") == "javascript"]
            if thrown:
                raise AssertionError(f"{len(thrown)} error(s) thrown: {thrown[:3]}")
        checks.run("no uncaught JavaScript errors", console, requires=["the gallery toggle is remembered per folder"])
    except KeyboardInterrupt as interruption:
        checks.failed += 1
        common.say(f"FAIL interrupted ({interruption})")
    except Exception as error:  # noqa: BLE001
        checks.failed += 1
        common.say(f"FAIL unexpected error: {type(error).__name__}: {error}")
    finally:
        if driver is not None:
            try:
                driver.quit()
            except Exception as error:  # noqa: BLE001
                common.say(f"(quitting the driver: {error})")
        if server is not None:
            server.stop()
    return common.finish(checks, work, args.keep, server)


if __name__ == "__main__":
    sys.exit(main())
