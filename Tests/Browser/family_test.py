#!/usr/bin/env python3
"""What a family trips on in the first hour (issue #33), in headless Chromium.

Starts `fileshare serve DIR --users FILE` (port 0) over a family's folder:
mum may change Photos and Notes (not the top level), kid may only look at
Photos. Each check goes through the page as a person does, at a phone's
width (390 x 844) and at a desktop's (1280 x 800) where the layout
matters, with axe-core on what it shows:

  - the sign-in page names the share and keeps the user name after a wrong
    password;
  - no "Read-only" for a folder mum may change; kid, dropping a file on
    Photos, is told that she may look at this folder, not change it;
  - a delete says the item goes to the Trash and offers Undo (which brings
    it back) and the Trash; a rename over a file says the file replaced is
    kept as a version and Undo puts both back;
  - opening a file is a step in the browser's history: Back closes the
    viewer and leaves the folder shown;
  - an editing session's autosaves keep one version of what it replaced,
    the content from before it is not pushed out, and the versions show
    seconds and sizes;
  - the open preview follows a save (its size) and a restored version;
  - a tab whose session ended goes to the sign-in page when a file is
    opened, and back to the folder after signing in;
  - the Share and Links dialogs are styled, "Create link" makes one link,
    the phone's toolbar shows Links without scrolling sideways, the Links
    table shows its first column;
  - a refused upload is told in a person's words (no command-line flag);
  - a one-download link shows its photo (looking spends nothing) and
    still downloads once, and no more;
  - two phones sending IMG_0001.png through a drop box both land;
  - words a family follows, labelled buttons on a phone, a line icon for Share.

One line per check, then `family: N passed, M failed`. Exit 0 only when
every check passed, 1 otherwise, 77 when selenium or Chromium is missing.

Usage: python3 Tests/Browser/family_test.py --binary .build/debug/fileshare [--keep] [--screenshots DIR]
"""

import argparse
import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import (SKIP, WAIT, Checks, axe_check, missing_dependencies, row_selector,  # noqa: E402
                          say, start_driver, wait_until)
from gallery_test import png  # noqa: E402
from links_browser_test import UsersServer, run_command  # noqa: E402

SHARE = "Family"
USERS = {"mum": ("mum-pw-1234", {"Photos": "write", "Notes": "write"}),
         "kid": ("kid-pw-5678", {"Photos": "read"})}
