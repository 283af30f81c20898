"""Replicas of the real imgmcp on one real PostgreSQL, and an MCP client over legacy HTTP sessions.

- pg_cluster(): a throwaway cluster (tests/pg/pg_cluster.py), removed on every path.
- Replica: `imgmcp --http 127.0.0.1:0 --store <url> --backend local` with its own data dir (its
  local copies): tests/support/imgmcp_process.py's HttpProcess, so stop() (SIGTERM), kill()
  (SIGKILL, like a crashed machine), close(); a context manager.
- LegacyClient: one Mcp-Session-Id on one replica; call() streams the answer (SSE or JSON) and
  hands progress notifications to a callback; listen() opens the GET stream for
  notifications (resource subscriptions). Standard library only.
- ModernClient: the same calls as MCP 2026-07-28 stateless requests — no initialize, no
  session; every POST carries its protocol version, client info and capabilities in `_meta`
  and the MCP-Protocol-Version / Mcp-Method / Mcp-Name headers, so any replica can answer it,
  and a tools/call mirrors its session_id into Mcp-Param-Session-Id (SEP-2243: the tools
  annotate it x-mcp-header), which a load balancer may hash to keep a session on one replica.
- scrape_metrics(): a replica's GET /metrics as {(name, labels): value}; sample() reads one.
- check_ordered_edits(): R1, edits of one session in a known ticket order across replicas whose
  backend is the Gemini fake; the first edit is held at the fake until every edit has its ticket.
"""
import base64
import concurrent.futures
import hashlib
import http.client
import itertools
import json
import os
import re
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pg"))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "demo"))
import pg_cluster  # noqa: E402,F401  (tests/pg/pg_cluster.py)
import pngio  # noqa: E402  (demo/pngio.py)
from imgmcp_process import HttpProcess, SseReader, binary_path  # noqa: E402,F401  (tests/support)

TIMEOUT = 60.0
LATEST = "2025-11-25"
MODERN = "2026-07-28"


SESSION_ID_HEADER = "Mcp-Param-Session-Id"  # session_id's x-mcp-header is "Session-Id"


def header_value(value):
    """A tool argument as a SEP-2243 client writes it into its Mcp-Param-* header (2026-07-28
    transports/streamable-http, "Value Encoding"): a string as it is, a boolean "true"/"false",
    a number in decimal — plain when that is visible ASCII without surrounding whitespace and not
    itself like the sentinel, else "=?base64?<Base64 of its UTF-8>?="."""
    text = value if isinstance(value, str) else json.dumps(value)
    plain = (text != "" and text == text.strip(" \t")
             and all(c == "\t" or " " <= c <= "~" for c in text)
             and not (text.startswith("=?base64?") and text.endswith("?=")))
    return text if plain else "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def mirrored_headers(method, params):
    """The Mcp-Param-* headers a SEP-2243 client sends with a request to imgmcp: a tools/call's
    session_id (when its arguments have one that is not null), as Mcp-Param-Session-Id."""
    arguments = (params or {}).get("arguments") if method == "tools/call" else None
    value = arguments.get("session_id") if isinstance(arguments, dict) else None
    if value is None or isinstance(value, (dict, list)):
        return {}
    return {SESSION_ID_HEADER: header_value(value)}


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def scrape_metrics(port, host="127.0.0.1", timeout=TIMEOUT):
    """The replica's GET /metrics (on its --http listener) as {(name, frozenset of (label,
    value)): value}."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/metrics", headers={"Host": f"{host}:{port}"})
        resp = conn.getresponse()
        text = resp.read().decode()
        if resp.status != 200:
            raise CallFailed(f"/metrics: HTTP {resp.status} {text[:200]!r}")
    except (OSError, http.client.HTTPException) as e:
        raise CallFailed(f"/metrics: {e!r}") from e
    finally:
        conn.close()
    samples = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m and not line.startswith("#"):
            labels = frozenset(LABEL.findall(m.group(2) or ""))
            samples[(m.group(1), labels)] = float(m.group(3))
    return samples


def sample(samples, name, **labels):
    """One value of scrape_metrics() (0 when the series is not there yet)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def tool_calls(samples, tool):
    """tools/call requests of `tool` a replica answered (any outcome)."""
    return sum(v for (name, labels), v in samples.items()
               if name == "mcp_server_operation_duration_seconds_count"
               and ("gen_ai_tool_name", tool) in labels)


