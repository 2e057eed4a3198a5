#!/usr/bin/env python3
"""Share links in headless Chromium, with a users file.

Starts `fileshare serve DIR --users FILE` (port 0) with two users, each with
write on a folder of their own, and checks through the page as people would:

  - alice signs in with the form and sees only her folder;
  - she makes an upload link to it with the item's Share action;
  - a second browser (its own profile: no session, no cookie) opens the
    link, sees a drop zone and nothing of the folder, and drops a file,
    which lands on disk;
  - alice revokes the link in the Links dialog;
  - the second browser, opening the link again, is told it was revoked;
  - a read link that ends at a set time shows that time in the second
    browser's own time zone (New York's), not the server's;
  - a read link to a folder of photos, a comic and notes is the page's
    gallery and viewer, read-only, at a phone's width (390 x 844) and a
    desktop's (1280 x 800), axe-core clean at each: the grid shows the
    thumbnails (through the link's own addresses), a photo opens in the
    viewer, → goes to the next, the comic turns a page, the Markdown
    renders; no control to upload, rename, move, delete, share or sign out
    is in the page; a subfolder opens inside the link; nothing outside the
    link's folder is reachable (`..` in the link's addresses: 404, the
    API: 401);
  - a one-download folder link, browsed and viewed (thumbnails, the
    viewer), still downloads once, and no more.

One line per check, then `links-browser: N passed, M failed`. Exit 0 only
when every check passed, 1 otherwise, 77 when selenium or Chromium is
missing (see browser_test.py, whose helpers this uses).

Usage: python3 Tests/Browser/links_browser_test.py --binary .build/debug/fileshare [--keep]
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import (SKIP, WAIT, Checks, axe_check, css_string, die_with_parent,  # noqa: E402
                          missing_dependencies, row_selector, say, start_driver, wait_until)

USERS = {"alice": ("alice-pw-123", "Team"), "bob": ("bob-pw-4567", "Other")}
PHONE = (390, 844)
DESKTOP = (1280, 800)
NOTES = "# Holiday notes\n\n- the *beach*\n- the **hills**\n"
# What a link's visitor must never be offered: the page's controls that change or share.
WRITE_CONTROLS = ["#upload-button", "#upload-input", "#upload-folder-button", "#new-folder", "#trash-button",
                  "#selection-bar", "#select-all", "input.select", "[data-role=rename]", "[data-role=move]",
                  "[data-role=delete]", "[data-role=share]", "#links-button", "#preview-history", "#preview-edit",
                  "#signed-in", "#upload-panel", "#versions", "#trash"]


class UsersServer:
    """`fileshare serve DIR --port 0 --users FILE`, its output in files."""

    def __init__(self, binary, shared, users, work):
        self.stdout_path = os.path.join(work, "server.stdout")
        self.stderr_path = os.path.join(work, "server.stderr")
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(
                [binary, "serve", shared, "--port", "0", "--users", users],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=work, preexec_fn=die_with_parent)
        self.url = None

    def wait_for_url(self):
        def first_line():
            with open(self.stdout_path, "r", errors="replace") as f:
                text = f.read()
            if self.process.poll() is not None:
                raise AssertionError(f"fileshare serve exited with {self.process.returncode}: {self.errors()}")
            return text.split("\n", 1)[0] if "\n" in text else None
        line = wait_until(first_line, WAIT, "a 'Serving' line")
        self.url = line.rsplit(" ", 1)[-1]
        return self.url

    def errors(self, last=15):
        try:
            with open(self.stderr_path, "r", errors="replace") as f:
                return "\n".join(f.read().splitlines()[-last:])
        except OSError:
            return ""

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def run_command(binary, *arguments, stdin=""):
    result = subprocess.run([binary, *arguments], input=stdin.encode(), capture_output=True, timeout=60)
    if result.returncode != 0:
        raise AssertionError(f"fileshare {' '.join(arguments)}: {result.stderr.decode(errors='replace')}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    why = missing_dependencies()
    if why:
        say(f"links-browser: skipped: {why}")
        return SKIP
    binary = os.path.abspath(args.binary)

    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    def terminated(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, terminated)

    work = tempfile.mkdtemp(prefix="fileshare-links-browser-")
    shared = os.path.join(work, "Shared")
    users = os.path.join(work, "users.json")
    for _, folder in USERS.values():
        os.makedirs(os.path.join(shared, folder))
        with open(os.path.join(shared, folder, "inside.txt"), "w") as f:
            f.write("what the folder holds")
    # A folder of photos, a comic and notes, with a subfolder, to share by a read link.
    from gallery_test import comic, png
    photos = {"a.png": png(64, 48, (200, 40, 40)), "b.png": png(48, 64, (40, 200, 40)),
              "c.png": png(40, 40, (40, 40, 200)), "comic.cbz": comic(), "notes.md": NOTES.encode(),
              os.path.join("More", "d.png"): png(30, 30, (90, 90, 90))}
    for name, data in photos.items():
        os.makedirs(os.path.dirname(os.path.join(shared, "Team", "Photos", name)), exist_ok=True)
        with open(os.path.join(shared, "Team", "Photos", name), "wb") as f:
            f.write(data)
    checks = Checks()
    server = None
    owner = None
    visitor = None
    guest = None
    state = {}

    def wait(driver, timeout=WAIT):
        return WebDriverWait(driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(StaleElementReferenceException,))

    try:
        def setup():
            nonlocal server
            for name, (password, folder) in USERS.items():
                run_command(binary, "users", "add", name, "--users", users, stdin=password + "\n")
                run_command(binary, "users", "grant", name, folder, "write", "--users", users)
            server = UsersServer(binary, shared, users, work)
            return server.wait_for_url()
        if not checks.run("users made and the server started", setup):
            return finish(checks, work, args.keep, server)

        def sign_in():
            nonlocal owner
            os.makedirs(os.path.join(work, "owner"))
            owner = start_driver(os.path.join(work, "owner"))
            owner.get(server.url)
            wait(owner).until(EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=name]")))
            owner.find_element(By.CSS_SELECTOR, "input[name=name]").send_keys("alice")
            owner.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys(USERS["alice"][0])
            owner.find_element(By.CSS_SELECTOR, "form").submit()
            wait(owner).until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
            wait(owner).until(EC.presence_of_element_located((By.CSS_SELECTOR, row_selector("Team"))))
            listed = [li.get_attribute("data-name") for li in owner.find_elements(By.CSS_SELECTOR, "#file-list > li")]
            if "Other" in listed:
                raise AssertionError(f"alice sees bob's folder: {listed}")
            return f"listed: {listed}"
        checks.run("alice signs in and sees only her folder", sign_in, requires=["users made and the server started"])

        def make_link():
            share = wait(owner).until(EC.element_to_be_clickable(
                (By.CSS_SELECTOR, row_selector("Team") + ' [data-role="share"]')))
            share.click()
            wait(owner).until(EC.visibility_of_element_located((By.ID, "share-dialog")))
            owner.find_element(By.CSS_SELECTOR, '#share-access option[value="upload"]').click()
            owner.find_element(By.ID, "share-create").click()
            field = wait(owner).until(EC.visibility_of_element_located((By.ID, "share-url")))
            url = field.get_attribute("value")
            if "/s/" not in url:
                raise AssertionError(f"no link shown: {url!r}")
            state["url"] = url
            owner.execute_script("document.getElementById('share-dialog').close()")
            return url.split("/s/")[0] + "/s/…"
        checks.run("alice makes an upload link with Share", make_link, requires=["alice signs in and sees only her folder"])

        def drop():
            nonlocal visitor
            os.makedirs(os.path.join(work, "visitor"))
            visitor = start_driver(os.path.join(work, "visitor"))
            visitor.get(state["url"])
            wait(visitor).until(EC.presence_of_element_located((By.ID, "drop-zone")))
            if "inside.txt" in visitor.page_source:
                raise AssertionError("the drop zone shows what the folder holds")
            source = os.path.join(work, "dropped by a visitor.txt")
            with open(source, "w") as f:
                f.write("sent through a link")
            visitor.find_element(By.ID, "drop-input").send_keys(source)
            wait(visitor).until(EC.presence_of_element_located((By.CSS_SELECTOR, '#drop-results li[data-outcome="sent"]')))
            target = os.path.join(shared, "Team", "dropped by a visitor.txt")
            wait_until(lambda: os.path.exists(target), WAIT, "the dropped file on disk")
            with open(target) as f:
                if f.read() != "sent through a link":
                    raise AssertionError("the dropped file differs")
            return "on disk"
        checks.run("a second browser, not signed in, drops a file through the link", drop,
                   requires=["alice makes an upload link with Share"])

        def revoke():
            owner.find_element(By.ID, "links-button").click()
            button = wait(owner).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#links-dialog .link-revoke")))
            button.click()
            wait(owner).until(EC.presence_of_element_located(
                (By.CSS_SELECTOR, '#links-dialog tr[data-state="revoked"]')))
            return "revoked"
        checks.run("alice revokes it in the Links dialog", revoke,
                   requires=["a second browser, not signed in, drops a file through the link"])

        def gone():
            visitor.get(state["url"])
            ended = wait(visitor).until(EC.presence_of_element_located((By.CSS_SELECTOR, ".link-ended")))
            if ended.get_attribute("data-ending") != "revoked":
                raise AssertionError(f"the page says {ended.text!r}")
            return ended.text
        checks.run("the link then says it was revoked (410)", gone, requires=["alice revokes it in the Links dialog"])

        def ends_in_local_time():
            # A read link that ends on the hour about 40 days from now, made
            # through the API from alice's page (her session), and opened by
            # the visitor in New York's time zone: the page says when in the
            # visitor's time, not the server's UTC.
            from datetime import datetime, timedelta, timezone
            from zoneinfo import ZoneInfo
            ends = (datetime.now(timezone.utc) + timedelta(days=40)).replace(minute=30, second=0, microsecond=0)
            made = owner.execute_async_script("""
                const done = arguments[arguments.length - 1];
                fetch('/api/shares', {method: 'POST', credentials: 'same-origin',
                    headers: {'Content-Type': 'application/json', Accept: 'application/json'},
                    body: JSON.stringify({path: 'Team', access: 'read', expires: arguments[0]})})
                  .then(r => r.json().then(j => done([r.status, j.url || j.error])), e => done([0, String(e)]));
            """, ends.strftime("%Y-%m-%dT%H:%M:%SZ"))
            if made[0] != 201:
                raise AssertionError(f"the link was not made: {made}")
            visitor.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "America/New_York"})
            visitor.get(server.url.rstrip("/") + made[1])
            shown = wait(visitor).until(EC.presence_of_element_located((By.CSS_SELECTOR, "time[data-until]")))
            wait_until(lambda: shown.text.startswith("open until") or None, WAIT, "the end in the visitor's time")
            local = ends.astimezone(ZoneInfo("America/New_York"))
            day = f"{local.strftime('%B')} {local.day}"
            clock = f"{local.hour % 12 or 12}:30"
            if day not in shown.text or clock not in shown.text or "E" not in shown.text.split()[-1]:
                raise AssertionError(f"{shown.text!r}: expected {day}, {clock}, New York's zone")
            if not (shown.get_attribute("title") or "").startswith("open for"):
                raise AssertionError(f"the span of time is not kept as its title: {shown.get_attribute('title')!r}")
            return shown.text
        checks.run("a link's end is shown in the visitor's time zone", ends_in_local_time,
                   requires=["alice signs in and sees only her folder", "a second browser, not signed in, drops a file through the link"])

        # ------------------------------------------------------------ a folder link: gallery and viewer

        def make_read_link(path, **limits):
            made = owner.execute_async_script("""
                const [body, done] = arguments;
                fetch('/api/shares', {method: 'POST', credentials: 'same-origin',
                    headers: {'Content-Type': 'application/json', Accept: 'application/json'},
                    body: JSON.stringify(body)})
                  .then(r => r.json().then(j => done([r.status, j])), e => done([0, String(e)]));
            """, dict(path=path, access="read", **limits))
            if made[0] != 201:
                raise AssertionError(f"the link was not made: {made}")
            return server.url.rstrip("/") + made[1]["url"], made[1]["id"]

        def guest_browser(dimensions):
            nonlocal guest
            if guest is None:
                os.makedirs(os.path.join(work, "guest"))
                guest = start_driver(os.path.join(work, "guest"))
                # Every request counted (Resource Timing), to see which addresses the page used.
                guest.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                      {"source": "performance.setResourceTimingBufferSize(100000);"})
            width, height = dimensions
            guest.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
            return guest

        def script(text, *arguments):
            return guest.execute_script(text, *arguments)

        def press(key):
            from selenium.webdriver.common.action_chains import ActionChains
            ActionChains(guest).send_keys(key).perform()

        def fetch(url):
            """The status and the body's start of a request from the guest's page (no account, the link's cookie)."""
            return guest.execute_async_script("""
                const [url, done] = arguments;
                fetch(url, { credentials: 'same-origin' })
                  .then(async (r) => done([r.status, (await r.text()).slice(0, 400)]))
                  .catch((e) => done([0, String(e)]));""", url)

        def fetch_bytes(url):
            return guest.execute_async_script("""
                const [url, done] = arguments;
                fetch(url, { credentials: 'same-origin' })
                  .then(async (r) => done([r.status, (await r.arrayBuffer()).byteLength]))
                  .catch((e) => done([0, String(e)]));""", url)

        def open_link(url, gallery=True):
            guest.get(url)
            wait(guest).until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
            wait(guest).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#file-list > li"))
            if gallery and not script("return document.body.classList.contains('gallery-mode')"):
                guest.find_element(By.ID, "view-toggle").click()
            if gallery:
                wait(guest).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#gallery-grid > li"))

        def tile(name):
            return f"#gallery-grid a.tile[title={css_string(name)}]"

        def title():
            return guest.find_element(By.ID, "preview-title").text

        def thumbnails_shown(names):
            return script("""
                return arguments[0].filter((name) => {
                  const a = Array.from(document.querySelectorAll('#gallery-grid a.tile')).find((t) => t.title === name);
                  const img = a && a.querySelector('.tile-picture.has-thumb img');
                  return img && img.complete && img.naturalWidth > 0;
                });""", names)

        def no_write_controls(where):
            found = [selector for selector in WRITE_CONTROLS if guest.find_elements(By.CSS_SELECTOR, selector)]
            if found:
                raise AssertionError(f"{where}: the page offers {found}")

        def requested(part):
            return script("return performance.getEntriesByType('resource').map((e) => e.name)"
                          ".filter((n) => n.includes(arguments[0]));", part)

        def gallery_and_viewer(dimensions, label):
            def check():
                browser = guest_browser(dimensions)
                if "photos" not in state:
                    state["photos"] = make_read_link("Team/Photos")[0]
                url = state["photos"]
                open_link(url)
                pictures = ["a.png", "b.png", "c.png"]
                wait(browser).until(lambda d: thumbnails_shown(pictures) == pictures)
                wrong = [name for name in requested("/thumbnail") if "/s/" not in name]
                if wrong or requested("/api/"):
                    raise AssertionError(f"the page asked the API: {wrong or requested('/api/')}")
                no_write_controls(f"the gallery ({label})")
                detail = axe_check(browser, f"in a link's gallery ({label})")
                browser.find_element(By.CSS_SELECTOR, tile("a.png")).click()
                wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
                wait(browser).until(lambda d: script(
                    "const img = document.querySelector('#preview-body img');"
                    "return img && img.complete && img.naturalWidth === 64 && img.src.includes('/s/');"))
                press(Keys.ARROW_RIGHT)
                wait(browser).until(lambda d: title() == "b.png")
                no_write_controls(f"the viewer ({label})")
                detail += "; " + axe_check(browser, f"in a link's viewer ({label})")
                press(Keys.ARROW_RIGHT)
                wait(browser).until(lambda d: title() == "c.png")
                press(Keys.ARROW_RIGHT)
                wait(browser).until(lambda d: title() == "comic.cbz")

                def page():
                    return script("const img = document.querySelector('.comic-page img');"
                                  "return img && img.complete && img.naturalWidth ? img.dataset.page : null")
                wait(browser).until(lambda d: page() == "Comic/page1.png")
                press(Keys.ARROW_RIGHT)
                wait(browser).until(lambda d: page() == "Comic/page2.png")
                detail += "; " + axe_check(browser, f"in a link's comic reader ({label})")
                press(Keys.ESCAPE)
                wait(browser).until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
                browser.find_element(By.CSS_SELECTOR, tile("notes.md")).click()
                heading = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, ".markdown h1")))
                if heading.text != "Holiday notes" or not browser.find_elements(By.CSS_SELECTOR, ".markdown strong"):
                    raise AssertionError(f"the Markdown shows {heading.text!r}")
                detail += "; " + axe_check(browser, f"with a link's Markdown shown ({label})")
                press(Keys.ESCAPE)
                wait(browser).until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
                return detail
            return check
        for dimensions, label in ((PHONE, "phone"), (DESKTOP, "desktop")):
            checks.run(f"a folder link shows the page's gallery and viewer, read-only ({label})",
                       gallery_and_viewer(dimensions, label), requires=["alice signs in and sees only her folder"])

        def subfolder():
            browser = guest_browser(PHONE)
            open_link(state["photos"])
            browser.find_element(By.CSS_SELECTOR, tile("More")).click()
            # The gallery is chosen per folder: the subfolder opens as the list, with its thumbnail.
            wait(browser).until(lambda d: script(
                "const img = document.querySelector(arguments[0] + ' .thumb.has-thumb img');"
                "return img && img.complete && img.naturalWidth > 0 && img.src.includes('/s/');",
                row_selector("d.png")))
            here = script("return [location.pathname, location.hash, "
                          "Array.from(document.querySelectorAll('#breadcrumb-list li')).map((li) => li.textContent)]")
            if here[0] != state["photos"].split(server.url.rstrip("/"), 1)[1] or here[1] != "#/More" \
                    or here[2] != ["Photos", "More"]:
                raise AssertionError(f"the subfolder opened at {here}")
            no_write_controls("a subfolder")
            return f"{here[0][:4]}…{here[1]}, {here[2]}; " + axe_check(browser, "in a link's subfolder (phone)")
        checks.run("a subfolder of the link opens inside the link", subfolder,
                   requires=["a folder link shows the page's gallery and viewer, read-only (phone)"])

        def nothing_outside():
            url = state["photos"]
            base = server.url.rstrip("/")
            # (A bare ".." the browser resolves itself before sending; the live tests send it raw.)
            tricks = [url + "/list/%2e%2e%2FOther", url + "/list/..%2F", url + "/list/..%2FOther", url + "/view/..%2Finside.txt",
                      url + "/download/..%2Finside.txt", url + "/thumbnail/..%2F..%2FOther%2Finside.txt",
                      url + "/zip/..%2F", url + "/list/More%2F..%2F..", base + "/api/list?path=Team",
                      base + "/api/files/Team/inside.txt"]
            answers = {trick.replace(base, ""): fetch(trick) for trick in tricks}
            wrong = {trick: answer[0] for trick, answer in answers.items()
                     if answer[0] not in (401, 403, 404) or "what the folder holds" in answer[1]}
            if wrong:
                raise AssertionError(f"reached outside the link: {wrong}")
            # The page's own way up stops at the link's folder.
            guest.get("about:blank")
            guest.get(url + "#/../..")
            wait(guest).until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
            shown = [li.get_attribute("data-name") for li in guest.find_elements(By.CSS_SELECTOR, "#file-list > li")]
            if "inside.txt" in shown or "Photos" in shown:
                raise AssertionError(f"#/../.. shows {shown}")
            return f"{sorted(set(a[0] for a in answers.values()))} for {len(tricks)} tries"
        checks.run("nothing outside the link's folder is reachable", nothing_outside,
                   requires=["a folder link shows the page's gallery and viewer, read-only (phone)"])

        def one_download_folder():
            browser = guest_browser(PHONE)
            url, made = make_read_link("Team/Photos", maxDownloads=1)
            open_link(url)
            pictures = ["a.png", "b.png", "c.png"]
            wait(browser).until(lambda d: thumbnails_shown(pictures) == pictures)
            browser.find_element(By.CSS_SELECTOR, tile("a.png")).click()
            wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
            # The viewer shows the server's thumbnail: looking spends nothing.
            wait(browser).until(lambda d: script(
                "const img = document.querySelector('#preview-body img.counted-preview');"
                "return img && img.complete && img.naturalWidth > 0 && img.src.includes('/thumbnail/');"))
            if browser.find_element(By.ID, "preview-open").is_displayed():
                raise AssertionError("the viewer offers to open the file in a tab, which would spend the download")
            detail = axe_check(browser, "in a one-download link's viewer (phone)")
            press(Keys.ARROW_RIGHT)
            wait(browser).until(lambda d: title() == "b.png")
            for name in ("comic.cbz", "notes.md"):
                press(Keys.ESCAPE)
                wait(browser).until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
                browser.find_element(By.CSS_SELECTOR, tile(name)).click()
                wait(browser).until(lambda d, n=name: title() == n)
                wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#preview-body .preview-info"))
            token = url.rsplit("/", 1)[1]
            spent = [name for name in requested(token) if "/download" in name or "/view" in name]
            if spent:
                raise AssertionError(f"browsing asked for {spent}")
            href = browser.find_element(By.ID, "preview-download").get_attribute("href")
            got = fetch_bytes(href)
            if got != [200, len(NOTES.encode())]:
                raise AssertionError(f"the Download, after browsing and viewing, got {got}")
            links = owner.execute_async_script("""
                const done = arguments[arguments.length - 1];
                fetch('/api/shares', {credentials: 'same-origin'}).then(r => r.json()).then(j => done(j.links));""")
            mine = [link for link in links if link["id"] == made][0]
            if mine["downloads"] != 1 or mine["state"] != "used-up":
                raise AssertionError(f"the link counts {mine['downloads']} downloads, state {mine['state']}")
            again = fetch_bytes(href)
            if again[0] != 410:
                raise AssertionError(f"a second download through the one-download link got {again}")
            return detail
        checks.run("a one-download folder link, browsed and viewed, still downloads once", one_download_folder,
                   requires=["a folder link shows the page's gallery and viewer, read-only (phone)"])

        def console():
            entries = guest.get_log("browser")
            thrown = [e["message"] for e in entries
                      if e.get("level") == "SEVERE" and e.get("source") in ("javascript", "security")]
            if thrown:
                raise AssertionError(f"{len(thrown)} error(s) or refusals of the security policy: {thrown[:3]}")
        checks.run("no uncaught JavaScript error or security-policy refusal on a link's page", console,
                   requires=["a folder link shows the page's gallery and viewer, read-only (phone)"])
    except KeyboardInterrupt as stop:
        say(f"links-browser: stopped ({stop})")
    finally:
        for driver in (owner, visitor, guest):
            if driver is not None:
                try:
                    driver.quit()
                except Exception as error:  # noqa: BLE001
                    say(f"(quitting a driver: {error})")
    return finish(checks, work, args.keep, server)


def finish(checks, work, keep, server):
    if server is not None:
        server.stop()
        if checks.failed:
            say("server stderr (last lines):\n" + server.errors())
    if checks.failed or keep:
        say(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    say(f"links-browser: {checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
