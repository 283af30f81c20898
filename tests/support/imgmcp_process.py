"""The real imgmcp binary as a child process over HTTP, for every Python test folder (standard
library only). Its Node twin is imgmcp_process.mjs beside it.

- binary_path(): the binary under test ($IMGMCP_BIN, set by ctest).
- clean_env(extra): the test's environment without a Gemini key, auth token or store of the
  caller's, plus `extra`.
- HttpProcess: `imgmcp --http 127.0.0.1:0 ARGS` with a temporary data dir (its working directory
  too); the OS picks the port, read back from the "listening on http://HOST:PORT/mcp" stderr line.
  stop() is SIGTERM and fails loudly when the process does not exit; kill() is SIGKILL (a crashed
  machine); close() stops it and removes what it made. A context manager.
- SseReader: text/event-stream from an http.client response, event by event.

Import it with tests/support on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
"""
import http.client
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading

START_TIMEOUT = 20.0  # seconds from spawn to the "listening on" line
LISTENING = re.compile(rb"listening on (http://([^\s/]+):(\d+)/mcp)")
# What a test's server never inherits from the environment the tests run in.
CALLER_SETTINGS = ("GEMINI_API_KEY", "IMGMCP_AUTH_TOKEN", "IMGMCP_STORE",
                   "IMGMCP_REQUEST_STATE_KEY",
                   # Vertex AI, credentials, proxies and CAs: a test names what it uses.
                   "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS",
                   "GOOGLE_API_KEY", "GCE_METADATA_HOST", "CLOUDSDK_CONFIG",
                   "IMGMCP_VERTEX_BASE_URL", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
                   "http_proxy", "NO_PROXY", "no_proxy", "SSL_CERT_FILE")


def binary_path():
    path = os.environ.get("IMGMCP_BIN")
    if not path or not os.path.exists(path):
        raise RuntimeError("IMGMCP_BIN must point at the built imgmcp binary")
    return path


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if k not in CALLER_SETTINGS}
    env.update(extra or {})
    return env


class HttpProcess:
    """One `imgmcp --http 127.0.0.1:0` process. `args` follow the --http and --data-dir flags."""

    def __init__(self, *args, env=None, name="imgmcp", data_dir=None, binary=None,
                 start_timeout=START_TIMEOUT):
        self.name = name
        self._own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="imgmcp-http-")
        self.proc = subprocess.Popen(
            [binary or binary_path(), "--http", "127.0.0.1:0", "--data-dir", self.data_dir,
             *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=clean_env(env), cwd=self.data_dir)
        self.stderr_lines = []
        self._stderr_changed = threading.Condition()  # notified on each stderr line and at EOF
        self.host = self.port = self.url = None
        self._found = threading.Event()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()
        # Set by the line, or by the end of stderr when the process dies first.
        if not self._found.wait(start_timeout) or self.port is None:
            self.close(check=False)
            raise RuntimeError(f"{name} did not report its port:\n{self.stderr}")

    def _pump(self):
        for line in iter(self.proc.stderr.readline, b""):
            with self._stderr_changed:
                self.stderr_lines.append(line)
                self._stderr_changed.notify_all()
            m = LISTENING.search(line)
            if m and self.port is None:
                self.url = m.group(1).decode()
                self.host, self.port = m.group(2).decode(), int(m.group(3))
                self._found.set()
        self._found.set()
        with self._stderr_changed:
            self._stderr_changed.notify_all()

    @property
    def stderr(self):
        return b"".join(self.stderr_lines).decode("utf-8", "replace")

    def wait_for_stderr(self, predicate, timeout=START_TIMEOUT):
        """Waits until predicate(stderr text) holds (its lines arrive on a reader thread);
        returns the text, which fails the predicate only when `timeout` passed first."""
        with self._stderr_changed:
            self._stderr_changed.wait_for(lambda: predicate(self.stderr), timeout)
            return self.stderr

    def connection(self, timeout=START_TIMEOUT):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        """SIGKILL: the process dies mid-whatever, as on a crashed machine."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self, timeout=20.0):
        """SIGTERM; returns the exit status. A process still running `timeout` seconds later is
        killed and the test fails: a stop that hangs is a bug."""
        return self._terminate(timeout, check=True)

    def _terminate(self, timeout, check):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                if check:
                    raise AssertionError(f"{self.name} did not exit within {timeout} s of "
                                         "SIGTERM")
        return self.proc.returncode

    def close(self, timeout=20.0, check=True):
        """Stops the process (see stop(); check=False: no failure when it hangs, it is killed)
        and removes its data dir if this object made it. Returns the exit status."""
        try:
            return self._terminate(timeout, check)
        finally:
            self.kill()
            self._reader.join(timeout=5)  # at EOF now; closing stderr under it would be an error
            if self.proc.stderr:
                self.proc.stderr.close()
            if self._own_dir:
                shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close(check=exc[0] is None)
        return False


class SseReader:
    """text/event-stream from an http.client response, event by event."""

    def __init__(self, resp):
        self.resp = resp
        self.buffer = b""

    def next_event(self):
        """The next event as a dict (id, data, retry, event), or None at the end of the stream.
        Comment lines are skipped; an event with no fields is not returned."""
        while True:
            sep = self.buffer.find(b"\n\n")
            if sep >= 0:
                block, self.buffer = self.buffer[:sep], self.buffer[sep + 2:]
                event = {}
                for line in block.decode().split("\n"):
                    if line.startswith(":"):
                        continue
                    key, _, value = line.partition(":")
                    event[key] = value[1:] if value.startswith(" ") else value
                if event:
                    return event
                continue
            chunk = self.resp.read1(65536)
            if not chunk:
                return None
            self.buffer += chunk

    def events(self):
        """Every remaining event, until the stream ends."""
        while True:
            event = self.next_event()
            if event is None:
                return
            yield event