class Replica(HttpProcess):
    """One imgmcp process serving HTTP, on the shared store `store_url`."""

    def __init__(self, store_url, *extra_args, env=None, name="replica", backend="local"):
        super().__init__("--backend", backend, "--store", store_url, *extra_args, env=env,
                         name=name, start_timeout=TIMEOUT)


class CallFailed(Exception):
    """The request did not get an answer (connection refused or reset, HTTP error)."""


class LegacyClient:
    """One legacy (2025-11-25) MCP session on one HTTP endpoint."""

    _ids = itertools.count(1)

    def __init__(self, port, host="127.0.0.1", timeout=TIMEOUT, token=None):
        self.host, self.port, self.timeout = host, port, timeout
        self.token = token  # an OAuth access token (or --auth-token), sent as a bearer token
        status, headers, body = self._post({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": LATEST, "capabilities": {},
                       "clientInfo": {"name": "test_replicas", "version": "1"}}})
        if status != 200:
            raise CallFailed(f"initialize: HTTP {status} {body[:200]!r}")
        self.session = headers["mcp-session-id"]
        status, _, _ = self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status != 202:
            raise CallFailed(f"notifications/initialized: HTTP {status}")

    def _headers(self, method=None, params=None):
        h = {"Host": f"{self.host}:{self.port}", "Content-Type": "application/json",
             "Accept": "application/json, text/event-stream"}
        if getattr(self, "session", None):
            h["Mcp-Session-Id"] = self.session
        if getattr(self, "token", None):
            h["Authorization"] = "Bearer " + self.token
        return h

    def _post(self, message):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request("POST", "/mcp", body=json.dumps(message).encode(),
                         headers=self._headers())
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise CallFailed(repr(e)) from e
        finally:
            conn.close()

    def _meta(self):
        """What every request of this client carries in params._meta."""
        return {}

    def call(self, method, params=None, on_progress=None):
        """Sends a request; returns its JSON-RPC response. on_progress(params) gets each
        notifications/progress on the way (the request then carries a progress token)."""
        rid = next(self._ids)
        params = dict(params or {})
        meta = self._meta()
        if on_progress is not None:
            meta["progressToken"] = f"p{rid}"
        if meta:
            params["_meta"] = meta
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request("POST", "/mcp", body=json.dumps(
                {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode(),
                headers=self._headers(method, params))
            resp = conn.getresponse()
            if resp.status != 200:
                raise CallFailed(f"{method}: HTTP {resp.status} {resp.read()[:300]!r}")
            if resp.getheader("Content-Type", "").startswith("application/json"):
                return json.loads(resp.read())
            reader = SseReader(resp)
            while True:
                event = reader.next_event()
                if event is None:
                    raise CallFailed(f"{method}: the stream ended without an answer")
                if not event.get("data"):
                    continue
                message = json.loads(event["data"])
                if message.get("id") == rid and "method" not in message:
                    return message
                if message.get("method") == "notifications/progress" and on_progress:
                    on_progress(message["params"])
        except (OSError, http.client.HTTPException) as e:
            raise CallFailed(f"{method}: {e!r}") from e
        finally:
            conn.close()

    def call_tool(self, name, arguments, on_progress=None):
        return self.call("tools/call", {"name": name, "arguments": arguments}, on_progress)

    def call_tool_raw(self, name, arguments):
        """A tools/call answered as JSON whatever its HTTP status (a refusal: 4xx): (status,
        headers with lower-case names, parsed body)."""
        params = {"name": name, "arguments": arguments}
        meta = self._meta()
        if meta:
            params["_meta"] = meta
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request("POST", "/mcp", body=json.dumps(
                {"jsonrpc": "2.0", "id": next(self._ids), "method": "tools/call",
                 "params": params}).encode(), headers=self._headers("tools/call", params))
            resp = conn.getresponse()
            return (resp.status, {k.lower(): v for k, v in resp.getheaders()},
                    json.loads(resp.read()))
        finally:
            conn.close()

    def listen(self):
        """Opens the GET stream; returns a Listener collecting its notifications."""
        return Listener(self)


class ModernClient(LegacyClient):
    """MCP 2026-07-28: stateless requests, no session; each call may go to any replica."""

    def __init__(self, port, host="127.0.0.1", timeout=TIMEOUT, mirror=True, token=None):
        self.host, self.port, self.timeout = host, port, timeout
        self.token = token
        self.session = None
        self.mirror = mirror  # False: no Mcp-Param-* headers (a client that predates SEP-2243)

    def _meta(self):
        return {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "test_replicas", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}

    def _headers(self, method=None, params=None):
        h = super()._headers()
        h["MCP-Protocol-Version"] = MODERN
        if method:
            h["Mcp-Method"] = method
        name = (params or {}).get("name") or (params or {}).get("uri")
        if name:
            h["Mcp-Name"] = name
        if self.mirror:
            h.update(mirrored_headers(method, params))
        return h

    def listen(self):
        raise NotImplementedError("modern clients listen with subscriptions/listen")


class Listener:
    """The session's GET stream, read on a thread; wait_for() finds a notification."""

    def __init__(self, client):
        self.conn = http.client.HTTPConnection(client.host, client.port, timeout=None)
        headers = client._headers()
        headers["Accept"] = "text/event-stream"
        self.conn.request("GET", "/mcp", headers=headers)
        resp = self.conn.getresponse()
        if resp.status != 200:
            raise CallFailed(f"GET stream: HTTP {resp.status}")
        self.messages = []
        self.cv = threading.Condition()
        self.reader = SseReader(resp)
        # The priming event: once it is here, the server has the stream and sends to it.
        if self.reader.next_event() is None:
            raise CallFailed("GET stream: ended at once")
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            while True:
                event = self.reader.next_event()
                if event is None:
                    return
                if event.get("data"):
                    with self.cv:
                        self.messages.append(json.loads(event["data"]))
                        self.cv.notify_all()
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            return  # closed

    def wait_for(self, predicate, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                for m in self.messages:
                    if predicate(m):
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"notification not seen in {timeout} s; saw "
                                         f"{self.messages!r}")
                self.cv.wait(left)

    def close(self):
        try:
            self.conn.sock.shutdown(2)
        except (OSError, AttributeError):
            pass
        self.conn.close()


def structured(response):
    result = response.get("result")
    if result is None:
        raise AssertionError(f"expected a result, got {response}")
    if result.get("isError"):
        raise AssertionError("tool failed: " + result["content"][0]["text"])
    return result["structuredContent"]


# --- Edits whose effect shows in the pixels ---------------------------------------------------
# Edit i draws a small black square at its own place on a white canvas, so an image shows
# exactly which edits it was made on top of.
SQUARE = 6       # px
GRID = 12        # squares per row
PITCH = 40       # px between squares


def square_at(i):
    return 20 + (i % GRID) * PITCH, 20 + (i // GRID) * PITCH


def draw_prompt(i):
    x, y = square_at(i)
    return f"draw square black at {x},{y} size {SQUARE}"


def read_version_file(result):
    """The bytes at `path` (the replica's local copy), checked against the sha256 reported."""
    with open(result["path"], "rb") as f:
        data = f.read()
    assert hashlib.sha256(data).hexdigest() == result["sha256"], result["path"]
    return data


def squares_drawn(png):
    """Indexes i whose square is black in the image (a white canvas otherwise)."""
    decoded = pngio.decode_png(png)
    drawn = set()
    for i in range(GRID * GRID):
        x, y = square_at(i)
        if y + SQUARE >= decoded[1]:
            break
        if pngio.pixel(decoded, x + SQUARE // 2, y + SQUARE // 2) == (0, 0, 0):
            drawn.add(i)
    return drawn


def check_ordered_edits(test, ports, session_id, n, fake, client=LegacyClient):
    """R1: n edits of one session, edit i sent to ports[i % len(ports)] (with a client of its
    own: a legacy session, or stateless 2026-07-28 requests) once edit i-1 holds its ticket — it
    reported progress (queued, or running) or answered — so the ticket order is the send order.
    They must commit as versions 2..n+1 in exactly that order, each made from the version before
    (parent, and pixels).

    The replicas' backend is the Gemini fake `fake` (FakeGemini): the first edit's call is held
    at a gate of the fake until every edit holds its ticket, so the line forms whatever the
    machine's speed — each later edit must say it waited (behind edits of its own process, or
    another imgmcp process) — and then drains in order."""
    first = client(ports[0])
    v1 = structured(first.call_tool("generate_image", {
        "session_id": session_id, "prompt": "solid white", "inline": "none"}))
    test.assertEqual(v1["version"], 1)
    gate = f"first edit of {session_id}"
    fake.script({"hold": gate})  # the next Gemini call, the first edit's, waits for release()
    results = [None] * n
    has_ticket = [threading.Event() for _ in range(n)]
    queued = [False] * n
    clients = [client(ports[i % len(ports)]) for i in range(n)]

    def on_progress(i, params):
        message = params.get("message", "")
        if "queued behind" in message or "another imgmcp process" in message:
            queued[i] = True
        has_ticket[i].set()

    def edit(i):
        try:
            results[i] = clients[i].call_tool(
                "edit_image", {"session_id": session_id, "prompt": draw_prompt(i),
                               "inline": "none"},
                on_progress=lambda params: on_progress(i, params))
        finally:
            has_ticket[i].set()

    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        futures = []
        try:
            for i in range(n):
                futures.append(pool.submit(edit, i))
                test.assertTrue(has_ticket[i].wait(TIMEOUT), f"edit {i} got no ticket")
            # Every edit holds its ticket and the first one's call is at the fake: let it go.
            test.assertEqual(fake.wait(requests=1, held=1, timeout=TIMEOUT)["held"], 1)
            test.assertEqual(results, [None] * n, "an edit answered while the first was held")
        finally:
            fake.release(gate)  # on every path, so no call is left waiting at the fake
        for f in futures:
            f.result(timeout=2 * TIMEOUT)
    for i, response in enumerate(results):
        s = structured(response)
        test.assertEqual(s["version"], i + 2, f"edit {i} (ticket order) became v{s['version']}")
        test.assertEqual(s.get("parent_version"), i + 1)
        test.assertEqual(s["prompt"], draw_prompt(i))
    # The line formed: every edit after the first waited for the ones before it.
    test.assertEqual([i for i in range(1, n) if not queued[i]], [],
                     "edits that never said they waited in line")
    test.assertEqual(len(fake.requests()), n + 1, "one Gemini call per generate and edit")
    history = structured(client(ports[-1]).call_tool(
        "get_image", {"session_id": session_id, "inline": "none", "history_limit": 100}))["history"]
    test.assertEqual([h["version"] for h in history], list(range(1, n + 2)))
    test.assertEqual([h["prompt"] for h in history[1:]], [draw_prompt(i) for i in range(n)])
    # Each version k shows exactly the squares of edits 0..k-2: made on top of the one before.
    for k in (2, n // 2 + 1, n + 1):
        got = structured(client(ports[k % len(ports)]).call_tool(
            "get_image", {"session_id": session_id, "version": k, "inline": "none",
                          "include_history": False}))
        test.assertEqual(squares_drawn(read_version_file(got)), set(range(k - 1)),
                         f"pixels of version {k}")


class SubscriptionListener(Listener):
    """A 2026-07-28 subscriptions/listen stream: a POST whose SSE answer stays open, read on a
    thread once its acknowledgement is here (`acknowledged`: what the server honours).
    `notifications` is the request's filter, e.g. {"taskIds": [...]}; `client` gives the
    request's _meta and headers (a ModernClient, or one declaring the tasks extension)."""

    def __init__(self, client, notifications):
        self.conn = http.client.HTTPConnection(client.host, client.port, timeout=client.timeout)
        params = {"notifications": notifications, "_meta": client._meta()}
        message = {"jsonrpc": "2.0", "id": f"listen-{next(LegacyClient._ids)}",
                   "method": "subscriptions/listen", "params": params}
        self.conn.request("POST", "/mcp", body=json.dumps(message).encode(),
                          headers=client._headers("subscriptions/listen", params))
        resp = self.conn.getresponse()
        if resp.status != 200 or not resp.getheader("Content-Type", "").startswith(
                "text/event-stream"):
            raise CallFailed(f"subscriptions/listen: HTTP {resp.status} {resp.read()[:300]!r}")
        self.messages = []
        self.cv = threading.Condition()
        self.reader = SseReader(resp)
        self.acknowledged = None
        while self.acknowledged is None:
            event = self.reader.next_event()
            if event is None:
                raise CallFailed("subscriptions/listen: the stream ended before its acknowledgement")
            if event.get("data"):
                m = json.loads(event["data"])
                if m.get("method") == "notifications/subscriptions/acknowledged":
                    self.acknowledged = m["params"]
                elif "error" in m:
                    raise CallFailed(f"subscriptions/listen: {m['error']}")
        self.conn.sock.settimeout(None)  # from now on the stream may stay quiet for long
        threading.Thread(target=self._read, daemon=True).start()

    def task_status(self, task_id, status, timeout=TIMEOUT):
        """The notifications/tasks of `task_id` with `status` (waits for it)."""
        return self.wait_for(lambda m: m.get("method") == "notifications/tasks"
                             and m["params"].get("taskId") == task_id
                             and m["params"].get("status") == status, timeout)["params"]
