"""The fake Gemini server (tests/fake_gemini) as a process, plus helpers to run the real imgmcp
binary with `--backend gemini` pointed at it.

FakeGemini starts `fake_gemini --port 0`, reads its "fake_gemini listening on HOST:PORT" line and
drives the control API (/_fake/script, /_fake/requests, /_fake/reset, /_fake/config). It stops on
close() (EOF on its stdin, then SIGKILL if it lingers), which tests register as a cleanup so the
process goes away on every path.
"""
import json
import os
import queue
import secrets
import signal
import subprocess
import threading
import time
import unittest
import urllib.error
import urllib.request

from mcp_harness import ServerProcess

MODEL = "gemini-3.1-flash-lite-image"
# A dummy key with a recognisable, unguessable body: searched for verbatim in everything imgmcp
# writes. It is not a real key and only ever reaches 127.0.0.1.
TEST_KEY = "AIzaTEST-imgmcp-" + secrets.token_hex(12)
START_TIMEOUT = 20.0
TEST_TIMEOUT = 120  # seconds; a watchdog fails a test that hangs longer than this


def fake_binary():
    path = os.environ.get("FAKE_GEMINI_BIN")
    if not path or not os.path.exists(path):
        raise RuntimeError("FAKE_GEMINI_BIN must point at the built fake_gemini binary")
    return path


class FakeGemini:
    def __init__(self, extra_args=()):
        self.proc = subprocess.Popen([fake_binary(), "--host", "127.0.0.1", "--port", "0",
                                      *extra_args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.stderr_chunks = []
        lines = queue.Queue()

        def read_stdout():
            for line in self.proc.stdout:
                lines.put(line.decode("utf-8", "replace").strip())
            lines.put(None)

        def read_stderr():
            for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
                self.stderr_chunks.append(chunk)

        threading.Thread(target=read_stdout, daemon=True).start()
        threading.Thread(target=read_stderr, daemon=True).start()
        try:
            line = lines.get(timeout=START_TIMEOUT)
        except queue.Empty:
            self.close()
            raise RuntimeError("fake_gemini did not report readiness")
        prefix = "fake_gemini listening on "
        if not line or not line.startswith(prefix):
            self.close()
            raise RuntimeError(f"unexpected fake_gemini readiness line: {line!r}")
        host_port = line[len(prefix):]
        self.base_url = f"http://{host_port}"

    # --- control API ----------------------------------------------------------------------
    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as res:
                return json.loads(res.read())
        except urllib.error.HTTPError as e:
            raise AssertionError(f"fake_gemini {path}: {e.code} {e.read()!r}")

    def script(self, *actions):
        return self._call("POST", "/_fake/script", list(actions))

    def configure(self, **config):
        return self._call("POST", "/_fake/config", config)

    def reset(self):
        return self._call("POST", "/_fake/reset", {})

    def requests(self):
        return self._call("GET", "/_fake/requests")

    def wait_for_requests(self, count, timeout=20.0):
        """Bounded polling until the fake has logged at least `count` generateContent calls."""
        deadline = time.monotonic() + timeout
        while True:
            log = self.requests()
            if len(log) >= count:
                return log
            if time.monotonic() > deadline:
                raise TimeoutError(f"fake_gemini saw {len(log)} requests, expected {count}")
            time.sleep(0.02)

    @property
    def stderr(self):
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()  # EOF on stdin stops the fake
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


class FakeGeminiTestCase(unittest.TestCase):
    """One fake per test class (reset before every test) and a per-test watchdog."""

    fake = None

    @classmethod
    def setUpClass(cls):
        cls.fake = FakeGemini()
        cls.addClassCleanup(cls.fake.close)

    def setUp(self):
        self.fake.reset()
        self._arm_watchdog()

    def _arm_watchdog(self):
        def on_alarm(signum, frame):
            raise TimeoutError(f"test exceeded {TEST_TIMEOUT}s")
        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(TEST_TIMEOUT)

        def disarm():
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        self.addCleanup(disarm)

    def gemini_env(self, key=TEST_KEY, base_url=None):
        return {"GEMINI_API_KEY": key, "GEMINI_BASE_URL": base_url or self.fake.base_url}

    def start_imgmcp(self, extra_args=(), env=None, backend="gemini", data_dir=None,
                     capabilities=None):
        """The real imgmcp binary (temp data dir, killed and removed on cleanup), initialized."""
        args = ["--backend", backend, *extra_args] if backend else list(extra_args)
        server = ServerProcess(args=args, env=self.gemini_env() if env is None else env,
                               data_dir=data_dir)
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize(capabilities=capabilities)
        return server


def progress_of(server, token):
    """Progress notifications for `token` that were read while waiting for other messages."""
    return [m["params"] for m in server.notifications("notifications/progress")
            if m["params"].get("progressToken") == token]


def current_version(server, session_id):
    resp = server.call_tool("get_image", {"session_id": session_id, "inline": "none",
                                          "include_history": False})
    result = resp["result"]
    if result.get("isError"):
        raise AssertionError(f"get_image failed: {result['content'][0]['text']}")
    return result["structuredContent"]["version"]


def files_under(root):
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            yield os.path.join(dirpath, name)
