"""A throwaway PostgreSQL server for a benchmark, as the tests start theirs
(Tests/FileshareTestSupport/PostgresServer.swift): initdb into a folder under
the run's temporary folder, reached only through a Unix socket there, no
password (trust), the role `fileshare`; as root, initdb and postgres run as the
user `postgres` through util-linux's setpriv. Debian's package: postgresql.

    with PostgresTemp(tmp) as pg:
        ... pg.url ...   # postgresql://fileshare@/postgres?host=SOCKET-FOLDER
"""

import glob
import os
import pwd
import shutil
import subprocess
import time

from benchcommon import BenchError, spawn, stop


def programs():
    """(initdb, postgres) of the newest PostgreSQL on PATH or in /usr/lib/postgresql/*/bin."""
    folders = os.environ.get("PATH", "").split(":")
    versions = sorted((p for p in glob.glob("/usr/lib/postgresql/*/bin") if p.split("/")[-2].isdigit()),
                      key=lambda p: int(p.split("/")[-2]), reverse=True)
    for folder in folders + versions:
        initdb, postgres = os.path.join(folder, "initdb"), os.path.join(folder, "postgres")
        if os.access(initdb, os.X_OK) and os.access(postgres, os.X_OK):
            return initdb, postgres
    raise BenchError("PostgreSQL is needed (Debian: apt-get install postgresql): no initdb and postgres found")


class PostgresTemp:
    def __init__(self, tmp, fsync=True):
        self.folder = os.path.join(tmp, "postgres")
        self.fsync = fsync
        self.proc = None

    @property
    def socket_folder(self):
        return os.path.join(self.folder, "socket")

    @property
    def url(self):
        return f"postgresql://fileshare@/postgres?host={self.socket_folder}"

    def __enter__(self):
        initdb, postgres = programs()
        prefix = []
        os.makedirs(self.socket_folder)
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                raise BenchError("running as root, and util-linux's setpriv is missing")
            entry = pwd.getpwnam("postgres")
            # The run's temporary folder is private (0700): postgres may pass through it.
            os.chmod(os.path.dirname(self.folder), 0o711)
            for path in (self.folder, self.socket_folder):
                os.chown(path, entry.pw_uid, entry.pw_gid)
            prefix = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
        data = os.path.join(self.folder, "data")
        made = subprocess.run(prefix + [initdb, "-A", "trust", "-U", "fileshare", "-D", data, "--no-sync",
                                        "-E", "UTF8", "--locale=C"], capture_output=True, text=True)
        if made.returncode != 0:
            raise BenchError(f"initdb failed: {made.stderr[-500:]}")
        # Durable as a real server is (fsync on, unless asked): the figures include the commits' flushes.
        log_path = os.path.join(self.folder, "server.log")
        with open(log_path, "wb") as out:
            self.proc = spawn(prefix + [postgres, "-D", data, "-k", self.socket_folder, "-c", "listen_addresses=",
                                        "-c", f"fsync={'on' if self.fsync else 'off'}", "-c", "max_connections=100"],
                              out, subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with open(os.path.join(data, "postmaster.pid")) as f:
                    lines = f.read().split("\n")
                if len(lines) > 7 and lines[7].strip() == "ready":
                    return self
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        with open(log_path, errors="replace") as f:
            raise BenchError(f"postgres did not start: {f.read()[-500:]}")

    def __exit__(self, *exc):
        if self.proc is not None:
            stop(self.proc, "postgres", grace=10)
            self.proc = None
        return False

    def version(self):
        initdb, _ = programs()
        out = subprocess.run([initdb, "--version"], capture_output=True, text=True).stdout.strip()
        return out.replace("initdb (PostgreSQL)", "PostgreSQL")
