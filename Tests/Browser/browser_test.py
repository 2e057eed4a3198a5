#!/usr/bin/env python3
"""The web page of `fileshare serve`, driven in headless Chromium.

Starts `fileshare serve` on a temporary folder (port 0, with credentials),
opens the page and checks, through the page as a user would:

  - the page loads, signed in, and shows the empty folder;
  - a file uploaded through #upload-input is listed and is on disk, same bytes;
  - renaming it with its Rename button and the dialog lists the new name and
    renames it on disk;
  - a file created on disk appears in the list without a reload (live
    updates over /api/events);
  - deleting it with its Delete button and the confirmation removes it from
    the list and from disk;
  - axe-core (from axe-selenium-python) finds no accessibility violation on
    the folder view, with the upload panel shown, and with a preview open;
  - the page works by keyboard alone: the skip link, a tab order that visits
    every control once in reading order without a trap, Enter and Space on
    rows and buttons, Escape closing the preview and the dialogs with focus
    back where it was, a folder made by typing alone;
  - a screenshot of the page can be taken.

One line per check, then `browser: N passed, M failed`. Exit 0 only when every
check passed, 1 otherwise, and 77 when selenium or Chromium is missing (the
Swift test in Tests/FileshareCLITests/BrowserTests.swift skips then, except
on CI, whose .ci/run installs them).

Usage: python3 Tests/Browser/browser_test.py --binary .build/debug/fileshare [--keep]
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

SKIP = 77
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
USER = "browser"
PASSWORD = "s3cret-pw"
WAIT = 30  # seconds: generous, for a loaded CI machine
LIVE_WAIT = 15  # seconds for a change on disk to reach the page


def say(line):
    print(line, flush=True)


def missing_dependencies():
    """Why the test cannot run here, or None."""
    try:
        import selenium  # noqa: F401
        import axe_selenium_python  # noqa: F401
    except ImportError as error:
        return (f"selenium or axe-selenium-python is not installed for {sys.executable} ({error}); "
                "pip install selenium axe-selenium-python")
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing; apt-get install {package}"
    return None


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.done = set()

    def run(self, name, body, requires=()):
        """Runs one check; a check whose prerequisite failed fails without running."""
        missing = [r for r in requires if r not in self.done]
        if missing:
            self.failed += 1
            say(f"FAIL {name}: not run, it needs an earlier check that failed ({', '.join(missing)})")
            return False
        started = time.monotonic()
        try:
            detail = body()
        except Exception as error:  # noqa: BLE001 - any failure of the check is reported
            self.failed += 1
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            say(f"FAIL {name}: {type(error).__name__}: {message}")
            if os.environ.get("BROWSER_TEST_TRACE"):
                traceback.print_exc(file=sys.stdout)
            return False
        self.passed += 1
        self.done.add(name)
        elapsed = time.monotonic() - started
        say(f"ok   {name} ({elapsed:.1f}s{'; ' + detail if detail else ''})")
        return True


class Server:
    """`fileshare serve DIR --port 0 --user U --password P`, its output in files."""

    def __init__(self, binary, shared, work):
        self.stdout_path = os.path.join(work, "server.stdout")
        self.stderr_path = os.path.join(work, "server.stderr")
        self.process = None
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(
                [binary, "serve", shared, "--port", "0", "--user", USER, "--password", PASSWORD],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=work,
                preexec_fn=die_with_parent)
        self.url = None

    def wait_for_url(self, timeout=WAIT):
        """The URL of the first stdout line `Serving <DIR> at <URL>`."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with open(self.stdout_path, "r", errors="replace") as f:
                text = f.read()
            if "\n" in text:
                first = text.split("\n", 1)[0]
                if not first.startswith("Serving ") or " at " not in first:
                    raise AssertionError(f"unexpected first line: {first!r}")
                self.url = first.rsplit(" ", 1)[-1]
                return first
            if self.process.poll() is not None:
                raise AssertionError(f"fileshare serve exited with {self.process.returncode}: {self.errors()}")
            time.sleep(0.05)
        raise AssertionError(f"no 'Serving' line within {timeout}s")

    def errors(self, last=15):
        try:
            with open(self.stderr_path, "r", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-last:])

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def die_with_parent():
    """In the child, before exec: SIGTERM when this script dies, however it dies."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort
        pass


def start_driver(work):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,900", "--no-first-run", "--no-default-browser-check",
                     "--disable-extensions", "--password-store=basic",
                     f"--user-data-dir={os.path.join(work, 'profile')}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, log_output=os.path.join(work, "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(WAIT)
    driver.set_script_timeout(WAIT)
    return driver


def sign_in(driver, url, user=USER, password=PASSWORD):
    """Signs the browser in through the page's sign-in form, as a person does
    (the server shows the form, never the browser's password dialog)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get(url.rstrip("/") + "/signin")
    driver.find_element(By.ID, "name").send_keys(user)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "form[action='/signin'] button[type=submit]").click()
    WebDriverWait(driver, WAIT).until(lambda d: "/signin" not in d.current_url)


