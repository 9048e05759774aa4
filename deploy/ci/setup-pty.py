#!/usr/bin/env python3
"""notebridge setup through a pseudo-terminal (deploy/ci/setup-pty.sh).

Runs `notebridge setup` in a pty as a person would, with wrong answers on
the way: a choice that is not offered, a sync login the WebDAV stand-in
refuses (SYNC_AUTH_FAILED), then the right one. Checks that each refusal is
reported and asked again, that the hidden answers are never echoed, and
that .env and the sync secret are written 0600 with the answers.

Usage: setup-pty.py BINARY WORKDIR
"""
import http.server
import os
import pty
import select
import sys
import termios
import threading
import time

binary, work = sys.argv[1], sys.argv[2]
PASSWORD = "ci-sync-password-right"
WRONG = "ci-sync-password-wrong"


class DAV(http.server.BaseHTTPRequestHandler):
    """PROPFIND /dav/joplin: 207 for me/PASSWORD, 401 otherwise."""

    def do_PROPFIND(self):
        import base64
        want = "Basic " + base64.b64encode(f"me:{PASSWORD}".encode()).decode()
        ok = self.path == "/dav/joplin" and self.headers.get("Authorization") == want
        self.send_response(207 if ok else 401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


dav = http.server.ThreadingHTTPServer(("127.0.0.1", 0), DAV)
threading.Thread(target=dav.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{dav.server_address[1]}/dav/joplin"

env_path, secrets = os.path.join(work, ".env"), os.path.join(work, "secrets")
os.makedirs(secrets, mode=0o700, exist_ok=True)
pid, fd = pty.fork()
if pid == 0:
    os.execv(binary, [binary, "setup", "--env", env_path, "--secrets-dir", secrets])

out = b""


def until(marker, timeout=20):
    """Reads the terminal until marker appears after what was read so far."""
    global out
    start, end = len(out), time.time() + timeout
    while marker.encode() not in out[start:]:
        if time.time() > end:
            sys.exit(f"setup-pty: no {marker!r} on the terminal; it shows:\n{out.decode(errors='replace')}")
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break


def answer(prompt, text):
    until(prompt)
    os.write(fd, text.encode() + b"\r")


def hidden_answer(prompt, text, timeout=20):
    """Answers a hidden prompt once the terminal has stopped echoing (the
    prompt may show a moment before the program turns echo off): the
    answer is typed after the state changes, never after a guessed time."""
    global out
    until(prompt)
    end = time.time() + timeout
    while termios.tcgetattr(fd)[3] & termios.ECHO:
        if time.time() > end:
            sys.exit(f"setup-pty: the terminal still echoes at {prompt!r}: the answer would show")
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            out += os.read(fd, 4096)
    os.write(fd, text.encode() + b"\r")


answer("Reached by", "ftp")
answer("Reached by", "local")
answer("Sync target", "webdav")
answer("Its URL", url)
answer("The user name", "me")
hidden_answer("The password", WRONG)
answer("Its URL", url)
answer("The user name", "me")
hidden_answer("The password", PASSWORD)
answer("end-to-end encrypted", "no")
answer("Search by meaning", "off")
until("Start the stack")
_, status = os.waitpid(pid, 0)
text = out.decode(errors="replace")

checks = [
    (os.waitstatus_to_exitcode(status) == 0, "setup exits 0"),
    ("SETUP_BAD_ANSWER" in text, "a choice not offered is reported (SETUP_BAD_ANSWER) and asked again"),
    ("SYNC_AUTH_FAILED" in text, "the refused login is reported (SYNC_AUTH_FAILED) and asked again"),
    ("the target accepted the login" in text, "the right login is accepted"),
    (PASSWORD not in text and WRONG not in text, "no password is echoed"),
]
for path in (env_path, os.path.join(secrets, "sync-password")):
    checks.append((os.path.exists(path) and os.stat(path).st_mode & 0o777 == 0o600, f"{os.path.basename(path)} is 0600"))
env = open(env_path).read() if os.path.exists(env_path) else ""
checks.append(("NOTEBRIDGE_SYNC_TARGET=webdav\n" in env and f"NOTEBRIDGE_SYNC_URL={url}\n" in env and PASSWORD not in env,
               ".env holds the target and URL, not the password"))
secret = open(os.path.join(secrets, "sync-password")).read() if os.path.exists(os.path.join(secrets, "sync-password")) else ""
checks.append((secret == PASSWORD + "\n", "the secret holds the right password"))
failed = [what for ok, what in checks if not ok]
for ok, what in checks:
    print(("ok    " if ok else "FAIL  ") + what)
if failed:
    print(text)
    sys.exit(1)
print(f"setup-pty: all {len(checks)} checks passed")
