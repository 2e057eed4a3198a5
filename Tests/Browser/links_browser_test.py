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
    browser's own time zone (New York's), not the server's.

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
from browser_test import (SKIP, WAIT, Checks, die_with_parent, missing_dependencies,  # noqa: E402
                          row_selector, say, start_driver, wait_until)

USERS = {"alice": ("alice-pw-123", "Team"), "bob": ("bob-pw-4567", "Other")}


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
    checks = Checks()
    server = None
    owner = None
    visitor = None
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
    except KeyboardInterrupt as stop:
        say(f"links-browser: stopped ({stop})")
    finally:
        for driver in (owner, visitor):
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
