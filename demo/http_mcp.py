"""imgmcp over Streamable HTTP for the demo's --http mode (standard library only).

HttpImgmcp runs `imgmcp --http HOST:PORT` on a data dir and knows its /mcp and /gallery URLs.
HttpMcpSession is one MCP session on it with the same calls the demo makes over stdio
(initialize, next_id, send, wait_for, call_tool), so the demo's steps read the same in both
modes. send() returns once the server has taken the request (its response has begun), so
requests sent one after another without waiting for their results still reach the server in
the order sent, each on its own connection.
"""
import http.client
import json
import queue
import re
import signal
import subprocess
import threading
import time

LATEST_PROTOCOL = "2025-11-25"
LISTENING = re.compile(r"listening on (http://([^\s/]+):(\d+))/mcp")


class HttpImgmcp:
    """One `imgmcp --http` process; stop() ends it (SIGTERM) and waits."""

    def __init__(self, binary, listen, data_dir, token=None, env=None, timeout=20.0):
        args = [binary, "--http", listen, "--data-dir", data_dir]
        if token:
            args += ["--auth-token", token]
        self.token = token
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env)
        self.stderr_lines = []
        self.base_url = None
        found = threading.Event()

        def pump():
            for raw in iter(self.proc.stderr.readline, b""):
                line = raw.decode("utf-8", "replace")
                self.stderr_lines.append(line)
                m = LISTENING.search(line)
                if m and self.base_url is None:
                    self.base_url, self.host, self.port = m.group(1), m.group(2), int(m.group(3))
                    found.set()
            found.set()

        threading.Thread(target=pump, daemon=True).start()
        if not found.wait(timeout) or self.base_url is None:
            self.stop()
            raise RuntimeError("imgmcp did not start listening:\n" + "".join(self.stderr_lines))

    @property
    def gallery_url(self):
        return self.base_url + "/gallery"

    def wait(self):
        """Blocks until the server exits or this process gets SIGINT/SIGTERM."""
        stop = threading.Event()
        previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
        threading.Thread(target=lambda: (self.proc.wait(), stop.set()), daemon=True).start()
        try:
            stop.wait()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    def stop(self, timeout=10.0):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()


class HttpMcpSession:
    """One MCP session over Streamable HTTP, shaped like the test harness's ServerProcess."""

    def __init__(self, server, timeout=20.0):
        self.server = server
        self.timeout = timeout
        self.session_id = None
        self.messages = queue.Queue()  # JSON-RPC messages from every response, in arrival order
        self.pending = []
        self._next_id = 1
        self._lock = threading.Lock()
        self._readers = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for t in self._readers:
            t.join(timeout=self.timeout)
        if self.session_id:
            try:
                self._open("DELETE", None).read()
            except OSError:
                pass
        return False

    def next_id(self):
        with self._lock:
            rid = self._next_id
            self._next_id += 1
            return rid

    def _open(self, method, body):
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=300)
        headers = {"Accept": "application/json, text/event-stream",
                   "Content-Type": "application/json"}
        if self.server.token:
            headers["Authorization"] = "Bearer " + self.server.token
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
            headers["MCP-Protocol-Version"] = LATEST_PROTOCOL
        conn.request(method, "/mcp", body=None if body is None else json.dumps(body).encode(),
                     headers=headers)
        resp = conn.getresponse()
        if resp.status >= 400:
            detail = resp.read().decode("utf-8", "replace")
            conn.close()
            raise RuntimeError(f"{method} /mcp: HTTP {resp.status}: {detail}")
        return resp

    def _drain(self, resp):
        """Queues every JSON-RPC message of one response (a JSON body or an event stream)."""
        try:
            if "text/event-stream" in (resp.getheader("Content-Type") or ""):
                data = []
                for raw in resp:
                    line = raw.decode("utf-8").rstrip("\r\n")
                    if line.startswith("data:"):
                        data.append(line[5:].lstrip(" "))
                    elif line == "" and data:
                        text = "\n".join(data)
                        data = []
                        if text.strip():
                            self.messages.put(json.loads(text))
            else:
                body = resp.read()
                if body.strip():
                    self.messages.put(json.loads(body))
        finally:
            resp.close()

    def send(self, message):
        resp = self._open("POST", message)
        if message.get("method") == "initialize":
            self.session_id = resp.getheader("Mcp-Session-Id")
        if "id" not in message:
            resp.read()
            resp.close()
            return
        reader = threading.Thread(target=self._drain, args=(resp,), daemon=True)
        reader.start()
        self._readers.append(reader)

    def wait_for(self, predicate, timeout=None):
        for i, msg in enumerate(self.pending):
            if predicate(msg):
                return self.pending.pop(i)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("expected message not seen; server stderr:\n" +
                                   "".join(self.server.stderr_lines[-20:]))
            try:
                msg = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if predicate(msg):
                return msg
            self.pending.append(msg)

    def request(self, method, params=None, timeout=None):
        rid = self.next_id()
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        return self.wait_for(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def initialize(self):
        resp = self.request("initialize", {"protocolVersion": LATEST_PROTOCOL, "capabilities": {},
                                           "clientInfo": {"name": "imgmcp-demo", "version": "0"}})
        if "result" not in resp:
            raise RuntimeError(f"initialize failed: {resp}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return resp["result"]

    def call_tool(self, name, arguments=None, timeout=None):
        return self.request("tools/call", {"name": name, "arguments": arguments or {}}, timeout)