def wait_until(condition, timeout, what, interval=0.1):
    """Polls `condition` (a function returning a true value when done) on this side: for the disk."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= end:
            raise AssertionError(f"{what} (waited {timeout}s)")
        time.sleep(interval)


def css_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def row_selector(name):
    return f"#file-list > li[data-name={css_string(name)}]"


def axe_check(driver, where):
    """Runs axe-core on the page as it is; fails naming each violation and where."""
    from axe_selenium_python import Axe
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    violations = results["violations"]
    if violations:
        described = "; ".join(
            f"{v['id']} ({v['impact']}): {', '.join(str(t) for n in v['nodes'] for t in n['target'])}"
            for v in violations)
        raise AssertionError(f"{len(violations)} violation(s) {where}: {described}")
    return f"{len(results['passes'])} rules pass {where}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the fileshare executable")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (kept anyway on failure)")
    args = parser.parse_args()

    why = missing_dependencies()
    if why:
        say(f"browser: skipped: {why}")
        return SKIP
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        say(f"browser: no fileshare executable at {binary}")
        return 1

    from selenium.common.exceptions import (ElementClickInterceptedException,
                                            ElementNotInteractableException,
                                            StaleElementReferenceException)
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    # SIGTERM (the Swift test's timeout) runs the finally blocks below too.
    def terminated(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, terminated)

    work = tempfile.mkdtemp(prefix="fileshare-browser-")
    shared = os.path.join(work, "Shared Files")
    os.mkdir(shared)
    sources = os.path.join(work, "sources")
    os.mkdir(sources)
    checks = Checks()
    server = None
    driver = None

    def wait(timeout=WAIT):
        return WebDriverWait(driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(StaleElementReferenceException,))

    def rows():
        return [li.get_attribute("data-name") for li in driver.find_elements(By.CSS_SELECTOR, "#file-list > li")]

    def toasts():
        try:
            return " | ".join(t.text for t in driver.find_elements(By.CSS_SELECTOR, "#messages .toast") if t.text)
        except Exception:  # noqa: BLE001
            return ""

    def wait_listed(name, timeout=WAIT):
        try:
            return wait(timeout).until(EC.presence_of_element_located((By.CSS_SELECTOR, row_selector(name))))
        except Exception:
            raise AssertionError(f"{name!r} not listed within {timeout}s; listed: {rows()}; messages: {toasts()!r}")

    def wait_unlisted(name, timeout=WAIT):
        try:
            wait(timeout).until_not(EC.presence_of_element_located((By.CSS_SELECTOR, row_selector(name))))
        except Exception:
            raise AssertionError(f"{name!r} still listed after {timeout}s; listed: {rows()}; messages: {toasts()!r}")

    def click(selector, what):
        """Clicks once the element is there and clickable (a toast may cover it for a moment)."""
        def attempt(_):
            try:
                element = driver.find_element(By.CSS_SELECTOR, selector)
                if not element.is_displayed() or not element.is_enabled():
                    return False
                element.click()
                return True
            except (ElementClickInterceptedException, ElementNotInteractableException,
                    StaleElementReferenceException):
                return False
            except Exception as error:  # NoSuchElement and friends: keep waiting
                if type(error).__name__ == "NoSuchElementException":
                    return False
                raise
        try:
            wait().until(attempt)
        except Exception:
            raise AssertionError(f"could not click {what} ({selector}) within {WAIT}s; messages: {toasts()!r}")

    def axe_clean(where):
        return axe_check(driver, where)

    def press(*keys):
        """Keys sent to whatever has the focus, as a person types them."""
        ActionChains(driver).send_keys(*keys).perform()

    def chord(modifier, key):
        """`key` pressed while `modifier` (Shift, Control) is held down."""
        ActionChains(driver).key_down(modifier).send_keys(key).key_up(modifier).perform()

    def focused():
        """A short description of the focused element."""
        return driver.execute_script("""
            const e = document.activeElement;
            if (!e || e === document.body) return 'body';
            return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '')
                + (e.getAttribute('aria-label') ? '[' + e.getAttribute('aria-label') + ']' : '');""")

    def wait_focus(script, what, timeout=WAIT):
        """Waits until `script` (a JavaScript expression on `e`, the focused element) is true."""
        try:
            wait(timeout).until(lambda d: d.execute_script(f"const e = document.activeElement; return !!({script});"))
        except Exception:
            raise AssertionError(f"focus is not on {what} but on {focused()}")

    def read(path):
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError:
            return None

    uploaded_name = "notes from the browser.txt"
    renamed_name = "renamed – notes.txt"
    disk_name = "made-on-disk.txt"
    content = ("Uploaded through the page: ünïcödé, quotes \" ' and a long tail.\n".encode()
               + os.urandom(256 * 1024))

    try:
        server = Server(binary, shared, work)

        def serving():
            first = server.wait_for_url()
            expected = f"Serving {os.path.realpath(shared)} at "
            if not first.startswith(expected):
                raise AssertionError(f"first line {first!r} does not start with {expected!r}")
            return server.url
        if not checks.run("server starts and prints its URL", serving):
            return finish(checks, work, args.keep, server)

        def open_page():
            nonlocal driver
            driver = start_driver(work)
            sign_in(driver, server.url)
            driver.get(server.url)
            wait().until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
            # The info call got through with the credentials: the share's name is shown.
            wait().until(lambda d: d.find_element(By.ID, "share-name").text == os.path.basename(shared))
            wait().until(EC.visibility_of_element_located((By.ID, "empty")))
            if rows():
                raise AssertionError(f"the empty folder lists {rows()}")
            return f"{driver.capabilities.get('browserVersion', '?')}, '{os.path.basename(shared)}' shown empty"
        checks.run("page opens signed in, the empty folder shown", open_page, requires=["server starts and prints its URL"])

        def upload():
            source = os.path.join(sources, uploaded_name)
            with open(source, "wb") as f:
                f.write(content)
            driver.find_element(By.ID, "upload-input").send_keys(source)
            wait_listed(uploaded_name)
            target = os.path.join(shared, uploaded_name)
            wait_until(lambda: read(target) == content, WAIT,
                       f"{target} does not hold the uploaded bytes (size on disk: "
                       f"{len(read(target) or b'') if os.path.exists(target) else 'missing'})")
            # What the page lists is the finished file.
            row = driver.find_element(By.CSS_SELECTOR, row_selector(uploaded_name))
            wait().until(lambda d: row.find_element(By.CSS_SELECTOR, ".size").text != "")
            return f"{len(content)} bytes, listed as {row.find_element(By.CSS_SELECTOR, '.size').text!r}"
        checks.run("upload through #upload-input: listed, same bytes on disk", upload,
                   requires=["page opens signed in, the empty folder shown"])

        def rename():
            click(row_selector(uploaded_name) + " button.rename", "the Rename button")
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#dialog[open] #dialog-input")))
            field = driver.find_element(By.ID, "dialog-input")
            if field.get_attribute("value") != uploaded_name:
                raise AssertionError(f"the dialog offers {field.get_attribute('value')!r}, not the current name")
            field.clear()
            field.send_keys(renamed_name)
            wait().until(lambda d: d.find_element(By.ID, "dialog-input").get_attribute("value") == renamed_name)
            click("#dialog-ok", "the dialog's OK button")
            wait().until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#dialog[open]")))
            wait_listed(renamed_name)
            wait_unlisted(uploaded_name)
            wait_until(lambda: read(os.path.join(shared, renamed_name)) == content, WAIT,
                       f"{renamed_name!r} is not on disk with the uploaded bytes")
            wait_until(lambda: not os.path.lexists(os.path.join(shared, uploaded_name)), WAIT,
                       f"{uploaded_name!r} is still on disk")
            return f"now {renamed_name!r}"
        checks.run("rename with .rename and the dialog: new name listed and on disk, old gone", rename,
                   requires=["upload through #upload-input: listed, same bytes on disk"])

        def replace():
            # The page asks before replacing a file; someone else saves it while the question
            # is open: the page's upload must not overwrite that edit (it sends If-Match).
            target = os.path.join(shared, renamed_name)
            replacement = b"the page's new version\n" * 100
            other_edit = b"someone else's edit, saved first\n"
            source = os.path.join(work, "replacements", renamed_name)
            os.makedirs(os.path.dirname(source), exist_ok=True)
            with open(source, "wb") as f:
                f.write(replacement)
            driver.find_element(By.ID, "upload-input").send_keys(source)
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#confirm[open] #confirm-ok")))
            with open(target, "wb") as f:
                f.write(other_edit)
            click("#confirm-ok", "the Replace button")
            try:
                wait().until(lambda d: "was not uploaded" in toasts() and "changed" in toasts())
            except Exception:
                raise AssertionError(f"no refusal shown; messages: {toasts()!r}")
            if read(target) != other_edit:
                raise AssertionError(f"the other edit was overwritten: {read(target)[:40]!r}")
            refused = toasts()
            # Asked again, with nothing changed meanwhile, the replacement goes through.
            driver.find_element(By.ID, "upload-input").send_keys(source)
            click("dialog#confirm[open] #confirm-ok", "the Replace button")
            wait_until(lambda: read(target) == replacement, WAIT,
                       f"{renamed_name!r} was not replaced; messages: {toasts()!r}")
            return f"refused with {refused!r}, then replaced"
        checks.run("replacing a file someone else changed meanwhile is refused (If-Match), the other edit kept",
                   replace, requires=["rename with .rename and the dialog: new name listed and on disk, old gone"])

        def live():
            driver.execute_script("window.__fileshareNoReload = 'still here';")
            started = time.monotonic()
            with open(os.path.join(shared, disk_name), "w") as f:
                f.write("written straight to the shared folder\n")
            wait_listed(disk_name, timeout=LIVE_WAIT)
            elapsed = time.monotonic() - started
            if driver.execute_script("return window.__fileshareNoReload;") != "still here":
                raise AssertionError("the page was reloaded")
            return f"listed {elapsed:.1f}s after it was written, without a reload"
        checks.run("a file created on disk appears live (/api/events)", live,
                   requires=["page opens signed in, the empty folder shown"])

        def delete():
            click(row_selector(disk_name) + " button.delete", "the Delete button")
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#confirm[open] #confirm-ok")))
            message = driver.find_element(By.ID, "confirm-message").text
            if disk_name not in message:
                raise AssertionError(f"the confirmation does not name the file: {message!r}")
            click("#confirm-ok", "the confirmation's OK button")
            wait_unlisted(disk_name)
            wait_until(lambda: not os.path.lexists(os.path.join(shared, disk_name)), WAIT,
                       f"{disk_name!r} is still on disk")
            if renamed_name in os.listdir(shared) and renamed_name not in rows():
                raise AssertionError(f"{renamed_name!r} disappeared from the list too: {rows()}")
            return None
        checks.run("delete with .delete and #confirm-ok: gone from the list and from disk", delete,
                   requires=["a file created on disk appears live (/api/events)"])

        def axe_folder_view():
            if driver.find_element(By.ID, "upload-panel").get_attribute("hidden") is not None:
                raise AssertionError("the upload panel is not shown after the upload")
            wait_listed(renamed_name)
            return axe_clean("on the folder view with the upload panel")
        checks.run("axe-core: no violations on the folder view and the upload panel", axe_folder_view,
                   requires=["rename with .rename and the dialog: new name listed and on disk, old gone"])

        def keyboard_preview():
            # "/" goes to the filter, Enter to the first row, Enter opens it.
            driver.find_element(By.TAG_NAME, "body").click()
            press("/")
            wait_focus("e.id === 'search'", "the filter field")
            press(Keys.ENTER)
            wait_focus(f"e.matches('a.open') && e.closest('li').dataset.name === {css_string(renamed_name)}",
                       "the first row's name")
            press(Keys.ENTER)
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
            wait_focus("e.id === 'preview-close'", "the preview's Close button")
            title = driver.find_element(By.ID, "preview-title").text
            if title != renamed_name:
                raise AssertionError(f"the preview shows {title!r}")
            detail = axe_clean("with the preview open")
            # Tab stays inside the open preview.
            for _ in range(8):
                press(Keys.TAB)
                # The page behind is inert: focus is in the preview, or out in the browser's own UI.
                inside = driver.execute_script(
                    "const e = document.activeElement; return e === document.body || !!e.closest('dialog#preview');")
                if not inside:
                    raise AssertionError(f"Tab left the open preview for {focused()}")
            press(Keys.ESCAPE)
            wait().until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
            wait_focus(f"e.matches('a.open') && e.closest('li').dataset.name === {css_string(renamed_name)}",
                       "the row it was opened from")
            return detail
        checks.run("keyboard: / and Enter open a file's preview (axe-clean), Tab stays in it, Escape closes it",
                   keyboard_preview, requires=["axe-core: no violations on the folder view and the upload panel"])

        def keyboard_dialogs():
            row_link = f"e.matches('a.open') && e.closest('li').dataset.name === {css_string(renamed_name)}"
            wait_focus(row_link, "the row's name")
            # F2 renames; Escape cancels, and the name stays.
            press(Keys.F2)
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#dialog[open]")))
            wait_focus("e.id === 'dialog-input'", "the name field")
            press(Keys.ESCAPE)
            wait().until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#dialog[open]")))
            wait_focus(row_link, "the row, after the dialog closed")
            # Tab to the row's Delete button; Space asks, the safe answer has the focus; Escape keeps the file.
            for _ in range(10):
                press(Keys.TAB)
                if driver.execute_script("return document.activeElement.matches('button.delete');"):
                    break
            else:
                raise AssertionError(f"Tab did not reach the row's Delete button (at {focused()})")
            press(Keys.SPACE)
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#confirm[open]")))
            wait_focus("e.id === 'confirm-cancel'", "the confirmation's Cancel button")
            press(Keys.ESCAPE)
            wait().until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#confirm[open]")))
            wait_focus("e.matches('button.delete')", "the Delete button, after the confirmation closed")
            if not os.path.exists(os.path.join(shared, renamed_name)):
                raise AssertionError("Escape on the confirmation deleted the file")
            # A folder made by keyboard alone: Shift+Tab back to "New folder", Enter, type, Enter.
            for _ in range(30):
                chord(Keys.SHIFT, Keys.TAB)
                if driver.execute_script("return document.activeElement.id === 'new-folder';"):
                    break
            else:
                raise AssertionError(f"Shift+Tab did not reach New folder (at {focused()})")
            press(Keys.ENTER)
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#dialog[open]")))
            wait_focus("e.id === 'dialog-input'", "the name field")
            # The suggested name is selected: typing replaces it.
            press("Typed folder", Keys.ENTER)
            wait().until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#dialog[open]")))
            wait_until(lambda: os.path.isdir(os.path.join(shared, "Typed folder")), WAIT,
                       "the folder made by keyboard is not on disk")
            wait_listed("Typed folder")
            return None
        checks.run("keyboard: F2 and Escape, Space on Delete and Escape, a folder made by typing alone",
                   keyboard_dialogs,
                   requires=["keyboard: / and Enter open a file's preview (axe-clean), Tab stays in it, Escape closes it"])

        def tab_order():
            # From the top: the skip link first; Enter on it goes to the list, in the folder shown.
            driver.get(driver.current_url)
            wait().until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
            wait_listed(renamed_name)
            hash_before = driver.execute_script("return location.hash;")
            press(Keys.TAB)
            wait_focus("e.matches('a.skip-link')", "the skip link")
            press(Keys.ENTER)
            wait_focus("e.matches('#file-list > li:first-child a.open')", "the first row, after the skip link")
            hash_after = driver.execute_script("return location.hash;")
            if hash_after != hash_before:
                raise AssertionError(f"the skip link changed the folder shown: {hash_before!r} → {hash_after!r}")
            # Round the whole page: each control once, visible, in reading order, back to the start.
            driver.get(driver.current_url)
            wait().until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
            wait_listed(renamed_name)
            seen = []
            for _ in range(80):
                press(Keys.TAB)
                current = driver.execute_script("""
                    const e = document.activeElement;
                    if (!e || e === document.body) return null;
                    if (!e.dataset.tabProbe) e.dataset.tabProbe = String(Math.random());
                    const r = e.getBoundingClientRect();
                    const visible = e.matches('a.skip-link') || (r.width > 0 && r.height > 0
                        && getComputedStyle(e).visibility !== 'hidden');
                    return [e.dataset.tabProbe, visible];""")
                if current is None:
                    break  # past the last control: the browser's own UI is next
                probe, visible = current
                if not visible:
                    raise AssertionError(f"Tab reached {focused()}, which cannot be seen")
                if probe in (p for p, _ in seen):
                    break  # round again
                seen.append((probe, focused()))
            else:
                raise AssertionError(f"80 Tabs did not go round the page: {[d for _, d in seen][-5:]}")
            names = [d for _, d in seen]
            order = ["a.skip-link", "button#upload-button", "button#new-folder", "input#search",
                     "input#select-all", "a.open"]
            positions = []
            for wanted in order:
                found = [i for i, d in enumerate(names) if d.startswith(wanted)]
                if not found:
                    raise AssertionError(f"Tab never reached {wanted}: {names}")
                positions.append(found[0])
            if positions != sorted(positions):
                raise AssertionError(f"the tab order is not the reading order: {names}")
            return f"{len(names)} controls, each once"
        checks.run("keyboard: the skip link, and a tab order over every control once in reading order",
                   tab_order, requires=["keyboard: F2 and Escape, Space on Delete and Escape, a folder made by typing alone"])

        def two_editors():
            # Two pages edit one text file at once: the first save wins the
            # file, the second meets 412, both versions are shown side by
            # side, and "Keep both" keeps each edit (the other beside it).
            name = "shared notes.txt"
            target = os.path.join(shared, name)
            with open(target, "w") as f:
                f.write("first line\n")
            address = server.url
            first = driver.current_window_handle

            def open_editor():
                driver.get(address)
                wait_listed(name)
                click(row_selector(name) + " a.open", "the file's name")
                click("#preview-edit", "the preview's Edit button")
                wait().until(EC.visibility_of_element_located((By.ID, "editor-text")))

            def type_line(text):
                area = driver.find_element(By.ID, "editor-text")
                area.send_keys(Keys.CONTROL + Keys.END)
                area.send_keys(text)

            open_editor()
            driver.switch_to.new_window("window")
            second = driver.current_window_handle
            open_editor()
            # Both edited before either saves (a save waits 1.2 s of quiet).
            driver.switch_to.window(first)
            type_line("from the first page\n")
            driver.switch_to.window(second)
            type_line("from the second page\n")
            mine_first = "first line\nfrom the first page\n"
            mine_second = "first line\nfrom the second page\n"
            # The first page saves first (it was edited first).
            wait_until(lambda: read(target) == mine_first.encode(), WAIT,
                       f"the first page's save is not on disk: {read(target)!r}")
            driver.switch_to.window(second)
            try:
                wait().until(EC.visibility_of_element_located((By.ID, "editor-conflict")))
            except Exception:
                status = driver.find_element(By.ID, "editor-status").text
                raise AssertionError(f"no collision shown on the second page; its status: {status!r}; disk: {read(target)!r}")
            shown_mine = driver.find_element(By.ID, "conflict-mine").get_attribute("value")
            shown_theirs = driver.find_element(By.ID, "conflict-theirs").get_attribute("value")
            if shown_mine != mine_second or shown_theirs != mine_first:
                raise AssertionError(f"the two versions shown are {shown_mine!r} and {shown_theirs!r}")
            detail = axe_clean("with two versions side by side")
            if read(target) != mine_first.encode():
                raise AssertionError("the second page's save went over the first's")
            click("#conflict-keep-both", "Keep both")
            beside = os.path.join(shared, "shared notes (your version).txt")
            wait_until(lambda: read(beside) == mine_second.encode(), WAIT,
                       f"the second page's version is not beside the file; messages: {toasts()!r}")
            wait().until_not(EC.presence_of_element_located((By.ID, "editor-conflict")))
            if read(target) != mine_first.encode():
                raise AssertionError(f"keeping both changed the file: {read(target)!r}")
            # The editor now holds the file as it is, and saves on.
            if driver.find_element(By.ID, "editor-text").get_attribute("value") != mine_first:
                raise AssertionError("after keeping both, the editor does not show the file as it is")
            type_line("and one more\n")
            wait_until(lambda: read(target) == (mine_first + "and one more\n").encode(), WAIT,
                       f"the editor's next save is not on disk: {read(target)!r}")
            driver.close()
            driver.switch_to.window(first)
            press(Keys.ESCAPE)
            return detail
        checks.run("two pages edit one file: both edits kept, the collision shown side by side and resolved",
                   two_editors, requires=["page opens signed in, the empty folder shown"])

        def history_and_trash():
            # The editor's saves replaced "shared notes.txt" several times: each
            # replaced content is a version. Restore the oldest from the page;
            # then delete the file and bring it back from the trash.
            name = "shared notes.txt"
            target = os.path.join(shared, name)
            driver.get(server.url)
            wait_listed(name)
            click(row_selector(name) + " a.open", "the file's name")
            click("#preview-history", "the preview's Versions button")
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#versions[open]")))
            try:
                wait().until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#versions-list > li")) >= 2)
            except Exception:
                note = driver.find_element(By.ID, "versions-note").text
                raise AssertionError(f"fewer than two versions listed; note: {note!r}")
            detail = axe_clean("with a file's versions open")
            before = read(target)
            click("#versions-list > li:last-child button.write-action", "the oldest version's Restore button")
            click("dialog#confirm[open] #confirm-ok", "Restore in the confirmation")
            wait_until(lambda: read(target) == b"first line\n", WAIT,
                       f"the oldest version was not restored: {read(target)!r}; messages: {toasts()!r}")
            # What it replaced became a version itself.
            if b"and one more" not in (before or b""):
                raise AssertionError(f"the file held {before!r} before the restore, not the editor's last save")
            wait().until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#versions-list > li")) >= 3)
            click("#versions-close", "Close")
            wait().until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#versions[open]")))
            press(Keys.ESCAPE)
            wait().until_not(EC.presence_of_element_located((By.CSS_SELECTOR, "dialog#preview[open]")))
            click(row_selector(name) + " button.delete", "the Delete button")
            click("dialog#confirm[open] #confirm-ok", "the confirmation's OK button")
            wait_unlisted(name)
            wait_until(lambda: not os.path.lexists(target), WAIT, f"{name!r} is still on disk")
            click("#trash-button", "the Trash button")
            wait().until(EC.visibility_of_element_located((By.CSS_SELECTOR, "dialog#trash[open]")))
            entry = f"#trash-list > li button[aria-label={css_string('Restore ' + name)}]"
            wait().until(EC.presence_of_element_located((By.CSS_SELECTOR, entry)))
            trash_detail = axe_clean("with the trash open")
            click(entry, "Restore in the trash")
            wait_until(lambda: read(target) == b"first line\n", WAIT,
                       f"{name!r} did not come back from the trash; messages: {toasts()!r}")
            click("#trash-close", "Close")
            wait_listed(name)
            return f"{detail}; {trash_detail}"
        checks.run("a file's versions: listed, the oldest restored; deleted, then restored from the trash (axe-clean)",
                   history_and_trash,
                   requires=["two pages edit one file: both edits kept, the collision shown side by side and resolved"])

        def screenshot():
            path = os.path.join(work, "page.png")
            if not driver.save_screenshot(path):
                raise AssertionError("the driver took no screenshot")
            with open(path, "rb") as f:
                head = f.read(8)
            if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(path) < 1000:
                raise AssertionError(f"{path} is not a PNG image")
            return path
        checks.run("screenshot of the page", screenshot, requires=["page opens signed in, the empty folder shown"])

        def console():
            # Errors the page's script threw (uncaught exceptions); failed requests are the checks' business.
            entries = driver.get_log("browser")
            thrown = [e["message"] for e in entries if e.get("level") == "SEVERE" and e.get("source") == "javascript"]
            if thrown:
                raise AssertionError(f"{len(thrown)} error(s) thrown: {thrown[:3]}")
            others = [e["message"] for e in entries if e.get("level") == "SEVERE"]
            return f"{len(others)} other console error(s): {others[:3]}" if others else None
        checks.run("no uncaught JavaScript errors", console, requires=["page opens signed in, the empty folder shown"])
    except KeyboardInterrupt as interruption:
        checks.failed += 1
        say(f"FAIL interrupted ({interruption})")
    except Exception as error:  # noqa: BLE001
        checks.failed += 1
        say(f"FAIL unexpected error: {type(error).__name__}: {error}")
        traceback.print_exc(file=sys.stdout)
    finally:
        if driver is not None:
            try:
                driver.quit()
            except Exception as error:  # noqa: BLE001
                say(f"(quitting the driver: {error})")
        if server is not None:
            server.stop()
    return finish(checks, work, args.keep, server)


def finish(checks, work, keep, server):
    if server is not None:
        server.stop()
        if checks.failed:
            errors = server.errors()
            if errors:
                say("server stderr (last lines):\n" + errors)
    if checks.failed or keep:
        say(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    say(f"browser: {checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