PHONE = (390, 844)
DESKTOP = (1280, 800)
ORIGINAL_NOTES = "original notes\n"
# Enough of a PDF for the server to know one (its signature and a little more).
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--screenshots", help="a folder for screenshots of what was checked")
    args = parser.parse_args()
    why = missing_dependencies()
    if why:
        say(f"family: skipped: {why}")
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

    work = tempfile.mkdtemp(prefix="fileshare-family-")
    shared = os.path.join(work, SHARE)
    users = os.path.join(work, "users.json")
    for folder in ("Photos", "Notes"):
        os.makedirs(os.path.join(shared, folder))
    pictures = {"a.png": png(64, 48, (200, 40, 40)), "b.png": png(48, 64, (40, 200, 40))}
    for name, data in pictures.items():
        with open(os.path.join(shared, "Photos", name), "wb") as f:
            f.write(data)
    notes = {"notes.txt": ORIGINAL_NOTES, "old.txt": "an old list\n", "draft.txt": "the draft\n",
             "letter.txt": "the letter\n", "diary.txt": "dear diary\n"}
    for name, text in notes.items():
        with open(os.path.join(shared, "Notes", name), "w") as f:
            f.write(text)
    shots = args.screenshots
    if shots:
        os.makedirs(shots, exist_ok=True)

    checks = Checks()
    server = None
    drivers = {}

    def read(*parts):
        try:
            with open(os.path.join(shared, *parts), "rb") as f:
                return f.read()
        except OSError:
            return None

    def wait(driver, timeout=WAIT):
        return WebDriverWait(driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(StaleElementReferenceException,))

    def browser(name):
        if name not in drivers:
            os.makedirs(os.path.join(work, name))
            drivers[name] = start_driver(os.path.join(work, name))
        return drivers[name]

    def size(driver, width):
        w, h = width
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600})

    def shot(driver, name):
        if shots:
            driver.save_screenshot(os.path.join(shots, name + ".png"))

    def toasts(driver):
        try:
            return " | ".join(t.text for t in driver.find_elements(By.CSS_SELECTOR, "#messages .toast") if t.text)
        except Exception:  # noqa: BLE001
            return ""

    def sign_in(driver, name, where="/"):
        driver.delete_all_cookies()
        driver.get(base() + "/signin")
        wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=name]")))
        field = driver.find_element(By.CSS_SELECTOR, "input[name=name]")
        field.clear()
        field.send_keys(name)
        driver.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys(USERS[name][0])
        driver.find_element(By.CSS_SELECTOR, "main form").submit()
        wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
        if where != "/":
            go(driver, where)

    def go(driver, folder):
        driver.execute_script("location.hash = arguments[0];", "#/" + folder)
        wait(driver).until(lambda d: d.execute_script(
            "return document.querySelector('#file-list').getAttribute('aria-busy') === 'false'"
            " && decodeURIComponent(location.hash) === arguments[0];", "#/" + folder))
        wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#file-list > li")
                           or d.find_element(By.ID, "empty").is_displayed())

    def click(driver, selector):
        def attempt(d):
            try:
                element = d.find_element(By.CSS_SELECTOR, selector)
                if not element.is_displayed() or not element.is_enabled():
                    return False
                element.click()
                return True
            except Exception as error:  # noqa: BLE001 - covered, stale, not there yet: try again
                if type(error).__name__ in ("ElementClickInterceptedException", "ElementNotInteractableException",
                                            "StaleElementReferenceException", "NoSuchElementException"):
                    return False
                raise
        try:
            wait(driver).until(attempt)
        except Exception:
            raise AssertionError(f"could not click {selector}; messages: {toasts(driver)!r}")

    def api(driver, method, url, body=None):
        """A request from the page, with its session: (status, JSON or None)."""
        return driver.execute_async_script("""
            const [method, url, body, done] = arguments;
            fetch(url, { method, credentials: 'same-origin',
                         headers: body ? { 'Content-Type': 'application/json' } : {},
                         body: body ? JSON.stringify(body) : undefined })
              .then(async (r) => { let j = null; try { j = await r.json(); } catch (e) {} done([r.status, j]); })
              .catch((e) => done([0, String(e)]));""", method, url, body)

    def fetch_status(driver, url):
        return driver.execute_async_script("""
            const [url, done] = arguments;
            fetch(url, { credentials: 'same-origin' })
              .then(async (r) => done([r.status, (await r.arrayBuffer()).byteLength]))
              .catch((e) => done([0, String(e)]));""", url)

    def base():
        return server.url.rstrip("/")

    def preview_open(driver):
        return driver.execute_script("return document.getElementById('preview').open;")

    try:
        def setup():
            nonlocal server
            for name, (password, rights) in USERS.items():
                run_command(binary, "users", "add", name, "--users", users, stdin=password + "\n")
                for folder, right in rights.items():
                    run_command(binary, "users", "grant", name, folder, right, "--users", users)
            server = UsersServer(binary, shared, users, work)
            return server.wait_for_url()
        if not checks.run("users made and the server started", setup):
            return finish(checks, work, args.keep, server)
        started = ["users made and the server started"]

        # ------------------------------------------------------------ sign-in page
        for label, width in (("phone", PHONE), ("desktop", DESKTOP)):
            def signin_page(width=width, label=label):
                d = browser("mum")
                size(d, width)
                d.delete_all_cookies()
                d.get(base() + "/signin")
                wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=name]")))
                heading = d.find_element(By.TAG_NAME, "h1").text
                if SHARE not in heading:
                    raise AssertionError(f"the sign-in page does not name the share: {heading!r}")
                d.find_element(By.CSS_SELECTOR, "input[name=name]").send_keys("mum")
                d.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys("not the password")
                d.find_element(By.CSS_SELECTOR, "main form").submit()
                wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, ".field-error")))
                kept = d.find_element(By.CSS_SELECTOR, "input[name=name]").get_attribute("value")
                if kept != "mum":
                    raise AssertionError(f"after a wrong password the user name field holds {kept!r}")
                shot(d, f"signin-wrong-{label}")
                return axe_check(d, f"on the sign-in page after a wrong password ({label})")
            checks.run(f"sign-in page names the share and keeps the user name ({label})", signin_page,
                       requires=started)

        # ------------------------------------------------------------ 6: read-only
        for label, width in (("phone", PHONE), ("desktop", DESKTOP)):
            def not_read_only(width=width, label=label):
                d = browser("mum")
                size(d, width)
                sign_in(d, "mum")
                badge = d.find_element(By.ID, "readonly-badge")
                if badge.is_displayed() and "read-only" in badge.text.lower():
                    raise AssertionError(f"mum, who may change Photos and Notes, sees {badge.text!r} at the top")
                go(d, "Photos")
                if badge.is_displayed():
                    raise AssertionError(f"mum sees {badge.text!r} in Photos, which she may change")
                shot(d, f"mum-photos-{label}")
                return axe_check(d, f"in mum's Photos ({label})")
            checks.run(f"no Read-only badge where mum may change things ({label})", not_read_only, requires=started)

        def kid_drop():
            d = browser("kid")
            size(d, PHONE)
            sign_in(d, "kid", "Photos")
            badge = d.find_element(By.ID, "readonly-badge")
            said = (badge.text + " " + (badge.get_attribute("title") or "")).lower()
            if not badge.is_displayed() or "read-only" in said:
                raise AssertionError(f"kid's badge in Photos says {badge.text!r} (shown: {badge.is_displayed()})")
            d.execute_script("""
                const data = new DataTransfer();
                data.items.add(new File(['a drawing'], 'drawing.txt', { type: 'text/plain' }));
                for (const type of ['dragenter', 'dragover', 'drop']) {
                  document.getElementById('file-list').dispatchEvent(
                    new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: data }));
                }""")
            wait(d).until(lambda _: toasts(d))
            said = toasts(d)
            if "share is read-only" in said or "Photos" not in said or "change" not in said:
                raise AssertionError(f"dropping a file on Photos says {said!r}")
            if read("Photos", "drawing.txt") is not None:
                raise AssertionError("the dropped file was written")
            shot(d, "kid-drop-phone")
            return said
        checks.run("kid, who may only look at Photos, is told so when she drops a file (phone)", kid_drop,
                   requires=started)

        # ------------------------------------------------------------ 2: undo
        def delete_undo():
            d = browser("mum")
            size(d, PHONE)
            sign_in(d, "mum", "Notes")
            click(d, row_selector("old.txt") + " button.delete")
            wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#confirm[open]")))
            message = d.find_element(By.ID, "confirm-message").text
            if "cannot be undone" in message or "Trash" not in message:
                raise AssertionError(f"the delete asks {message!r}")
            click(d, "#confirm-ok")
            wait_until(lambda: read("Notes", "old.txt") is None, WAIT, "old.txt still on disk")
            wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#messages .toast .toast-undo")))
            toast = toasts(d)
            if "Trash" not in toast:
                raise AssertionError(f"the toast does not say where it went: {toast!r}")
            if not d.find_elements(By.CSS_SELECTOR, "#messages .toast .toast-trash"):
                raise AssertionError("the toast does not open the Trash")
            shot(d, "delete-undo-phone")
            detail = axe_check(d, "with the delete's Undo toast (phone)")
            click(d, "#messages .toast .toast-undo")
            wait_until(lambda: read("Notes", "old.txt") == b"an old list\n", WAIT,
                       f"Undo did not bring old.txt back; messages: {toasts(d)!r}")
            wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, row_selector("old.txt"))))
            return f"{toast!r}; {detail}"
        checks.run("a delete says it goes to the Trash, and Undo brings it back (phone)", delete_undo,
                   requires=started)

        def rename_undo():
            d = browser("mum")
            size(d, DESKTOP)
            sign_in(d, "mum", "Notes")
            click(d, row_selector("draft.txt") + " button.rename")
            wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#dialog[open] #dialog-input")))
            field = d.find_element(By.ID, "dialog-input")
            field.clear()
            field.send_keys("letter.txt")
            click(d, "#dialog-ok")
            wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#confirm[open]")))
            message = d.find_element(By.ID, "confirm-message").text
            if "will be deleted" in message or "version" not in message:
                raise AssertionError(f"the replace asks {message!r}")
            click(d, "#confirm-ok")
            wait_until(lambda: read("Notes", "letter.txt") == b"the draft\n", WAIT, "the rename did not replace")
            wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#messages .toast .toast-undo")))
            toast = toasts(d)
            click(d, "#messages .toast .toast-undo")
            wait_until(lambda: read("Notes", "draft.txt") == b"the draft\n"
                       and read("Notes", "letter.txt") == b"the letter\n", WAIT,
                       f"Undo did not put both back: draft {read('Notes', 'draft.txt')!r}, "
                       f"letter {read('Notes', 'letter.txt')!r}; messages: {toasts(d)!r}")
            return toast
        checks.run("a rename over a file says it is kept as a version, and Undo puts both back (desktop)",
                   rename_undo, requires=started)

        # ------------------------------------------------------------ 3: history
        def back_closes():
            d = browser("mum")
            size(d, PHONE)
            sign_in(d, "mum")
            go(d, "Photos")
            click(d, row_selector("a.png") + " a.open")
            wait(d).until(lambda _: preview_open(d))
            shot(d, "viewer-phone")
            d.back()
            wait(d).until(lambda _: not preview_open(d))
            time.sleep(0.5)  # what Back might have done to the list besides: give it the time to show
            where = d.execute_script("return decodeURIComponent(location.hash);")
            if where != "#/Photos" or not d.find_elements(By.CSS_SELECTOR, row_selector("a.png")):
                raise AssertionError(f"after Back the page shows {where!r}")
            # Closed by Escape, the viewer's step is gone too: Back then goes to the folder before.
            click(d, row_selector("b.png") + " a.open")
            wait(d).until(lambda _: preview_open(d))
            d.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
            wait(d).until(lambda _: not preview_open(d))
            time.sleep(0.3)
            if d.execute_script("return decodeURIComponent(location.hash);") != "#/Photos":
                raise AssertionError("Escape changed the folder shown")
            d.back()
            wait(d).until(lambda dd: dd.execute_script("return location.hash;") in ("#/", ""))
            return None
        checks.run("Back closes the viewer and leaves the folder shown (phone)", back_closes, requires=started)

        # ------------------------------------------------------------ 4: versions per session
        def edit_session(d, words):
            click(d, row_selector("notes.txt") + " a.open")
            click(d, "#preview-edit")
            area = wait(d).until(EC.visibility_of_element_located((By.ID, "editor-text")))
            for word in words:
                before = read("Notes", "notes.txt")
                area.send_keys(Keys.CONTROL + Keys.END)
                area.send_keys(word + "\n")
                wait_until(lambda: read("Notes", "notes.txt") != before, WAIT, f"{word!r} was not saved")
                wait(d).until(lambda dd: dd.find_element(By.ID, "editor-status").text == "Saved")
            click(d, "#editor-done")
            wait(d).until(EC.presence_of_element_located((By.ID, "preview-text")))
            d.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
            wait(d).until(lambda _: not preview_open(d))

        def one_version_per_session():
            d = browser("mum")
            size(d, DESKTOP)
            sign_in(d, "mum", "Notes")
            edit_session(d, ["one", "two", "three"])
            status, answer = api(d, "GET", "/api/versions?path=Notes/notes.txt")
            versions = answer["versions"] if answer else []
            if len(versions) != 1:
                raise AssertionError(f"one editing session left {len(versions)} versions")
            edit_session(d, ["four", "five"])
            status, answer = api(d, "GET", "/api/versions?path=Notes/notes.txt")
            versions = answer["versions"]
            if len(versions) != 2:
                raise AssertionError(f"two editing sessions left {len(versions)} versions")
            oldest = versions[-1]["version"]
            content = d.execute_async_script("""
                const [url, done] = arguments;
                fetch(url, { credentials: 'same-origin' }).then((r) => r.text()).then(done, (e) => done(String(e)));""",
                "/api/versions/content?path=Notes/notes.txt&version=" + oldest)
            if content != ORIGINAL_NOTES:
                raise AssertionError(f"the oldest version holds {content!r}, not the content before the sessions")
            click(d, row_selector("notes.txt") + " a.open")
            click(d, "#preview-history")
            wait(d).until(lambda dd: len(dd.find_elements(By.CSS_SELECTOR, "#versions-list > li")) == 2)
            shown = [li.text for li in d.find_elements(By.CSS_SELECTOR, "#versions-list > li")]
            for text in shown:
                if not re.search(r"\d:\d\d:\d\d", text) or not re.search(r"\d+ bytes", text):
                    raise AssertionError(f"a version is shown without its seconds or size: {text!r}")
            shot(d, "versions-desktop")
            detail = axe_check(d, "with the versions listed")
            click(d, "#versions-close")
            d.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
            wait(d).until(lambda _: not preview_open(d))
            return f"{shown}; {detail}"
        checks.run("an editing session's autosaves keep one version; the original stays (desktop)",
                   one_version_per_session, requires=started)

        # ------------------------------------------------------------ 10: the open preview follows
        def preview_follows():
            d = browser("mum")
            size(d, PHONE)
            sign_in(d, "mum", "Notes")
            click(d, row_selector("diary.txt") + " a.open")
            click(d, "#preview-edit")
            area = wait(d).until(EC.visibility_of_element_located((By.ID, "editor-text")))
            area.send_keys(Keys.CONTROL + Keys.END)
            area.send_keys("a longer day than the others\n")
            expected = len("dear diary\na longer day than the others\n")
            wait_until(lambda: read("Notes", "diary.txt") is not None and len(read("Notes", "diary.txt")) == expected,
                       WAIT, "the edit was not saved")
            try:
                wait(d).until(lambda dd: f"{expected} bytes" in dd.find_element(By.ID, "preview-meta").text)
            except Exception:
                raise AssertionError(f"after the save the header says {d.find_element(By.ID, 'preview-meta').text!r}")
            click(d, "#editor-done")
            wait(d).until(EC.presence_of_element_located((By.ID, "preview-text")))
            click(d, "#preview-history")
            wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#versions-list > li")))
            click(d, "#versions-list > li:last-child button.write-action")
            click(d, "dialog#confirm[open] #confirm-ok")
            wait_until(lambda: read("Notes", "diary.txt") == b"dear diary\n", WAIT, "the version was not restored")
            click(d, "#versions-close")
            try:
                wait(d).until(lambda dd: dd.find_element(By.ID, "preview-text").text.strip() == "dear diary"
                              and "11 bytes" in dd.find_element(By.ID, "preview-meta").text)
            except Exception:
                raise AssertionError(
                    f"after the restore the preview shows {d.find_element(By.ID, 'preview-text').text!r}, "
                    f"{d.find_element(By.ID, 'preview-meta').text!r}")
            shot(d, "preview-restored-phone")
            d.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
            return None
        checks.run("the open preview shows the saved size and the restored content (phone)", preview_follows,
                   requires=started)

        # ------------------------------------------------------------ 9: a session that ended
        def ended_session():
            d = browser("mum")
            size(d, PHONE)
            sign_in(d, "mum", "Notes")
            first = d.current_window_handle
            d.switch_to.new_window("tab")
            d.get(base() + "/")
            wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
            click(d, "#signed-in button[type=submit]")
            wait(d).until(lambda dd: "/signin" in dd.current_url)
            d.close()
            d.switch_to.window(first)
            click(d, row_selector("notes.txt") + " a.open")
            try:
                wait(d).until(lambda dd: "/signin" in dd.current_url)
            except Exception:
                shown = d.find_element(By.ID, "preview-body").text if preview_open(d) else toasts(d)
                raise AssertionError(f"opening a file after the session ended shows {shown!r}")
            d.find_element(By.CSS_SELECTOR, "input[name=name]").clear()
            d.find_element(By.CSS_SELECTOR, "input[name=name]").send_keys("mum")
            d.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys(USERS["mum"][0])
            d.find_element(By.CSS_SELECTOR, "main form").submit()
            wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
            where = d.execute_script("return decodeURIComponent(location.hash);")
            if where != "#/Notes":
                raise AssertionError(f"after signing in again the page shows {where!r}, not Notes")
            return None
        checks.run("a tab whose session ended goes to sign-in on opening a file, and back to Notes (phone)",
                   ended_session, requires=started)

        # ------------------------------------------------------------ 8: Share and Links dialogs
        for label, width in (("phone", PHONE), ("desktop", DESKTOP)):
            def dialogs(width=width, label=label):
                d = browser("mum")
                size(d, width)
                sign_in(d, "mum", "Photos")
                toolbar = d.execute_script("""
                    const bar = document.querySelector('.toolbar');
                    const links = document.getElementById('links-button');
                    const r = links ? links.getBoundingClientRect() : null;
                    return [bar.scrollWidth - bar.clientWidth, document.documentElement.scrollWidth - innerWidth,
                            r && r.left >= 0 && r.right <= innerWidth && r.width > 0];""")
                if toolbar[0] > 1 or toolbar[1] > 1 or not toolbar[2]:
                    raise AssertionError(f"the toolbar scrolls sideways or cuts off Links: {toolbar}")
                share = d.find_element(By.CSS_SELECTOR, row_selector("a.png") + ' [data-role="share"]')
                if share.text.strip() or not share.find_elements(By.TAG_NAME, "svg"):
                    raise AssertionError(f"the Share button shows {share.text!r}, not a line icon")
                before = len(api(d, "GET", "/api/shares")[1]["links"])
                click(d, row_selector("a.png") + ' [data-role="share"]')
                dialog = wait(d).until(EC.visibility_of_element_located((By.ID, "share-dialog")))
                look = d.execute_script("""
                    const dialog = document.getElementById('share-dialog');
                    const style = getComputedStyle(dialog);
                    const select = getComputedStyle(document.getElementById('share-access'));
                    return [style.borderTopLeftRadius, style.borderTopWidth, parseFloat(select.minHeight) || 0,
                            dialog.getBoundingClientRect().right <= innerWidth];""")
                if look[0] in ("0px", "") or look[2] < 30 or not look[3]:
                    raise AssertionError(f"the Share dialog looks unstyled: radius {look[0]}, border {look[1]}, "
                                         f"field height {look[2]}, inside the screen {look[3]}")
                axe_share = axe_check(d, f"with the Share dialog ({label})")
                click(d, "#share-create")
                wait(d).until(EC.visibility_of_element_located((By.ID, "share-url")))
                shot(d, f"share-dialog-{label}")
                d.execute_script("const b = document.getElementById('share-create'); if (b) b.click();")
                time.sleep(0.5)
                after = len(api(d, "GET", "/api/shares")[1]["links"])
                if after != before + 1:
                    raise AssertionError(f"{after - before} links made by two clicks on Create link")
                d.execute_script("document.getElementById('share-dialog').close()")
                click(d, "#links-button")
                wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#links-dialog tr[data-link]")))
                first = d.execute_script("""
                    const dialog = document.getElementById('links-dialog').getBoundingClientRect();
                    const cell = document.querySelector('#links-dialog tr[data-link] td').getBoundingClientRect();
                    return [cell.left >= dialog.left - 1 && cell.right <= dialog.right + 1 && cell.width > 0,
                            dialog.right <= innerWidth + 1];""")
                if not all(first):
                    raise AssertionError(f"the Links table hides its first column: {first}")
                shot(d, f"links-dialog-{label}")
                detail = axe_check(d, f"with the Links dialog ({label})")
                d.execute_script("document.getElementById('links-dialog').close()")
                return f"{axe_share}; {detail}"
            checks.run(f"Share and Links dialogs styled, one link per Create, Links reachable ({label})", dialogs,
                       requires=started)

        # ------------------------------------------------------------ 12: a refused upload
        def refused_upload():
            d = browser("mum")
            size(d, PHONE)
            sign_in(d, "mum", "Notes")
            source = os.path.join(work, "sources", "report.txt")
            os.makedirs(os.path.dirname(source), exist_ok=True)
            with open(source, "wb") as f:
                f.write(PDF)
            d.find_element(By.ID, "upload-input").send_keys(source)
            status = wait(d).until(EC.visibility_of_element_located(
                (By.CSS_SELECTOR, "#uploads .upload-status")))
            wait(d).until(lambda _: status.text.startswith("Failed") or "not" in status.text)
            said = status.text + " " + toasts(d)
            if "--" in said or "fix-extensions" in said or "report.pdf" not in said:
                raise AssertionError(f"the refusal says {said!r}")
            shot(d, "refused-upload-phone")
            return said
        checks.run("a refused upload is told in a person's words (phone)", refused_upload, requires=started)

        # ------------------------------------------------------------ 1: one-download link
        def one_download():
            d = browser("mum")
            status, made = api(d, "POST", "/api/shares", {"path": "Photos/a.png", "maxDownloads": 1})
            if status != 201:
                raise AssertionError(f"making the link answered {status}: {made}")
            url = base() + made["url"]
            v = browser("visitor")
            size(v, PHONE)
            for _ in range(2):  # opened, then opened again later
                v.get(url)
                image = wait(v).until(EC.presence_of_element_located((By.CSS_SELECTOR, "img.link-preview")))
                wait(v).until(lambda _: v.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0;",
                                                          image))
            shot(v, "link-file-phone")
            detail = axe_check(v, "on a file link's page (phone)")
            href = v.find_element(By.CSS_SELECTOR, "a.link-download").get_attribute("href")
            got = fetch_status(v, href)
            if got != [200, len(pictures["a.png"])]:
                raise AssertionError(f"the Download button, after the page was seen twice, got {got}")
            # Looking spent nothing, the download spent the one there was: a second one is refused.
            links = api(d, "GET", "/api/shares")[1]["links"]
            mine = [link for link in links if link["id"] == made["id"]][0]
            if mine["downloads"] != 1 or mine["state"] != "used-up":
                raise AssertionError(f"the link counts {mine['downloads']} downloads, state {mine['state']}")
            again = fetch_status(v, href)
            if again[0] != 410:
                raise AssertionError(f"a second download through a one-download link got {again}")
            return detail
        checks.run("a one-download link shows its photo and still downloads once (phone)", one_download,
                   requires=started)

        # ------------------------------------------------------------ friction: drop box
        def drop_box_keeps_both():
            d = browser("mum")
            status, made = api(d, "POST", "/api/shares", {"path": "Photos", "access": "upload"})
            if status != 201:
                raise AssertionError(f"making the link answered {status}: {made}")
            v = browser("visitor")
            size(v, PHONE)
            v.get(base() + made["url"])
            wait(v).until(EC.presence_of_element_located((By.ID, "drop-zone")))
            page = v.find_element(By.TAG_NAME, "main").text
            if "refused" in page:
                raise AssertionError(f"the drop zone says {page!r}")
            sent = []
            for colour in ((1, 2, 3), (4, 5, 6)):
                source = os.path.join(work, "phone-" + "-".join(map(str, colour)), "IMG_0001.png")
                os.makedirs(os.path.dirname(source), exist_ok=True)
                with open(source, "wb") as f:
                    f.write(png(10, 10, colour))
                sent.append(png(10, 10, colour))
                v.find_element(By.ID, "drop-input").send_keys(source)
                wait(v).until(lambda dd, n=len(sent): len(dd.find_elements(
                    By.CSS_SELECTOR, '#drop-results li[data-outcome]')) == n)
            outcomes = [li.get_attribute("data-outcome") + ": " + li.text
                        for li in v.find_elements(By.CSS_SELECTOR, "#drop-results li")]
            if read("Photos", "IMG_0001.png") != sent[0] or read("Photos", "IMG_0001 2.png") != sent[1]:
                raise AssertionError(f"both photos are not kept: {outcomes}; "
                                     f"{sorted(os.listdir(os.path.join(shared, 'Photos')))}")
            shot(v, "drop-box-phone")
            return f"{outcomes}; " + axe_check(v, "on a drop box (phone)")
        checks.run("two phones sending IMG_0001.png through a drop box: both kept (phone)", drop_box_keeps_both,
                   requires=started)

        # ------------------------------------------------------------ friction: words and labels
        def words():
            d = browser("mum")
            size(d, PHONE)
            sign_in(d, "mum", "Notes")
            labels = d.execute_script("""
                return ['#upload-folder-button', '#new-folder'].map((s) => {
                  const label = document.querySelector(s + ' .label');
                  return label && label.getBoundingClientRect().width > 0 && getComputedStyle(label).display !== 'none';
                });""")
            if not all(labels):
                raise AssertionError(f"on a phone Upload folder / New folder show no words: {labels}")
            shot(d, "notes-phone")
            click(d, "#trash-button")
            note = wait(d).until(EC.visibility_of_element_located((By.ID, "trash-note"))).text
            wait(d).until(lambda dd: dd.find_element(By.ID, "trash-note").text != "Loading…")
            note = d.find_element(By.ID, "trash-note").text
            listed = " ".join(li.text for li in d.find_elements(By.CSS_SELECTOR, "#trash-list > li"))
            if "empties by age and size" in note or "the page or the API" in listed:
                raise AssertionError(f"the trash says {note!r} / {listed!r}")
            shot(d, "trash-phone")
            click(d, "#trash-close")
            go(d, "Missing folder")
            empty = d.find_element(By.ID, "empty").text
            if "Go to" in empty:
                raise AssertionError(f"a missing folder says {empty!r}")
            return None
        checks.run("words a family follows; labelled buttons on a phone", words, requires=started)
    except KeyboardInterrupt as stop:
        checks.failed += 1
        say(f"FAIL interrupted ({stop})")
    finally:
        for driver in drivers.values():
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
    say(f"family: {checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
