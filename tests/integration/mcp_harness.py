"""Spawns the real imgmcp binary over real pipes and speaks MCP to it.

Every test gets a fresh temporary data dir, a per-call timeout, and the process is killed and
the directory removed on every path (ServerProcess is a context manager).
"""
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from imgmcp_process import binary_path, clean_env  # noqa: E402,F401  (tests/support)

DEFAULT_TIMEOUT = 20.0
LATEST_PROTOCOL = "2025-11-25"


class ServerProcess:
    """One imgmcp process. stdout lines are parsed as JSON and queued; stderr is collected."""

    def __init__(self, args=(), env=None, data_dir=None, cwd=None):
        self._own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="imgmcp-test-")
        self.args = [binary_path(), "--data-dir", self.data_dir, *args]
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=clean_env(env),
                                     cwd=cwd or self.data_dir)
        self.lines = queue.Queue()
        self.raw_stdout = []  # every stdout line as bytes, for "only JSON on stdout" checks
        self.stderr_chunks = []
        self._stderr_changed = threading.Condition()  # notified on each stderr chunk and at EOF
        self._stderr_done = False
        self.pending = []  # messages read while waiting for something else
        self._next_id = 1
        self._lock = threading.Lock()  # guards writes to stdin
        self._readers = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self._readers:
            reader.start()

    # --- plumbing -------------------------------------------------------------------------
    def _read_stdout(self):
        for line in self.proc.stdout:
            self.raw_stdout.append(line)
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                self.lines.put({"__not_json__": line})
        self.lines.put(None)

    def _read_stderr(self):
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            with self._stderr_changed:
                self.stderr_chunks.append(chunk)
                self._stderr_changed.notify_all()
        with self._stderr_changed:
            self._stderr_done = True
            self._stderr_changed.notify_all()

    @property
    def stderr(self):
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def wait_for_stderr(self, needle, timeout=DEFAULT_TIMEOUT):
        """stderr so far, once it contains `needle` (or the process closed it, or `timeout`
        seconds passed: the caller's assertion then shows what was there)."""
        with self._stderr_changed:
            self._stderr_changed.wait_for(lambda: needle in self.stderr or self._stderr_done,
                                          timeout)
            return self.stderr

    def send_raw(self, data: bytes):
        with self._lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send_raw_chunked(self, data: bytes, rng, max_chunk=65536):
        """Writes data in random-sized small pieces (1..max_chunk bytes), flushing each."""
        pos = 0
        while pos < len(data):
            n = rng.randint(1, max_chunk)
            self.send_raw(data[pos:pos + n])
            pos += n

    def send(self, message):
        self.send_raw(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def next_id(self):
        with self._lock:
            i = self._next_id
            self._next_id += 1
            return i

    def recv(self, timeout=DEFAULT_TIMEOUT):
        """Next message from the server (from the backlog first). Raises on timeout or EOF."""
        if self.pending:
            return self.pending.pop(0)
        try:
            msg = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message from imgmcp within {timeout}s; stderr:\n{self.stderr}")
        if msg is None:
            self.lines.put(None)
            raise EOFError(f"imgmcp closed stdout; stderr:\n{self.stderr}")
        if "__not_json__" in msg:
            raise AssertionError(f"non-JSON line on stdout: {msg['__not_json__']!r}")
        return msg

    def wait_for(self, predicate, timeout=DEFAULT_TIMEOUT):
        """Returns the first message matching predicate, looking through the backlog first;
        other messages are kept (in order) for later recv()/wait_for()."""
        for i, msg in enumerate(self.pending):
            if predicate(msg):
                return self.pending.pop(i)
        deadline = time.monotonic() + timeout
        skipped = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"expected message not seen within {timeout}s; "
                                       f"saw {skipped!r}; stderr:\n{self.stderr}")
                msg = self._pop_pending_or_queue(left)
                if predicate(msg):
                    return msg
                skipped.append(msg)
        finally:
            self.pending = self.pending + skipped

    def _pop_pending_or_queue(self, timeout):
        try:
            msg = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message from imgmcp within {timeout}s; stderr:\n{self.stderr}")
        if msg is None:
            self.lines.put(None)
            raise EOFError(f"imgmcp closed stdout; stderr:\n{self.stderr}")
        if "__not_json__" in msg:
            raise AssertionError(f"non-JSON line on stdout: {msg['__not_json__']!r}")
        return msg

    def take(self, predicate, timeout=DEFAULT_TIMEOUT):
        """Same as wait_for (kept for the protocol tests)."""
        return self.wait_for(predicate, timeout)

    def drain_until_eof(self, timeout=DEFAULT_TIMEOUT):
        """Moves every remaining stdout message to the backlog until the server closes stdout."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"imgmcp kept stdout open for {timeout}s")
            try:
                self.pending.append(self._pop_pending_or_queue(left))
            except EOFError:
                return

    def notifications(self, method):
        """Notifications with this method that were read while waiting for responses."""
        return [m for m in self.pending if m.get("method") == method and "id" not in m]

    # --- MCP ------------------------------------------------------------------------------
    def request(self, method, params=None, timeout=DEFAULT_TIMEOUT, meta=None):
        """Sends a request and returns its response (notifications in between are kept)."""
        rid = self.next_id()
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None or meta is not None:
            msg["params"] = dict(params or {})
            if meta:
                msg["params"]["_meta"] = meta
        self.send(msg)
        return self.wait_for(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def initialize(self, version=LATEST_PROTOCOL, capabilities=None):
        resp = self.request("initialize", {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "imgmcp-tests", "version": "0"},
        })
        if "result" not in resp:
            raise AssertionError(f"initialize failed: {resp}")
        self.notify("notifications/initialized")
        return resp["result"]

    def call_tool(self, name, arguments=None, timeout=DEFAULT_TIMEOUT, meta=None):
        return self.request("tools/call", {"name": name, "arguments": arguments or {}},
                            timeout=timeout, meta=meta)

    # --- lifecycle ------------------------------------------------------------------------
    def close_stdin(self):
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def wait_exit(self, timeout=DEFAULT_TIMEOUT):
        return self.proc.wait(timeout=timeout)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close_stdin()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        # The process is gone: its readers reach EOF now. Closing a stream under a reader would
        # end it with an error instead.
        for reader in self._readers:
            reader.join(timeout=5)
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
        return False


def temp_dir(prefix="imgmcp-test-"):
    return tempfile.mkdtemp(prefix=prefix)
