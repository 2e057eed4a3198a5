#!/usr/bin/env python3
"""A real tus 1.0 client (tuspy, from PyPI) against `fileshare serve`'s /api/tus/.

    python3 Tests/Clients/tus_client.py --url http://127.0.0.1:PORT/ --folder DIR \
        --user U --password P

Interrupts an upload halfway, resumes it with a new client from what the
server says it has (HEAD), and finishes it; checks the file in the shared
folder byte for byte, and that nothing was there before the last byte. Then
a wrong offset (409), and termination (DELETE, then HEAD finds nothing).
Prints one line per step; exits 0 when all pass, 1 on a failure, and 77
when tuspy is missing.
"""

import argparse
import base64
import hashlib
import os
import shutil
import tempfile
import sys
import urllib.error
import urllib.request

try:
    from tusclient import client as tus
except ImportError:
    print("tuspy is missing (python3 -m pip install tuspy)", file=sys.stderr)
    sys.exit(77)


def request(method, url, headers, data=None):
    """A raw request; returns (status, headers)."""
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    args = parser.parse_args()
    endpoint = args.url.rstrip("/") + "/api/tus/"
    auth = "Basic " + base64.b64encode(f"{args.user}:{args.password}".encode()).decode()
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            failures.append(what)

    # 5 MiB and a bit, in 1 MiB chunks: interrupted after two.
    content = os.urandom(5 * 1024 * 1024 + 123)
    source = os.path.join(tempfile.mkdtemp(prefix="tus-client-"), "source.bin")
    with open(source, "wb") as f:
        f.write(content)
    target = os.path.join(args.folder, "Uploads", "tus ünïcode.bin")
    client = tus.TusClient(endpoint, headers={"Authorization": auth})
    first = client.uploader(source, chunk_size=1 << 20, metadata={"path": "Uploads/tus ünïcode.bin"})
    first.upload(stop_at=2 << 20)
    check(first.offset == 2 << 20, f"interrupted at {first.offset}")
    check(not os.path.exists(target), "nothing in the folder before the last byte")

    # A new client, as after a crash: it asks the server where to go on.
    again = tus.TusClient(endpoint, headers={"Authorization": auth})
    resumed = again.uploader(source, chunk_size=1 << 20, url=first.url)
    check(resumed.offset == 2 << 20, f"resumed at the server's offset {resumed.offset}")
    resumed.upload()
    check(resumed.offset == len(content), f"finished at {resumed.offset}")
    with open(target, "rb") as f:
        landed = f.read()
    check(hashlib.sha256(landed).digest() == hashlib.sha256(content).digest(), "the file is byte for byte the same")
    status, _ = request("HEAD", first.url, {"Authorization": auth, "Tus-Resumable": "1.0.0"})
    check(status == 404, f"a finished upload is gone ({status})")

    # A wrong offset is refused with 409 and the server's offset.
    other = tus.TusClient(endpoint, headers={"Authorization": auth}).uploader(
        source, chunk_size=1 << 20, metadata={"path": "Uploads/second.bin"})
    other.upload(stop_at=1 << 20)
    status, headers = request(
        "PATCH", other.url,
        {"Authorization": auth, "Tus-Resumable": "1.0.0", "Upload-Offset": "0",
         "Content-Type": "application/offset+octet-stream"},
        data=content[:100])
    check(status == 409 and headers.get("Upload-Offset") == str(1 << 20),
          f"a wrong offset: {status}, the server's offset {headers.get('Upload-Offset')}")

    # Termination: the upload and its bytes are gone.
    status, headers = request("DELETE", other.url, {"Authorization": auth, "Tus-Resumable": "1.0.0"})
    check(status == 204 and headers.get("Tus-Resumable") == "1.0.0", f"terminated ({status})")
    status, _ = request("HEAD", other.url, {"Authorization": auth, "Tus-Resumable": "1.0.0"})
    check(status == 404, f"a terminated upload is gone ({status})")
    check(not os.path.exists(os.path.join(args.folder, "Uploads", "second.bin")), "nothing of it in the folder")

    shutil.rmtree(os.path.dirname(source))
    print("passed" if not failures else f"{len(failures)} failed", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
