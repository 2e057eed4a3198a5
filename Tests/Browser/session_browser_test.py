#!/usr/bin/env python3
"""The page's session across restarts, in headless Chromium.

Starts `fileshare serve DIR --users FILE` on a fixed free port, signs in
with the form, and checks as a person would:

  - the server restarts (same port): the open page reconnects by itself,
    with the same session, and a file made on disk appears live;
  - the session is ended elsewhere (a sign-out with the same cookie) and the
    server restarts: the page's event stream is refused (401), and the page
    says the session ended and offers the sign-in, instead of "Connection
    lost, reconnecting…" for ever; its link leads to the sign-in form.

One line per check, then `session-browser: N passed, M failed`. Exit 0 only
when every check passed, 1 otherwise, 77 when selenium or Chromium is
missing (see browser_test.py, whose helpers this uses).

Usage: python3 Tests/Browser/session_browser_test.py --binary .build/debug/fileshare [--keep]
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import (SKIP, WAIT, LIVE_WAIT, Checks, die_with_parent, missing_dependencies,  # noqa: E402
                          row_selector, say, start_driver, wait_until)

NAME, PASSWORD = "alice", "alice-pw-123"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class UsersServer:
    """`fileshare serve DIR --port PORT --users FILE`, its output in files."""

    def __init__(self, binary, shared, users, port, work, run):
        self.stdout_path = os.path.join(work, f"server{run}.stdout")
        self.stderr_path = os.path.join(work, f"server{run}.stderr")
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(
                [binary, "serve", shared, "--port", str(port), "--users", users],
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    why = missing_dependencies()
    if why:
        say(f"session-browser: skipped: {why}")
        return SKIP
    binary = os.path.abspath(args.binary)

    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    def terminated(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, terminated)

    work = tempfile.mkdtemp(prefix="fileshare-session-browser-")
    shared = os.path.join(work, "Shared")
    users = os.path.join(work, "users.json")
    os.makedirs(shared)
    port = free_port()
    checks = Checks()
    servers = []
    driver = None

    def wait(timeout=WAIT):
        return WebDriverWait(driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(StaleElementReferenceException,))

    def start_server():
        server = UsersServer(binary, shared, users, port, work, len(servers))
        servers.append(server)
        return server.wait_for_url()

    def restart():
        servers[-1].stop()
        return start_server()

    try:
        def setup():
            result = subprocess.run([binary, "users", "add", NAME, "--admin", "--users", users],
                                    input=(PASSWORD + "\n").encode(), capture_output=True, timeout=60)
            if result.returncode != 0:
                raise AssertionError(result.stderr.decode(errors="replace"))
            return start_server()
        if not checks.run("a user made and the server started", setup):
            return finish(checks, work, args.keep, servers)

        def sign_in():
            nonlocal driver
            os.makedirs(os.path.join(work, "browser"))
            driver = start_driver(os.path.join(work, "browser"))
            driver.get(servers[-1].url)
            wait().until(EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=name]")))
            driver.find_element(By.CSS_SELECTOR, "input[name=name]").send_keys(NAME)
            driver.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys(PASSWORD)
            driver.find_element(By.CSS_SELECTOR, "form").submit()
            wait().until(EC.presence_of_element_located((By.CSS_SELECTOR, '#file-list[aria-busy="false"]')))
            return "the folder is shown"
        checks.run("signs in with the form", sign_in, requires=["a user made and the server started"])

        def survives_restart():
            restart()
            with open(os.path.join(shared, "made after the restart.txt"), "w") as f:
                f.write("hello")
            # The page reconnects by itself, with the same session: the new file appears live.
            WebDriverWait(driver, LIVE_WAIT + WAIT, poll_frequency=0.2).until(
                EC.presence_of_element_located((By.CSS_SELECTOR, row_selector("made after the restart.txt"))))
            if driver.find_element(By.ID, "session-ended").is_displayed():
                raise AssertionError("the page says the session ended")
            wait().until(EC.invisibility_of_element_located((By.ID, "connection")))
            return "reconnected, the new file listed"
        checks.run("the server restarts: the page goes on with its session", survives_restart,
                   requires=["signs in with the form"])

        def ended_elsewhere():
            cookie = driver.get_cookie("fileshare-session")
            if not cookie:
                raise AssertionError("no session cookie")
            request = urllib.request.Request(servers[-1].url + "api/session", method="DELETE",
                                             headers={"Cookie": f"fileshare-session={cookie['value']}"})
            with urllib.request.urlopen(request, timeout=10) as response:
                if response.status != 204:
                    raise AssertionError(f"sign-out answered {response.status}")
            # The page's event stream is still open: a restart makes it reconnect, and be refused.
            restart()
            banner = wait(WAIT + LIVE_WAIT).until(EC.visibility_of_element_located((By.ID, "session-ended")))
            if driver.find_element(By.ID, "connection").is_displayed():
                raise AssertionError("the page still says the connection was lost")
            link = driver.find_element(By.ID, "session-signin")
            if not link.get_attribute("href").endswith("/signin"):
                raise AssertionError(f"the sign-in link goes to {link.get_attribute('href')}")
            # Read before the click: the page it leaves takes the banner with it.
            said = banner.text
            link.click()
            wait().until(EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=password]")))
            return said
        checks.run("a session ended elsewhere: the page says so and offers the sign-in", ended_elsewhere,
                   requires=["the server restarts: the page goes on with its session"])
    except KeyboardInterrupt as stop:
        say(f"session-browser: stopped ({stop})")
    finally:
        if driver is not None:
            try:
                driver.quit()
            except Exception as error:  # noqa: BLE001
                say(f"(quitting the driver: {error})")
    return finish(checks, work, args.keep, servers)


def finish(checks, work, keep, servers):
    for server in servers:
        server.stop()
    if checks.failed and servers:
        say("server stderr (last lines):\n" + servers[-1].errors())
    if checks.failed or keep:
        say(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    say(f"session-browser: {checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
