#!/usr/bin/env python3
"""imgmcp vs the npm peers vs the physical floor, in one run on one machine.

One MCP client (this file, Python stdlib, newline-delimited JSON-RPC over stdio) drives every
server. All Gemini traffic goes to tests/fake_gemini, which answers with a fixed image generated
here at run time. Prints one markdown table and writes it to bench/RESULTS.md. It reports; it never
fails on a number (exit status is non-zero only when the harness itself cannot run).

Usage: bench/harness/run.py --imgmcp BIN --fake-gemini BIN [--out bench/RESULTS.md] [--quick]
       [--only P1,…,R1,R2,C1,M1,M2,M3,M4,T1] [--chain-bench BIN] [--merge]
       [--baseline-imgmcp BIN --baseline-label TEXT]   (P3, P6 and M2–M4 also against an earlier build)
"""

import argparse
import base64
import http.client
import json
import os
import platform
import queue
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

from task_rows import run_task_rows  # T1, MCP Tasks

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
NODE_MODULES = os.path.join(BENCH, "node_modules")
PROTOCOL = "2025-06-18"
MODERN_PROTOCOL = "2026-07-28"  # the stateless revision: server/discover, _meta on every request
FAKE_KEY = "bench-fake-key"


# ---- images (deterministic, generated per run; nothing big is committed) ----------------------

def png_bytes(width, height, rows, level=1):
    """Encodes RGB rows (bytes, 3*width each) as a PNG; filter 0 on every row."""
    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data +
                struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))
    raw = b"".join(b"\x00" + r for r in rows)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, level)) +
            chunk(b"IEND", b""))


def noisy_png(width, height, seed):
    """Pure noise: compresses to about width*height*3 bytes (a ~2.8 MB answer at 1024x912)."""
    rng = random.Random(seed)
    return png_bytes(width, height, [rng.randbytes(width * 3) for _ in range(height)])


def textured_png(width, height, seed):
    """A gradient with low-amplitude noise: a realistic-size photo-like PNG to preview."""
    rng = random.Random(seed)
    rows = []
    low_bits = bytes(b & 0x03 for b in range(256))
    for y in range(height):
        base = bytes(((x * 255 // width) if c == 0 else (y * 255 // height) if c == 1 else 128)
                     & 0xFC for x in range(width) for c in range(3)) if y % 64 == 0 else base
        noise = rng.randbytes(width * 3).translate(low_bits)
        rows.append((int.from_bytes(base, "big") | int.from_bytes(noise, "big"))
                    .to_bytes(width * 3, "big"))
    return png_bytes(width, height, rows, level=6)


def small_png():
    return png_bytes(64, 64, [bytes(v for x in range(64) for v in ((x * 4) & 255, (y * 4) & 255, 90))
                              for y in range(64)])


# ---- processes ------------------------------------------------------------------------------

def rss_kb(pid):
    """Resident set of a process and its children (Node peers may fork nothing, but be fair)."""
    total = 0
    pids = [pid]
    try:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                             text=True).stdout
        pids += [int(p) for p in out.split()]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


class FakeGemini:
    def __init__(self, binary, image_file, workdir):
        self.log = open(os.path.join(workdir, "fake_gemini.log"), "wb")
        self.proc = subprocess.Popen([binary, "--port", "0", "--fixed-image-file", image_file],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log)
        line = self.proc.stdout.readline().decode()
        if "listening on" not in line:
            raise RuntimeError("fake_gemini did not start: " + line)
        self.hostport = line.strip().rsplit(" ", 1)[1]
        self.url = "http://" + self.hostport

    def configure(self, **fields):
        host, port = self.hostport.split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("POST", "/_fake/config", json.dumps(fields),
                     {"Content-Type": "application/json"})
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        if resp.status != 200:
            raise RuntimeError(f"fake config {fields}: {resp.status} {body[:200]!r}")

    def raw_generate_ms(self):
        """One generateContent straight to the fake: its own share of every server's P1."""
        host, port = self.hostport.split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "a cat"}]}]})
        t0 = time.perf_counter()
        conn.request("POST", "/v1beta/models/gemini-2.5-flash-image:generateContent", body,
                     {"Content-Type": "application/json", "x-goog-api-key": FAKE_KEY})
        data = conn.getresponse().read()
        dt = (time.perf_counter() - t0) * 1000
        conn.close()
        return dt, len(data)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(5)
        except Exception:  # noqa: BLE001 - best effort teardown
            self.proc.kill()
        self.log.close()


def read_lines(fd):
    """Yields complete lines from a pipe, scanning only new bytes for newlines."""
    parts = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return
        start = 0
        while True:
            k = chunk.find(b"\n", start)
            if k < 0:
                break
            parts.append(chunk[start:k + 1])
            yield parts[0] if len(parts) == 1 else b"".join(parts)
            parts = []
            start = k + 1
        if start < len(chunk):
            parts.append(chunk[start:])


def widen_pipe(f):
    """A 1 MiB pipe (Linux) so a multi-MB answer is not paced by 64 KiB wake-ups; same for all."""
    try:
        import fcntl
        fcntl.fcntl(f.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
    except (OSError, AttributeError, ImportError):
        pass


class LatencyProxy:
    """Forwards to fake_gemini after a fixed delay, with a thread per request.

    fake_gemini's own --latency-ms sleeps inside cpp-httplib's default pool of 8 threads, so 32
    concurrent sessions would measure the fake's pool, not the server under test. This shim adds
    the 200 ms of P5 in front of the fake (which then answers at once) with no such limit.
    """

    def __init__(self, target_hostport, delay_s):
        import http.server
        host, port = target_hostport.split(":")
        delay = delay_s

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                time.sleep(delay)
                conn = http.client.HTTPConnection(host, int(port), timeout=60)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() in ("content-type", "x-goog-api-key")}
                conn.request("POST", self.path, body, headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                self.send_response(resp.status)
                self.send_header("Content-Type", resp.getheader("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            # socketserver's default listen backlog is 5: 32 sessions connecting at once overflow
            # it, and each dropped SYN costs the client a 1 s retransmit: a harness stall that
            # P5 would charge to the server under test.
            request_queue_size = 256

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class McpError(Exception):
    pass


class StdioClient:
    """Newline-delimited JSON-RPC over a child's stdin/stdout; a reader thread routes answers.

    Timing stops when the answer's full line has arrived (JSON decoding happens after), so the
    client's own parse cost is the same for every server and not charged to any.
    """

    def __init__(self, argv, env, cwd, stderr_path):
        self.stderr = open(stderr_path, "wb")
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, bufsize=0)
        widen_pipe(self.proc.stdout)
        self.next_id = 0
        self.lock = threading.Lock()
        self.waiters = {}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _lines(self):
        return read_lines(self.proc.stdout.fileno())

    def _read(self):
        for line in self._lines():
            t = time.perf_counter()
            # Cheap id extraction without decoding a multi-MB line: ids are small ints here.
            msg_id = None
            head = line[:64]
            k = head.find(b'"id":')
            if k >= 0:
                j = k + 5
                e = j
                while e < len(head) and head[e:e + 1].isdigit():
                    e += 1
                if e > j:
                    msg_id = int(head[j:e])
            if msg_id is None and b'"method"' not in line[:200]:
                try:
                    msg_id = json.loads(line).get("id")
                except ValueError:
                    msg_id = None
            if msg_id is None:
                continue  # a notification
            with self.lock:
                q = self.waiters.pop(msg_id, None)
            if q is not None:
                q.put((t, line))
        with self.lock:
            for q in self.waiters.values():
                q.put((time.perf_counter(), None))
            self.waiters.clear()

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())

    def request(self, method, params, timeout=120):
        """Returns (milliseconds, raw line bytes, decoded message)."""
        q = queue.Queue()
        with self.lock:
            self.next_id += 1
            msg_id = self.next_id
            self.waiters[msg_id] = q
        data = (json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
                + "\n").encode()
        t0 = time.perf_counter()
        self.proc.stdin.write(data)
        try:
            t1, line = q.get(timeout=timeout)
        except queue.Empty:
            raise McpError(f"{method}: no answer within {timeout}s")
        if line is None:
            raise McpError(f"{method}: server exited (code {self.proc.poll()})")
        msg = json.loads(line)
        if "error" in msg:
            raise McpError(f"{method}: {json.dumps(msg['error'])[:300]}")
        return (t1 - t0) * 1000, line, msg

    def initialize(self):
        ms, _, msg = self.request("initialize", {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "imgmcp-bench", "version": "1"}}, timeout=60)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return ms, msg

    def discover(self):
        """The 2026-07-28 opening: server/discover, no initialize."""
        ms, _, msg = self.request("server/discover", {"_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL,
            "io.modelcontextprotocol/clientInfo": {"name": "imgmcp-bench", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}, timeout=60)
        if "result" not in msg:
            raise McpError(f"server/discover: {json.dumps(msg)[:300]}")
        return ms, msg

    def call(self, tool, args, timeout=120):
        ms, line, msg = self.request("tools/call", {"name": tool, "arguments": args}, timeout)
        result = msg.get("result", {})
        if result.get("isError"):
            text = " ".join(c.get("text", "") for c in result.get("content", []))
            raise McpError(f"{tool}: isError: {text[:300]}")
        return ms, line, result

    def rss_kb(self):
        return rss_kb(self.proc.pid)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(10)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()

    def stderr_tail(self, path):
        try:
            with open(path, "rb") as f:
                return f.read()[-400:].decode(errors="replace").strip().replace("\n", " | ")
        except OSError:
            return ""


# ---- servers --------------------------------------------------------------------------------

class Server:
    """How to start one MCP server and call its generate/edit tools."""

    def __init__(self, name, argv, env, generate, edit=None, small=None, note=""):
        self.name, self.argv, self.env = name, argv, env
        self.generate = generate  # (mode) -> (tool, args); mode in {"full", "preview", "none"}
        self.edit = edit          # (session, i) -> (tool, args) or None
        self.small = small        # a cheap read-only call: (tool, args) or None
        self.note = note
        self.error = None


def node_peer(package, script):
    return ["node", os.path.join(NODE_MODULES, package, "dist", script)]


def make_servers(args, fake, workdir):
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("GEMINI", "GOOGLE", "IMGMCP", "IMAGE_"))}
    base_env.update({"GEMINI_API_KEY": FAKE_KEY, "GOOGLE_GEMINI_BASE_URL": fake.url,
                     "GEMINI_BASE_URL": fake.url})
    out = []

    def imgmcp_env():
        return dict(base_env)

    out.append(Server(
        "imgmcp",
        [args.imgmcp, "--backend", "gemini", "--log-level", "warning",
         "--gemini-base-url", fake.url, "--data-dir", os.path.join(workdir, "imgmcp-data")],
        imgmcp_env(),
        generate=lambda mode: ("generate_image", {"prompt": "a lighthouse at dusk",
                                                  "session_id": "p1", "inline": mode}),
        edit=lambda s, i: ("edit_image", {"session_id": s, "prompt": f"brighter {i}",
                                          "inline": "none"}),
        small=("get_image", {"session_id": "small", "inline": "none",
                             "include_history": False})))
    t2i_env = dict(base_env, IMAGE_OUTPUT_DIR=os.path.join(workdir, "t2i-out"))
    out.append(Server(
        "text2image-mcp@2.4.0", node_peer("text2image-mcp", "index.js"), t2i_env,
        generate=lambda mode: ("generate_image", {"prompt": "a lighthouse at dusk"}),
        small=("get_last_image_info", {}),
        note="returns the full image always (no preview)"))
    out.append(Server(
        "nano-banana-mcp@1.0.3", node_peer("nano-banana-mcp", "index.js"), dict(base_env),
        generate=lambda mode: ("generate_image", {"prompt": "a lighthouse at dusk"}),
        note="returns the full image always (no preview)"))
    mi_env = dict(base_env, IMAGE_OUTPUT_DIR=os.path.join(workdir, "mcp-image-out"),
                  SKIP_PROMPT_ENHANCEMENT="true")
    out.append(Server(
        "mcp-image@0.14.0", node_peer("mcp-image", "index.js"), mi_env,
        generate=lambda mode: ("generate_image", {"prompt": "a lighthouse at dusk"}),
        note="returns a file link only, never image bytes"))
    return out


def start(server, workdir, tag):
    cwd = os.path.join(workdir, "cwd-" + tag)
    os.makedirs(cwd, exist_ok=True)
    err = os.path.join(workdir, tag + ".stderr")
    client = StdioClient(server.argv, server.env, cwd, err)
    client.err_path = err
    return client


def safe_tag(name):
    return "".join(c if c.isalnum() else "_" for c in name)


# ---- measurements ---------------------------------------------------------------------------

def pct(values, p):
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def image_bytes_in(result):
    """Decoded size of the image blocks in a tool result (what the agent actually receives)."""
    n = 0
    for c in result.get("content", []):
        if c.get("type") == "image":
            n += len(c.get("data", "")) * 3 // 4
    return n


def measure_calls(server, workdir, fake, image_file, mode, n, tag):
    """Median/p95 of n generate calls (after one warm-up) on one running server."""
    fake.configure(fixed_image_file=image_file, latency_ms=0)
    client = start(server, workdir, tag)
    try:
        client.initialize()
        tool, args = server.generate(mode)
        client.call(tool, args)  # warm-up: first Gemini connection, JIT, directories
        times, sizes, img = [], [], 0
        for _ in range(n):
            ms, line, result = client.call(tool, args)
            times.append(ms)
            sizes.append(len(line))
            img = image_bytes_in(result)
        return {"median": statistics.median(times), "p95": pct(times, 0.95),
                "line_bytes": statistics.median(sizes), "image_bytes": img}
    except Exception as e:  # noqa: BLE001 - reported in the table, not raised
        return {"error": f"{e}; stderr: {client.stderr_tail(client.err_path)}"}
    finally:
        client.close()


FLOOR_SRC = r"""
import base64, sys
data = open(sys.argv[1], "rb").read()
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    # What any server must at least do per call: base64 the bytes and write one JSON-RPC line.
    out.write(b'{"jsonrpc":"2.0","id":' + line.strip() + b',"result":{"content":[{"type":"image","data":"'
              + base64.b64encode(data) + b'","mimeType":"image/png"}]}}\n')
    out.flush()
"""


def measure_floor(image_file, n):
    """P1-floor: a minimal program that base64-encodes the bytes and writes them through a pipe."""
    proc = subprocess.Popen([sys.executable, "-c", FLOOR_SRC, image_file], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=0)
    widen_pipe(proc.stdout)
    lines = read_lines(proc.stdout.fileno())
    times, size = [], 0
    for i in range(n + 1):
        t0 = time.perf_counter()
        proc.stdin.write(f"{i}\n".encode())
        line = next(lines)
        dt = (time.perf_counter() - t0) * 1000
        size = len(line)
        if i > 0:
            times.append(dt)
    proc.stdin.close()
    proc.wait()
    return {"median": statistics.median(times), "p95": pct(times, 0.95), "line_bytes": size}


def measure_cold_start(server, workdir, runs, tag, modern=False):
    """Spawn to the first answer: initialize (legacy), or server/discover (2026-07-28)."""
    times = []
    try:
        for i in range(runs):
            client = start(server, workdir, f"{tag}-cold{i}")
            try:
                client.discover() if modern else client.initialize()
                times.append((time.perf_counter() - client.t_spawn) * 1000)
            finally:
                client.close()
        return {"median": statistics.median(times), "p95": pct(times, 0.95)}
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}


def measure_rss(server, workdir, fake, small_file, versions, tag):
    """Idle RSS after initialize, then RSS after `versions` committed images."""
    fake.configure(fixed_image_file=small_file, latency_ms=0)
    client = start(server, workdir, tag)
    try:
        client.initialize()
        time.sleep(0.3)  # let a Node peer finish its lazy start-up work
        idle = client.rss_kb()
        t0 = time.perf_counter()
        if server.edit is not None:
            tool, args = server.generate("none")
            client.call(tool, dict(args, session_id="rss"))
            for i in range(versions - 1):
                tool, args = server.edit("rss", i)
                client.call(tool, args)
        else:
            for i in range(versions):
                tool, args = server.generate("none")
                client.call(tool, args)
        wall = time.perf_counter() - t0
        return {"idle": idle, "after": client.rss_kb(), "wall": wall}
    except Exception as e:  # noqa: BLE001
        return {"error": f"{e}; stderr: {client.stderr_tail(client.err_path)}"}
    finally:
        client.close()


def timed_workers(worker, count, errors):
    """Runs worker(0) … worker(count - 1) on threads at once: {wall} seconds until the last is
    done, or {error}: the first of `errors`, which the workers append to."""
    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {"error": errors[0]} if errors else {"wall": wall}


def measure_sessions(server, workdir, fake, small_file, sessions, edits, tag):
    """Wall time of `sessions` clients each doing `edits` sequential edits over one connection,
    every Gemini call taking 200 ms (LatencyProxy)."""
    fake.configure(fixed_image_file=small_file, latency_ms=0)
    proxy = LatencyProxy(fake.hostport, 0.2)
    argv = [proxy.url if a == fake.url else a for a in server.argv]
    env = dict(server.env, GEMINI_BASE_URL=proxy.url, GOOGLE_GEMINI_BASE_URL=proxy.url)
    client = start(Server(server.name, argv, env, server.generate, server.edit), workdir, tag)
    try:
        client.initialize()
        errors = []

        def create(s):  # the sessions are made all at once; only the edits are timed
            try:
                tool, args = server.generate("none")
                client.call(tool, dict(args, session_id=f"s{s}"))
            except Exception as e:  # noqa: BLE001
                errors.append(str(e))

        if "error" in timed_workers(create, sessions, errors):
            return {"error": errors[0]}

        def worker(s):
            try:
                for i in range(edits):
                    tool, args = server.edit(f"s{s}", i)
                    client.call(tool, args)
            except Exception as e:  # noqa: BLE001
                errors.append(str(e))

        return timed_workers(worker, sessions, errors)
    except Exception as e:  # noqa: BLE001
        return {"error": f"{e}; stderr: {client.stderr_tail(client.err_path)}"}
    finally:
        client.close()
        proxy.close()


def proc_status_kb(pid, field):
    """A VmRSS/VmHWM-style field of /proc/PID/status, in kB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def measure_memory_budget(server, workdir, fake, small_file, budget_mb, tag, calls=3, refs=14):
    """`calls` concurrent generate_image calls, each with `refs` references of a 12.6 MB noisy PNG
    (by path), against --max-inflight-mb `budget_mb` (0: no budget). Peak resident memory
    (VmHWM) over the run, resident memory IDLE_SECONDS after it, and how many calls were refused
    as busy."""
    fake.configure(fixed_image_file=small_file, latency_ms=400)
    cwd = os.path.join(workdir, "cwd-" + tag)
    os.makedirs(cwd, exist_ok=True)
    with open(os.path.join(cwd, "ref.png"), "wb") as f:
        f.write(noisy_png(2048, 2048, seed=11))
    ref_mb = os.path.getsize(os.path.join(cwd, "ref.png")) / 1e6
    budgeted = Server(server.name, server.argv + ["--max-inflight-mb", str(budget_mb)],
                      server.env, server.generate)
    client = start(budgeted, workdir, tag)
    try:
        client.initialize()
        for i in range(calls):
            client.call("generate_image", {"session_id": f"m{i}", "prompt": "a lighthouse",
                                           "inline": "none"})
        idle = proc_status_kb(client.proc.pid, "VmHWM")
        outcomes = [None] * calls

        def one(i):
            try:
                client.call("generate_image", {"session_id": f"m{i}",
                                               "prompt": "in the style of the references",
                                           "inline": "none",
                                           "reference_images": [{"path": "ref.png"}] * refs},
                            timeout=300)
                outcomes[i] = "ok"
            except McpError as e:
                outcomes[i] = "busy" if "busy" in str(e) else str(e)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(calls)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        other = [o for o in outcomes if o not in ("ok", "busy")]
        if other:
            return {"error": "; ".join(other)[:300]}
        time.sleep(IDLE_SECONDS)  # the budget trims after a second without leases
        return {"peak": proc_status_kb(client.proc.pid, "VmHWM"), "idle_peak": idle,
                "after": proc_status_kb(client.proc.pid, "VmRSS"), "ref_mb": ref_mb,
                "ok": outcomes.count("ok"), "busy": outcomes.count("busy")}
    except Exception as e:  # noqa: BLE001
        return {"error": f"{e}; stderr: {client.stderr_tail(client.err_path)}"}
    finally:
        client.close()


def budget_outcome(error_text):
    """How a call refused by the memory budget was refused: "busy", "whole" or the text."""
    if "busy" in error_text:
        return "busy"
    return "whole" if "more than the whole --max-inflight-mb budget" in error_text else error_text


def measure_local_generations(binary, workdir, budget_mb, tag, calls=16):
    """M2: `calls` local 4K generate_image calls sent at once on one stdio connection, against
    --max-inflight-mb `budget_mb`. Peak resident memory (VmHWM) over the run, resident memory
    (VmRSS) before and after, and how the calls ended: applied, busy, or refused as larger than
    the whole budget."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "IMGMCP"))}
    argv = [binary, "--backend", "local", "--log-level", "error", "--max-inflight-mb",
            str(budget_mb), "--data-dir", os.path.join(workdir, tag + "-data")]
    client = start(Server(tag, argv, env, None), workdir, tag)
    try:
        client.initialize()
        idle = proc_status_kb(client.proc.pid, "VmRSS")
        outcomes = [None] * calls

        def one(i):
            try:
                client.call("generate_image", {"session_id": f"g{i}", "prompt": f"a lighthouse {i}",
                                               "image_size": "4K", "inline": "none"}, timeout=600)
                outcomes[i] = "ok"
            except McpError as e:
                outcomes[i] = budget_outcome(str(e))
        threads = [threading.Thread(target=one, args=(i,)) for i in range(calls)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        other = [o for o in outcomes if o not in ("ok", "busy", "whole")]
        if other:
            return {"error": "; ".join(other)[:300]}
        return {"peak": proc_status_kb(client.proc.pid, "VmHWM"), "idle": idle,
                "after": proc_status_kb(client.proc.pid, "VmRSS"),
                "ok": outcomes.count("ok"), "busy": outcomes.count("busy"),
                "whole": outcomes.count("whole")}
    except Exception as e:  # noqa: BLE001
        return {"error": f"{e}; stderr: {client.stderr_tail(client.err_path)}"}
    finally:
        client.close()


class HttpMcpSession:
    """One MCP session over HTTP, every request on a new connection (as a client without
    keep-alive sends them), so calls land on the listener's threads in turn."""

    def __init__(self, port, protocol=PROTOCOL):
        self.port, self.session = port, None
        _, headers, _ = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": protocol, "capabilities": {},
            "clientInfo": {"name": "imgmcp-bench", "version": "1"}}})
        self.session = headers["mcp-session-id"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        try:
            headers = {"Content-Type": "application/json",
                       "Accept": "application/json, text/event-stream"}
            if self.session:
                headers["Mcp-Session-Id"] = self.session
            conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers=headers)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def request(self, call_id, method, params):
        """A request's result (the answer with its id, when it comes as an SSE stream)."""
        status, headers, body = self.post({"jsonrpc": "2.0", "id": call_id, "method": method,
                                           "params": params})
        if status != 200:
            raise McpError(f"{method}: HTTP {status}: {body[:200]!r}")
        if headers.get("content-type", "").startswith("text/event-stream"):
            messages = [json.loads(ln[5:]) for ln in body.split(b"\n")
                        if ln.startswith(b"data:") and ln[5:].strip()]
            answer = next(m for m in reversed(messages) if m.get("id") == call_id)
        else:
            answer = json.loads(body)
        if "error" in answer:
            raise McpError(f"{method}: {json.dumps(answer['error'])[:300]}")
        return answer["result"]

    def call(self, call_id, tool, args):
        result = self.request(call_id, "tools/call", {"name": tool, "arguments": args})
        if result.get("isError"):
            raise McpError(result["content"][0]["text"][:300])
        return result


IDLE_SECONDS = 3  # M1, M3, M4: resident memory this long after the last call ("after", "idle")


def measure_sequential_imports(binary, workdir, tag, calls, width, height):
    """M3: `calls` edit_image calls one after the other over HTTP, each importing a noisy
    width x height PNG (inline preview, the default), local backend, --max-inflight-mb 64,
    --cache-mb 0 (the cache holds recent images by design). Peak resident memory (VmHWM),
    resident memory after the first call, right after the last and IDLE_SECONDS later (idle),
    server CPU per call."""
    png = noisy_png(width, height, seed=5)
    image = {"data": base64.b64encode(png).decode(), "mime_type": "image/png"}
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "IMGMCP"))}
    argv = [binary, "--backend", "local", "--log-level", "error", "--http", f"127.0.0.1:{port}",
            "--max-inflight-mb", "64", "--cache-mb", "0",
            "--data-dir", os.path.join(workdir, tag + "-data")]
    cwd = os.path.join(workdir, "cwd-" + tag)
    os.makedirs(cwd, exist_ok=True)
    with HttpServer(argv, env, cwd, port, os.path.join(workdir, tag + ".log")) as server:
        if server.error:
            return {"error": server.error}
        try:
            client = HttpMcpSession(port)
            first = None
            cpu0 = process_cpu_seconds(server.proc.pid)
            for i in range(calls):
                client.call(i + 1, "edit_image", {"session_id": f"import-{i}", "prompt": "invert",
                                                  "image": image})
                if first is None:
                    first = proc_status_kb(server.proc.pid, "VmRSS")
            cpu = process_cpu_seconds(server.proc.pid) - cpu0
            last = proc_status_kb(server.proc.pid, "VmRSS")
            time.sleep(IDLE_SECONDS)  # the budget trims after a second without leases
            return {"peak": proc_status_kb(server.proc.pid, "VmHWM"), "first": first,
                    "last": last, "idle": proc_status_kb(server.proc.pid, "VmRSS"),
                    "image_mb": len(png) / 1e6, "cpu_ms": cpu / calls * 1e3}
        except Exception as e:  # noqa: BLE001
            return {"error": str(e)[:300]}


LEGACY_TASKS_PROTOCOL = "2025-11-25"  # M4: the revision whose experimental tasks utility it uses


def database_bytes(data_dir):
    """(file, WAL) bytes on disk of the data dir's SQLite database."""
    path = os.path.join(data_dir, "imgmcp.db")
    return tuple(os.path.getsize(p) if os.path.exists(p) else 0 for p in (path, path + "-wal"))


def task_row_bytes(data_dir):
    """(rows, bytes of request, result and error JSON) in the data dir's tasks table, read
    beside the running server."""
    import sqlite3  # only M4 reads a database
    db = sqlite3.connect(f"file:{os.path.join(data_dir, 'imgmcp.db')}?mode=ro", uri=True,
                         timeout=30)
    try:
        return db.execute("SELECT count(*), coalesce(sum(length(CAST(request_json AS BLOB)) + "
                          "length(CAST(result_json AS BLOB)) + length(CAST(error_json AS BLOB))), "
                          "0) FROM tasks").fetchone()
    finally:
        db.close()


def measure_import_tasks(binary, workdir, tag, calls, width, height):
    """M4 (#35, finding 3): `calls` edit_image tasks one after the other over HTTP, each a
    task-augmented tools/call (MCP 2025-11-25's tasks utility, one session) importing a noisy
    width x height PNG into one imgmcp session with `inline: "full"`, its result fetched with
    tasks/result; local backend, --max-inflight-mb 64, --cache-mb 0, the default --task-ttl (so
    every task stays readable). Peak resident memory (VmHWM), resident memory after the first
    task, right after the last and IDLE_SECONDS later (idle); the database (file + WAL) and its
    tasks table then, and again IDLE_SECONDS after reset_session of the session."""
    png = noisy_png(width, height, seed=5)
    image = {"data": base64.b64encode(png).decode(), "mime_type": "image/png"}
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "IMGMCP"))}
    data_dir = os.path.join(workdir, tag + "-data")
    argv = [binary, "--backend", "local", "--log-level", "error", "--http", f"127.0.0.1:{port}",
            "--max-inflight-mb", "64", "--cache-mb", "0", "--data-dir", data_dir]
    cwd = os.path.join(workdir, "cwd-" + tag)
    os.makedirs(cwd, exist_ok=True)
    with HttpServer(argv, env, cwd, port, os.path.join(workdir, tag + ".log")) as server:
        if server.error:
            return {"error": server.error}
        try:
            client = HttpMcpSession(port, LEGACY_TASKS_PROTOCOL)
            ids = iter(range(1, 1 << 30))
            first, shown = None, 0
            for _ in range(calls):
                created = client.request(next(ids), "tools/call", {
                    "name": "edit_image", "task": {}, "arguments": {
                        "session_id": "m4-imports", "prompt": "invert", "inline": "full",
                        "image": image}})
                if "task" not in created:
                    raise McpError(f"not answered with a task: {str(created)[:200]}")
                result = client.request(next(ids), "tasks/result",
                                        {"taskId": created["task"]["taskId"]})
                if result.get("isError") or not image_bytes_in(result):
                    raise McpError(f"task result without its image: {str(result)[:300]}")
                shown += image_bytes_in(result)
                if first is None:
                    first = proc_status_kb(server.proc.pid, "VmRSS")
            last = proc_status_kb(server.proc.pid, "VmRSS")
            time.sleep(IDLE_SECONDS)
            out = {"peak": proc_status_kb(server.proc.pid, "VmHWM"), "first": first,
                   "last": last, "idle": proc_status_kb(server.proc.pid, "VmRSS"),
                   "image_mb": len(png) / 1e6, "shown_mb": shown / calls / 1e6,
                   "db": database_bytes(data_dir), "rows": task_row_bytes(data_dir)}
            client.call(next(ids), "reset_session", {"session_id": "m4-imports"})
            time.sleep(IDLE_SECONDS)
            out.update(reset_idle=proc_status_kb(server.proc.pid, "VmRSS"),
                       reset_db=database_bytes(data_dir), reset_rows=task_row_bytes(data_dir))
            return out
        except Exception as e:  # noqa: BLE001
            return {"error": str(e)[:300]}


def memory_builds(args):
    """(label, binary) of the builds the memory rows measure: this one, and the earlier one."""
    builds = [("imgmcp", args.imgmcp)]
    if args.baseline_imgmcp:
        builds.append((f"imgmcp {args.baseline_label}", os.path.abspath(args.baseline_imgmcp)))
    return builds


def run_memory_rows(args, workdir, want, rows, results, log):
    """M2 (16 local 4K generations at once, #35 finding 7), M3 (sequential imports over HTTP,
    finding 10) and M4 (import tasks, finding 3), for this build and, with --baseline-imgmcp, an
    earlier one in the same run."""
    if want("M2"):
        what = "16 concurrent local 4K generate_image calls"
        for label, binary in memory_builds(args):
            for budget in ((64, 160) if label == "imgmcp" else (64,)):
                log(f"bench: M2 {label} --max-inflight-mb {budget}")
                r = measure_local_generations(binary, workdir, budget,
                                              f"{safe_tag(label)}-m2-{budget}")
                if "error" in r:
                    rows.append(("M2", what, label, "FAILED", "—", "—", r["error"]))
                    continue
                results[("M2", label, budget)] = r
                rows.append(("M2", what, label, f"peak {r['peak'] / 1024:.0f} MB, after "
                             f"{r['after'] / 1024:.0f} MB", "—", "—",
                             f"--max-inflight-mb {budget}: {r['ok']} applied, {r['busy']} busy, "
                             f"{r['whole']} larger than the whole budget; "
                             f"{r['idle'] / 1024:.0f} MB before the calls"))
    if want("M3"):
        calls = 20 if args.quick else 60
        for width, height in ((1400, 1024), (800, 800)):  # 4.3 MB and 1.9 MB of noise
            for label, binary in memory_builds(args):
                log(f"bench: M3 {label} {width}x{height}")
                r = measure_sequential_imports(binary, workdir, f"{safe_tag(label)}-m3-{width}",
                                               calls, width, height)
                what = f"{calls} sequential edit_image imports over HTTP, {width}x{height} noise"
                if "error" in r:
                    rows.append(("M3", what, label, "FAILED", "—", "—", r["error"]))
                    continue
                results[("M3", label, width)] = r
                rows.append(("M3", what, label, f"peak {r['peak'] / 1024:.0f} MB, idle "
                             f"{r['idle'] / 1024:.0f} MB", "—", "—",
                             f"{r['image_mb']:.1f} MB each, inline preview, local backend, "
                             f"--max-inflight-mb 64, --cache-mb 0; {r['first'] / 1024:.0f} MB "
                             f"after the first call, {r['last'] / 1024:.0f} MB right after the "
                             f"last, idle {IDLE_SECONDS} s later; server CPU "
                             f"{r['cpu_ms']:.0f} ms a call"))
    if want("M4"):
        run_import_task_rows(args, workdir, rows, results, log)


def size_text(n):
    """Bytes on disk, decimal units."""
    if n < 1000:
        return f"{n} B"
    if n < 1e6:
        return f"{n / 1e3:.1f} KB"
    return f"{n / 1e6:.1f} MB" if n < 1e8 else f"{n / 1e6:.0f} MB"


def run_import_task_rows(args, workdir, rows, results, log):
    """M4 (#35, finding 3): import tasks with full results over HTTP, for this build and, with
    --baseline-imgmcp, an earlier one in the same run."""
    calls, (width, height) = (10 if args.quick else 60), (1400, 1024)  # 4.3 MB of noise
    what = f"{calls} edit_image import tasks over HTTP, {width}x{height} noise, inline full"
    for label, binary in memory_builds(args):
        log(f"bench: M4 {label} {calls} tasks")
        r = measure_import_tasks(binary, workdir, f"{safe_tag(label)}-m4", calls, width, height)
        if "error" in r:
            rows.append(("M4", what, label, "FAILED", "—", "—", r["error"]))
            continue
        results[("M4", label, width)] = r
        (count, kept), (_, kept_reset) = r["rows"], r["reset_rows"]
        rows.append(("M4", what, label, f"peak {r['peak'] / 1024:.0f} MB, idle "
                     f"{r['idle'] / 1024:.0f} MB; database {size_text(sum(r['db']))}, "
                     f"{size_text(sum(r['reset_db']))} after reset_session", "—", "—",
                     f"{r['image_mb']:.1f} MB each into one session, each a task-augmented "
                     f"tools/call (2025-11-25 tasks utility, one HTTP session) and its "
                     f"tasks/result, which showed the {r['shown_mb']:.1f} MB image; local "
                     f"backend, --max-inflight-mb 64, --cache-mb 0, default --task-ttl (every "
                     f"task stays readable); {r['first'] / 1024:.0f} MB after the first task, "
                     f"{r['last'] / 1024:.0f} MB right after the last, idle {IDLE_SECONDS} s "
                     f"later, {r['reset_idle'] / 1024:.0f} MB {IDLE_SECONDS} s after "
                     f"reset_session; database = imgmcp.db {size_text(r['db'][0])} + WAL "
                     f"{size_text(r['db'][1])} (after reset_session {size_text(r['reset_db'][0])}"
                     f" + {size_text(r['reset_db'][1])}); the tasks table's {count} rows held "
                     f"{size_text(kept)} of request, result and error JSON, "
                     f"{size_text(kept_reset)} after reset_session"))


TASK_ROW_LIMIT = 16 * 1024  # M4: a task row without images, as tests/integration/test_task_rows.py


def import_task_targets(results):
    """The target lines of M4 (issue #35, finding 3): each build's idle memory and task rows,
    and this build against the earlier one when both ran."""
    out, got = [], {k[1]: v for k, v in results.items()
                    if isinstance(k, tuple) and len(k) == 3 and k[0] == "M4"}
    for label, r in sorted(got.items()):
        bound, idle = r["first"] / 1024 + 64, r["idle"] / 1024
        out.append(f"M4 ({label}, {r['image_mb']:.1f} MB import tasks) idle ≤ after the first "
                   f"task + 64 MB: {idle:.0f} MB against {bound:.0f} MB — "
                   f"{'met' if idle <= bound else 'not met'}")
        (count, kept), (_, kept_reset) = r["rows"], r["reset_rows"]
        per_row = kept / max(count, 1)
        met = per_row <= TASK_ROW_LIMIT and kept_reset == 0
        out.append(f"M4 ({label}) a task row keeps no image bytes (≤ {TASK_ROW_LIMIT // 1024} KB "
                   f"of JSON a row) and reset_session empties them: {size_text(round(per_row))} "
                   f"a row, {size_text(kept_reset)} after reset_session — "
                   f"{'met' if met else 'not met'}")
    new, old = got.get("imgmcp"), [(k, v) for k, v in sorted(got.items()) if k != "imgmcp"]
    for label, r in old if new else []:
        new_db, old_db = sum(new["reset_db"]), sum(r["reset_db"])
        met = new["idle"] <= r["idle"] / 10 and new_db <= old_db / 10
        out.append(f"M4 (imgmcp against {label}) idle memory and database (file + WAL) after "
                   f"reset_session ≤ 1/10 of the earlier build's: idle {new['idle'] / 1024:.0f} "
                   f"MB against {r['idle'] / 1024:.0f} MB ({ratio(new['idle'], r['idle'])}), "
                   f"database {size_text(new_db)} against {size_text(old_db)} "
                   f"({ratio(new_db, old_db)}) — {'met' if met else 'not met'}")
    return out


def memory_targets(results):
    """The target lines of M2, M3 and M4 (issue #35, findings 7, 10 and 3)."""
    out = []
    for (row, label, key), r in sorted((k, v) for k, v in results.items()
                                       if isinstance(k, tuple) and len(k) == 3
                                       and k[0] in ("M2", "M3")):
        if row == "M2":
            bound = r["idle"] / 1024 + key + 64
            peak = r["peak"] / 1024
            out.append(f"M2 ({label}, --max-inflight-mb {key}) peak ≤ the budget + what the "
                       f"process held before + 64 MB: {peak:.0f} MB against {bound:.0f} MB — "
                       f"{'met' if peak <= bound else 'not met'}")
        else:
            bound = r["first"] / 1024 + 64
            idle = r["idle"] / 1024
            out.append(f"M3 ({label}, {r['image_mb']:.1f} MB imports) idle ≤ after the first "
                       f"call + 64 MB: {idle:.0f} MB against {bound:.0f} MB — "
                       f"{'met' if idle <= bound else 'not met'}")
    return out + import_task_targets(results)


def merged_results(path, text, ids, note):
    """The results file at `path` with the rows and target lines of `ids` replaced by those of
    `text` (a run with --only), and `note` saying where they come from."""
    with open(path) as f:
        old = f.read().splitlines()
    new = text.splitlines()

    def row_id(line):
        return line.split("|")[1].strip() if line.startswith("| ") else None

    def target_id(line):
        words = line[2:].replace("(not a target) ", "").split()
        return words[0] if line.startswith("- ") and words else None

    new_rows = [ln for ln in new if row_id(ln) in ids]
    new_targets = [ln for ln in new if target_id(ln) in ids]
    earlier_note = "Rows " + ", ".join(sorted(ids)) + ":"
    out, placed = [], False
    for line in old:
        if line.startswith(earlier_note):  # from an earlier merge: replaced, with its blank line
            out.pop()
            continue
        if row_id(line) in ids or target_id(line) in ids:
            if row_id(line) in ids and not placed:
                out += new_rows
                placed = True
            continue
        out.append(line)
    if not placed:  # no such rows before: after the rows of their letter before them (M3 for
        # M4), else after the last row of the table
        first = min(ids)
        table = [i for i, ln in enumerate(out) if row_id(ln) not in (None, "row")]
        family = [i for i in table if row_id(out[i])[0] == first[0] and row_id(out[i]) < first]
        last = max(family or table)
        out[last + 1:last + 1] = new_rows
    while out and out[-1] == "":
        out.pop()
    out += new_targets
    # After the paragraph that says which run the file comes from.
    run_line = next(i for i, ln in enumerate(out) if ln.startswith("One run"))
    out[run_line + 1:run_line + 1] = ["", note]
    return "\n".join(out) + "\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def process_cpu_seconds(pid):
    """utime + stime of one process so far, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()  # fields[0] is field 3 (state)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_http(argv, env, cwd, port, tool, args, seconds, concurrency, log_path, setup=None,
                 modern=False):
    """P6: small tools/call throughput over Streamable HTTP. wrk (bench/harness/http_load.lua, a C
    event loop) drives the load when installed; else bench/harness/http_load.mjs (Node), which
    tops out near the server's rate on two cores and so understates the faster server.
    modern: stateless 2026-07-28 calls (no handshake, no session); wrk only."""
    with HttpServer(argv, env, cwd, port, log_path) as server:
        if server.error:
            return {"error": server.error}
        return server.load(tool, args, seconds, concurrency, setup, modern)


class HttpServer:
    """One server process listening on 127.0.0.1:port for P6's loads; stopped on exit."""

    def __init__(self, argv, env, cwd, port, log_path, authorization=None):
        self.argv, self.env, self.cwd, self.port, self.log_path = argv, env, cwd, port, log_path
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.error = None
        # The load clients' Authorization header (an OAuth-protected server), passed to them in
        # the environment.
        self.load_env = (dict(os.environ, IMGMCP_BENCH_AUTHORIZATION=authorization)
                         if authorization else None)

    def __enter__(self):
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd,
                                     stdin=subprocess.PIPE, stdout=self.log, stderr=self.log)
        if not wait_port(self.port, self.proc, 20):
            self.error = ("did not listen on 127.0.0.1:%d (exit %s)"
                          % (self.port, self.proc.poll()))
        return self

    def __exit__(self, *exc):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def load(self, tool, args, seconds, concurrency, setup=None, modern=False):
        """One load run: calls, rps, p50 … and the server's and the client's CPU per call."""
        node_client = ["node", os.path.join(HERE, "http_load.mjs"), self.url, tool,
                       json.dumps(args)]
        try:
            wrk = shutil.which("wrk")
            if wrk is None and modern:
                return {"error": "the 2026-07-28 load needs wrk (scripts/setup installs it)"}
            if wrk is None:
                cmd = node_client + [str(seconds), str(concurrency)]
                cmd += [json.dumps(setup)] if setup else []
            else:
                if setup:  # the Node client with no load clients makes just the setup call
                    done = subprocess.run(node_client + ["0", "0", json.dumps(setup)],
                                          capture_output=True, text=True, timeout=60,
                                          env=self.load_env)
                    if done.returncode != 0:
                        return {"error": (done.stderr or done.stdout).strip()[-300:]}
                cmd = [wrk, f"-t{concurrency}", f"-c{concurrency}", f"-d{seconds}s", "-s",
                       os.path.join(HERE, "http_load.lua"), self.url, "--", tool,
                       json.dumps(args)]
                cmd += ["modern"] if modern else []
            # CPU time of the server and of the load client during the run: where the cores go.
            server_cpu0, client_cpu0 = process_cpu_seconds(self.proc.pid), children_cpu_seconds()
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60,
                                 env=self.load_env)
            server_cpu = process_cpu_seconds(self.proc.pid) - server_cpu0
            client_cpu = children_cpu_seconds() - client_cpu0
            if out.returncode != 0:
                return {"error": (out.stderr or out.stdout).strip()[-300:]}
            result = json.loads(out.stdout.strip().splitlines()[-1])
            result.setdefault("client", "node")
            if result.get("calls"):
                result["server_cpu_us"] = server_cpu / result["calls"] * 1e6
                result["client_cpu_us"] = client_cpu / result["calls"] * 1e6
            return result
        except Exception as e:  # noqa: BLE001
            return {"error": str(e)}


def measure_metrics_cost(imgmcp_bin, env, workdir, rounds=4, seconds=3, concurrency=16):
    """P6's metrics cost: one server counting metrics (the default over --http) against one with
    --metrics off, loaded in turn (measure_side_by_side). Returns {on, off} or {error}."""
    return measure_side_by_side({"on": (imgmcp_bin, []),
                                 "off": (imgmcp_bin, ["--metrics", "off"])},
                                env, workdir, "metrics", rounds, seconds, concurrency)


def measure_side_by_side(variants, env, workdir, tag, rounds=4, seconds=3, concurrency=16):
    """P6's small call against two imgmcp servers started side by side — `variants` maps a label
    to (binary, extra arguments) — loaded in turn, a, b, b, a, a, b … (so a drift of the
    machine's load falls on both alike), `rounds` runs each. Returns {label: its median
    throughput and server CPU per call, and every run's throughput}, or {error}."""
    call = {"session_id": "small", "inline": "none", "include_history": False}
    setup = {"name": "generate_image",
             "arguments": {"prompt": "solid teal", "session_id": "small", "inline": "none"}}
    servers = {}
    for label, (binary, extra, *authorization) in variants.items():
        port = free_port()
        name = f"{tag}-{safe_tag(label)}"
        servers[label] = HttpServer(
            [binary, "--backend", "local", "--log-level", "warning", "--http",
             f"127.0.0.1:{port}", *extra, "--data-dir", os.path.join(workdir, "http-data-" + name)],
            env, workdir, port, os.path.join(workdir, f"imgmcp-http-{name}.log"),
            authorization=authorization[0] if authorization else None)
    first, second = list(servers)
    with servers[first] as a, servers[second] as b:
        started = {first: a, second: b}
        for server in started.values():
            if server.error:
                return {"error": server.error}
            warm = server.load("get_image", call, 1, concurrency, setup=setup)
            if "error" in warm:
                return warm
        runs = {first: [], second: []}
        order = [v for i in range(rounds)
                 for v in ((first, second) if i % 2 == 0 else (second, first))]
        for label in order:
            result = started[label].load("get_image", call, seconds, concurrency)
            if "error" in result:
                return result
            runs[label].append(result)

    def median_of(results):
        middle = sorted(results, key=lambda x: x["rps"])[len(results) // 2]
        return middle | {
            "rps": statistics.median(x["rps"] for x in results),
            "server_cpu_us": statistics.median(x.get("server_cpu_us") or 0 for x in results),
            "runs": [x["rps"] for x in results]}
    return {label: median_of(results) for label, results in runs.items()}


def baseline_p3_row(imgmcp, args, workdir, starts, results, log):
    """P3 against an earlier build (--baseline-imgmcp): both started in turn, `starts` times
    each, so a drift of the machine's load falls on both alike."""
    label = f"imgmcp {args.baseline_label}"
    argv = [os.path.abspath(args.baseline_imgmcp)] + imgmcp.argv[1:]
    argv[argv.index("--data-dir") + 1] += "-baseline"  # its own: an older build, an older schema
    base = Server(label, argv, imgmcp.env, imgmcp.generate, imgmcp.edit)
    log(f"bench: P3 imgmcp and {label} in turn")
    times = {"imgmcp": [], label: []}
    for i in range(starts):
        for server in ((imgmcp, base) if i % 2 == 0 else (base, imgmcp)):
            r = measure_cold_start(server, workdir, 1, safe_tag(server.name) + f"-pair{i}")
            if "error" in r:
                return ("P3", "cold start to initialize answer", label, "FAILED", "—", "—",
                        r["error"][:300])
            times[server.name].append(r["median"])
    me, other = statistics.median(times["imgmcp"]), statistics.median(times[label])
    results["P3-baseline"] = me / other
    return ("P3", "cold start to initialize answer, started in turn with imgmcp", label,
            f"median {fmt_ms(other)}", "—", "—",
            f"this build {fmt_ms(me)} in the same turns: this ÷ {label} {me / other:.2f}")


def baseline_p6_row(cost, label):
    """P6 against an earlier build (--baseline-imgmcp), from measure_side_by_side: throughput
    and server CPU per call of both, measured in turn in this run."""
    what = f"small tools/call over HTTP, 16 clients, this build ÷ imgmcp {label}"
    if "error" in cost:
        return ("P6", what, "imgmcp", "FAILED", "—", "—", cost["error"][:300])
    me, base = cost["imgmcp"], cost["baseline"]
    runs = len(me["runs"])
    note = (f"{runs} alternating runs each against two servers side by side, medians: "
            f"{me['rps']:.0f} against {base['rps']:.0f} calls/s (runs "
            + "/".join(f"{r:.0f}" for r in me["runs"]) + " against "
            + "/".join(f"{r:.0f}" for r in base["runs"]) + "); server CPU per call "
            f"{me['server_cpu_us']:.0f} µs against {base['server_cpu_us']:.0f} µs")
    return ("P6", what, "imgmcp", f"{me['rps'] / base['rps']:.2f} (throughput)", "—", "—", note)


def instructions_per_call(imgmcp_bin, env, workdir, extra, calls=(100, 400)):
    """The server's instructions per small HTTP tools/call (get_image, inline none), counted by
    valgrind's callgrind: two runs answering calls[0] and calls[1] calls over one legacy session,
    the difference divided by the difference in calls (so startup and shutdown cancel out).
    Unlike throughput, a count the machine's other load does not move. None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    rs = _replica_support()
    totals = []
    for n in calls:
        port = free_port()
        out = os.path.join(workdir, f"callgrind-{port}.out")
        data = os.path.join(workdir, f"callgrind-data-{port}")
        with open(os.path.join(workdir, f"callgrind-{port}.log"), "wb") as log:
            proc = subprocess.Popen(
                ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, imgmcp_bin,
                 "--backend", "local", "--log-level", "warning", "--http", f"127.0.0.1:{port}",
                 "--data-dir", data, *extra],
                env=env, cwd=workdir, stdin=subprocess.PIPE, stdout=log, stderr=log)
            try:
                if not wait_port(port, proc, 120):
                    return None
                client = rs.LegacyClient(port, timeout=120)
                rs.structured(client.call_tool("generate_image", {
                    "prompt": "solid teal", "session_id": "small", "inline": "none"}))
                for _ in range(n):
                    rs.structured(client.call_tool("get_image", {
                        "session_id": "small", "inline": "none", "include_history": False}))
            finally:
                proc.terminate()
                proc.wait(120)
        with open(out) as f:
            total = next((int(line.split()[1]) for line in f
                          if line.startswith(("summary:", "totals:"))), None)
        if total is None:
            return None
        totals.append(total)
    return (totals[1] - totals[0]) / (calls[1] - calls[0])


def metrics_cost_row(cost):
    """P6 with metrics counted (the default over --http) against --metrics off, from
    measure_metrics_cost: what /metrics' bookkeeping costs in throughput (the target: at most
    5 %)."""
    what = "small tools/call over HTTP, 16 clients, --metrics off"
    if "error" in cost:
        return ("P6", what, "imgmcp", "FAILED", "—", "—", cost["error"][:300])
    on, off = cost["on"], cost["off"]
    runs = len(on["runs"])
    note = (f"load from {off['client']}; {runs} alternating runs each against two servers side "
            f"by side, medians: metrics on ÷ off throughput {on['rps'] / off['rps']:.3f} "
            f"(cost {(1 - on['rps'] / off['rps']) * 100:+.1f} %); runs on "
            + "/".join(f"{r:.0f}" for r in on["runs"]) + ", off "
            + "/".join(f"{r:.0f}" for r in off["runs"]) + " calls/s")
    if on.get("server_cpu_us") is not None and off.get("server_cpu_us") is not None:
        note += (f"; server CPU per call: {off['server_cpu_us']:.0f} µs off, "
                 f"{on['server_cpu_us']:.0f} µs on")
    if cost.get("instructions"):
        i_on, i_off = cost["instructions"]
        note += (f"; instructions per call (callgrind): {i_off / 1000:.1f}k off, "
                 f"{i_on / 1000:.1f}k on ({(i_on / i_off - 1) * 100:+.1f} %)")
    return ("P6", what, "imgmcp", f"{off['rps']:.0f} calls/s, p50 {fmt_ms(off['p50'])}", "—",
            "—", note)


def measure_oauth_cost(imgmcp_bin, env, workdir, rounds=4, seconds=3, concurrency=16):
    """P6 with OAuth on: one server checking every call's JWT access token (signed RS256 by
    bench/harness/oauth_issuer.mjs, whose keys it fetched once) against one without
    authentication, loaded in turn (measure_side_by_side). Both get the same Authorization
    header, which the second ignores, so the difference is the token's check alone, not the
    bytes of a longer request head. Returns {oauth, open} or {error}."""
    resource = "http://127.0.0.1/mcp"  # one audience for every port: --oauth-resource names it
    issuer = subprocess.Popen(["node", os.path.join(HERE, "oauth_issuer.mjs"), resource],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        line = issuer.stdout.readline()
        if not line:
            return {"error": "bench/harness/oauth_issuer.mjs did not start"}
        started = json.loads(line)
        return measure_side_by_side(
            {"oauth": (imgmcp_bin, ["--oauth-issuer", started["issuer"], "--oauth-resource",
                                    resource], "Bearer " + started["token"]),
             "open": (imgmcp_bin, [], "Bearer " + started["token"])},
            env, workdir, "oauth", rounds, seconds, concurrency)
    finally:
        issuer.stdin.close()
        try:
            issuer.wait(5)
        except subprocess.TimeoutExpired:
            issuer.kill()
            issuer.wait()


def oauth_cost_row(cost):
    """P6 with OAuth on against no authentication, from measure_oauth_cost: the server CPU each
    call's token check costs (the target: at most +10 µs)."""
    what = "small tools/call over HTTP, 16 clients, OAuth JWT on every call"
    if "error" in cost:
        return ("P6", what, "imgmcp", "FAILED", "—", "—", cost["error"][:300])
    oauth, open_ = cost["oauth"], cost["open"]
    note = (f"load from {oauth['client']}; {len(oauth['runs'])} alternating runs each against "
            f"two servers side by side, both sent the same Authorization header (the second "
            f"ignores it), medians: OAuth ÷ none throughput "
            f"{oauth['rps'] / open_['rps']:.3f}")
    if oauth.get("server_cpu_us") and open_.get("server_cpu_us"):
        note += (f"; server CPU per call {open_['server_cpu_us']:.1f} µs without, "
                 f"{oauth['server_cpu_us']:.1f} µs with OAuth "
                 f"({oauth['server_cpu_us'] - open_['server_cpu_us']:+.1f} µs)")
    return ("P6", what, "imgmcp", f"{oauth['rps']:.0f} calls/s, p50 {fmt_ms(oauth['p50'])}",
            "—", "—", note)


def imgmcp_http_wired(binary, workdir):
    """True when `imgmcp --http` actually serves HTTP (the flag may parse before it is wired)."""
    port = free_port()
    env = dict(os.environ, GEMINI_API_KEY="")
    proc = subprocess.Popen([binary, "--backend", "local", "--http", f"127.0.0.1:{port}",
                             "--data-dir", os.path.join(workdir, "http-probe")],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    try:
        return wait_port(port, proc, 5)
    finally:
        proc.stdin.close()
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure_half_open(binary, workdir, counts, calls, token="bench-token"):
    """R1 (reliability): N connections that send part of a request head and then
    nothing, held open while one client with the right token keeps calling (a fresh connection
    per call, so each call also has to get through the accept side). Per N: the client's p50 and
    slowest call, its errors, and how many of the N the server still held at the end."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "GEMINI_API_KEY"}
    log_path = os.path.join(workdir, "imgmcp-halfopen.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen([binary, "--backend", "local", "--log-level", "error", "--http",
                             f"127.0.0.1:{port}", "--auth-token", token, "--data-dir",
                             os.path.join(workdir, "halfopen-data")],
                            stdin=subprocess.PIPE, stdout=log, stderr=log, env=env)
    out = {}
    try:
        if not wait_port(port, proc, 20):
            return {"error": "did not listen (exit %s)" % proc.poll()}
        headers = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream",
                   "Authorization": "Bearer " + token}

        def post(body, session=None, timeout=10):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            try:
                h = dict(headers)
                if session:
                    h["Mcp-Session-Id"] = session
                conn.request("POST", "/mcp", body=json.dumps(body), headers=h)
                resp = conn.getresponse()
                resp.read()
                return resp.status, resp.getheader("Mcp-Session-Id")
            finally:
                conn.close()

        status, session = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})
        if status != 200:
            return {"error": f"initialize answered {status}"}
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        for n in counts:
            socks = []
            try:
                for _ in range(n):
                    s = socket.create_connection(("127.0.0.1", port), timeout=10)
                    s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    socks.append(s)
                times, errors = [], 0
                for i in range(calls):
                    t0 = time.perf_counter()
                    try:
                        status, _ = post({"jsonrpc": "2.0", "id": i + 1, "method": "ping"},
                                         session)
                        if status != 200:
                            errors += 1
                    except OSError:
                        errors += 1
                    times.append((time.perf_counter() - t0) * 1000)
                held = 0
                for s in socks:  # still open: a read would block, not return EOF
                    s.setblocking(False)
                    try:
                        held += 0 if s.recv(1) == b"" else 1
                    except BlockingIOError:
                        held += 1
                    except OSError:
                        pass
                out[n] = {"p50": pct(times, 0.5), "max": max(times), "errors": errors,
                          "held": held}
            finally:
                for s in socks:
                    s.close()
        return out
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# ---- report ---------------------------------------------------------------------------------

def chain_bench_binary(args):
    """bench_chain_request (bench/gemini): --chain-bench, else beside imgmcp's build tree."""
    if args.chain_bench:
        return os.path.abspath(args.chain_bench)
    guess = os.path.join(os.path.dirname(os.path.dirname(args.imgmcp)), "bench", "gemini",
                         "bench_chain_request")
    return guess if os.path.exists(guess) else None


def measure_chain_request(binary, quick):
    """C1: imgmcp building a `context: "chain"` edit request (gemini::BuildEditRequest) with 0,
    1 and 4 replayed 2K turns, as the Google Benchmark target bench_chain_request measures it:
    median wall and CPU time per request over its repetitions, and the body's size."""
    if not binary:
        return {"error": "pending: bench_chain_request is not built (build the bench_chain_request "
                         "target, or pass --chain-bench)"}
    argv = [binary, "--benchmark_format=json", "--benchmark_report_aggregates_only=true",
            "--benchmark_repetitions=%d" % (3 if quick else 10),
            "--benchmark_min_time=%s" % ("0.05" if quick else "0.5")]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return {"error": f"exit {proc.returncode}: {proc.stderr[-300:]}"}
        report = json.loads(proc.stdout)
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    out = {}
    for b in report.get("benchmarks", []):
        if b.get("aggregate_name") != "median" or b.get("error_occurred"):
            continue
        turns = int(b["run_name"].rsplit("/", 1)[1])
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        out[turns] = {"wall": b["real_time"] * scale, "cpu": b["cpu_time"] * scale,
                      "body_mb": b.get("body_MB", 0.0), "images_mb": b.get("images_MB", 0.0)}
    if sorted(out) != [0, 1, 4]:
        errors = [b.get("error_message", "") for b in report.get("benchmarks", [])
                  if b.get("error_occurred")]
        return {"error": f"expected 0, 1 and 4 turns, got {sorted(out)} {errors[:1]}"}
    return out


def fmt_ms(v):
    return "—" if v is None else (f"{v:.1f} ms" if v < 100 else f"{v:.0f} ms")


def fmt_mb(v):
    return f"{v / 1e6:.2f} MB"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    if r == 0:
        return "0"
    return f"{r:.2f}" if r >= 0.1 else f"1/{1 / r:.0f}"


# ---- PostgreSQL store: replicas ----------------------------------------------------------------
# P7-P9 run imgmcp over HTTP with the embedded SQLite store in one process, and with the PostgreSQL
# store in 1 and in 3 replica processes on one throwaway PostgreSQL (tests/pg/pg_cluster.py, fsync
# on). P7 and P8 send 2026-07-28 stateless requests (a connection per call, as HTTP clients do),
# each tools/call mirroring its session_id into Mcp-Param-Session-Id (replica_support.ModernClient),
# either straight to the replicas (the clients spread the calls over them) or to one URL:
# scripts/cluster's HAProxy, round-robin or routing by session (a consistent hash of that header).

def _replica_support():
    sys.path.insert(0, os.path.join(BENCH, "..", "tests", "integration"))
    import replica_support  # noqa: E402  (Replica, LegacyClient, ModernClient, pg_cluster)
    return replica_support


# (label, store kind, replica processes)
STORE_VARIANTS = [("SQLite, 1 process", "sqlite", 1), ("PostgreSQL, 1 replica", "postgresql", 1),
                  ("PostgreSQL, 3 replicas", "postgresql", 3)]
# P7 and P8 also run through scripts/cluster's HAProxy: (label, its --balance).
CLUSTER_VARIANTS = [("PostgreSQL, 3 replicas, HAProxy round-robin", "roundrobin"),
                    ("PostgreSQL, 3 replicas, HAProxy by session", "session")]
ROUTED_LABEL = CLUSTER_VARIANTS[1][0]  # the P8 target: with session hashing
CLUSTER_REPLICA = re.compile(r"replica (\d+): pid \d+, http://127\.0\.0\.1:(\d+)/mcp")


def start_replicas(rs, store, count, env, backend, workdir, tag, extra_args=()):
    replicas = []
    try:
        data_dir = None
        for i in range(count):
            args = list(extra_args)  # the default log level: Replica reads "listening on"
            if backend == "gemini":
                args += ["--gemini-base-url", env["GEMINI_BASE_URL"]]
            r = rs.Replica(store, *args, env=env, name=f"{tag}-{i}", backend=backend)
            if store == "sqlite":  # one process keeps its own data dir; note it for P9
                data_dir = r.data_dir
            replicas.append(r)
    except Exception:
        for r in replicas:
            r.close()
        raise
    return replicas, data_dir


class BenchCluster:
    """scripts/cluster on the database `store_url` with 3 replicas and HAProxy (`balance`):
    `port` is HAProxy's, `replica_ports` the replicas' (for their /metrics). close() stops it."""

    def __init__(self, store_url, balance, env, backend, extra_args=()):
        args = ["--backend", backend, *extra_args]
        if backend == "gemini":
            args += ["--gemini-base-url", env["GEMINI_BASE_URL"]]
        self.lines = []
        self._changed = threading.Condition()  # a line came (guards nothing: lines only grow)
        self.proc = subprocess.Popen(
            [os.path.join(BENCH, "..", "scripts", "cluster"), "--replicas", "3", "--pg-url",
             store_url, "--balance", balance, "--bin", os.environ["IMGMCP_BIN"], "--", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, **env))
        threading.Thread(target=self._pump, daemon=True).start()
        url = self.proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            self.close()
            raise RuntimeError("scripts/cluster did not start: " + "".join(self.lines[-5:]))
        self.port = int(url.split(":")[2].split("/")[0])
        with self._changed:  # the replicas' lines came before the URL, maybe not yet through
            self._changed.wait_for(lambda: len(self._ports()) == 3, 30)
        self.replica_ports = self._ports()

    def _ports(self):
        return [int(m.group(2)) for m in map(CLUSTER_REPLICA.search, self.lines) if m]

    def _pump(self):
        for line in self.proc.stderr:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Servers:
    """What P7 and P8 send their calls to: the replicas themselves (`balance` None: `ports` are
    theirs, and the clients spread calls over them) or scripts/cluster's HAProxy (`ports` is its
    one port). `replica_ports`: each replica's, for its /metrics. A context manager."""

    def __init__(self, rs, store, count, env, backend, workdir, tag, balance=None, extra_args=()):
        self.replicas, self.cluster = [], None
        if balance is None:
            self.replicas, _ = start_replicas(rs, store, count, env, backend, workdir, tag,
                                              extra_args)
            self.ports = self.replica_ports = [r.port for r in self.replicas]
        else:
            self.cluster = BenchCluster(store, balance, env, backend, extra_args)
            self.ports, self.replica_ports = [self.cluster.port], self.cluster.replica_ports

    def cache_use(self, rs):
        """Per replica: (image cache hits, misses) so far (imgmcp_image_cache_requests_total);
        None when a replica serves no /metrics (--metrics off)."""
        out = []
        for port in self.replica_ports:
            try:
                samples = rs.scrape_metrics(port)
            except rs.CallFailed:
                return None
            out.append(tuple(int(rs.sample(samples, "imgmcp_image_cache_requests_total",
                                           result=result)) for result in ("hit", "miss")))
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for r in self.replicas:
            r.close()
        if self.cluster:
            self.cluster.close()


def cache_text(use):
    """"hit rate per replica 98% (59/60), — (0/0), …" from Servers.cache_use()."""
    if use is None:
        return "image cache: no /metrics"
    parts = [(f"{h / (h + m):.0%}" if h + m else "—") + f" ({h}/{h + m})" for h, m in use]
    return "image cache hit rate per replica " + ", ".join(parts)


def measure_replica_sessions(rs, store, count, fake, small_file, sessions, edits, workdir, tag,
                             extra_args=(), balance=None):
    """P7: `sessions` clients, each: generate, then `edits` sequential edits spread over the
    replicas (or all sent to HAProxy); every Gemini call takes 200 ms (LatencyProxy). Wall time
    of the edits, and each replica's image cache hits and misses."""
    fake.configure(fixed_image_file=small_file, latency_ms=0)
    proxy = LatencyProxy(fake.hostport, 0.2)
    env = {"GEMINI_API_KEY": FAKE_KEY, "GEMINI_BASE_URL": proxy.url}
    try:
        with Servers(rs, store, count, env, "gemini", workdir, tag, balance, extra_args) as servers:
            ports = servers.ports
            for s in range(sessions):
                c = rs.ModernClient(ports[s % len(ports)])
                rs.structured(c.call_tool("generate_image", {
                    "prompt": "a lighthouse", "session_id": f"{tag}-s{s}", "inline": "none"}))
            errors = []

            def worker(s):
                try:
                    clients = [rs.ModernClient(p) for p in ports]
                    for i in range(edits):
                        rs.structured(clients[(s + i) % len(ports)].call_tool("edit_image", {
                            "session_id": f"{tag}-s{s}", "prompt": f"brighter {i}",
                            "inline": "none"}))
                except Exception as e:  # noqa: BLE001
                    errors.append(str(e))

            result = timed_workers(worker, sessions, errors)
            result["cache"] = servers.cache_use(rs)
            return result
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}
    finally:
        proxy.close()


def measure_single_session_rate(rs, store, count, edits, workdir, tag, balance=None):
    """P8: `edits` edits of one session sent at once, round-robin over the replicas (or all to
    HAProxy), with the local backend (no upstream wait): how many edits per second one session's
    line passes, and each replica's image cache hits and misses."""
    try:
        with Servers(rs, store, count, {}, "local", workdir, tag, balance) as servers:
            ports = servers.ports
            rs.structured(rs.ModernClient(ports[0]).call_tool("generate_image", {
                "prompt": "solid white", "session_id": tag, "inline": "none"}))
            clients = [rs.ModernClient(ports[i % len(ports)]) for i in range(edits)]
            errors = []

            def edit(i):
                try:
                    rs.structured(clients[i].call_tool("edit_image", {
                        "session_id": tag, "prompt": rs.draw_prompt(i % 60), "inline": "none"}))
                except Exception as e:  # noqa: BLE001
                    errors.append(str(e))

            t0 = time.perf_counter()
            threads = [threading.Thread(target=edit, args=(i,)) for i in range(edits)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            if errors:
                return {"error": errors[0]}
            return {"rate": edits / wall, "wall": wall, "cache": servers.cache_use(rs)}
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}


def dir_bytes(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                pass
    return total


def measure_bytes_per_version(rs, store, pg, database, versions, workdir, tag):
    """P9: bytes the store keeps per version, for `versions` distinct images (the local backend
    drawing a square more each time): SQLite: the data dir on disk (database, WAL and image
    files, in allocated blocks); PostgreSQL: imgmcp's tables and indexes (pg_total_relation_size,
    TOAST included). Also the images' own mean size."""
    replicas = []
    try:
        replicas, data_dir = start_replicas(rs, store, 1, {}, "local", workdir, tag)
        c = rs.LegacyClient(replicas[0].port)
        image_bytes = [rs.structured(c.call_tool("generate_image", {
            "prompt": "solid white", "session_id": tag, "inline": "none"}))["bytes"]]
        for i in range(versions - 1):
            image_bytes.append(rs.structured(c.call_tool("edit_image", {
                "session_id": tag, "prompt": rs.draw_prompt(i % 60), "inline": "none"}))["bytes"])
        if store == "sqlite":
            for r in replicas:
                r.stop()  # checkpoints the WAL
            stored = dir_bytes(data_dir)
        else:
            stored = int(pg.psql(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = 'imgmcp' AND c.relkind IN ('r', 'm')",
                database=database).strip())
        return {"per_version": stored / versions, "image": statistics.mean(image_bytes)}
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}
    finally:
        for r in replicas:
            r.close()


def measure_rolling_restart(binary, clients=5, after=3):
    """R2: scripts/cluster with 3 replicas on a throwaway PostgreSQL behind HAProxy; `clients`
    threads each stream edit_image calls (local backend, 2026-07-28 stateless, an
    idempotency_key each) to a session of their own while SIGHUP rolls the replicas, then
    `after` more each. Calls made, failed calls, and the roll's wall time."""
    rs = _replica_support()
    env = dict(os.environ, IMGMCP_BIN=binary)
    proc = subprocess.Popen([os.path.join(BENCH, "..", "scripts", "cluster"), "--replicas", "3",
                             "--", "--backend", "local", "--max-versions", "0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    log_lines, roll_done, started = [], threading.Event(), threading.Event()

    def pump():
        for line in proc.stderr:
            log_lines.append(line)
            if "roll: done" in line:
                roll_done.set()
    threading.Thread(target=pump, daemon=True).start()
    made, failed = [0] * clients, [0] * clients
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            return {"error": "scripts/cluster did not start: " + "".join(log_lines[-5:])}
        port = int(url.split(":")[2].split("/")[0])

        def client(c):
            mc = rs.ModernClient(port)
            session, left = f"r2-{c}", after
            try:
                mc.call_tool("generate_image", {"session_id": session, "prompt": "solid white",
                                                "image_size": "512", "inline": "none"})
            except rs.CallFailed:
                failed[c] += 1
            while left > 0 and made[c] < 5000:
                started.set()
                left -= roll_done.is_set()
                try:
                    answer = mc.call_tool("edit_image", {
                        "session_id": session, "prompt": f"draw dot black at {made[c] % 500},4",
                        "inline": "none", "idempotency_key": f"{session}-{made[c]}"})
                    failed[c] += bool(answer.get("error") or answer["result"].get("isError"))
                except rs.CallFailed:
                    failed[c] += 1
                made[c] += 1
        threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
        for t in threads:
            t.start()
        started.wait(60)
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGHUP)
        if not roll_done.wait(180):
            return {"error": "the roll did not finish: " + "".join(log_lines[-5:])}
        roll_wall = time.perf_counter() - t0
        for t in threads:
            t.join(120)
        return {"calls": sum(made), "failed": sum(failed), "roll_wall": roll_wall}
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_store_rows(args, fake, small, workdir, want, rows, results, log):
    """P7 (P5 on each store), P8 (one session's edit rate), P9 (bytes per version)."""
    if not (want("P7") or want("P8") or want("P9")):
        return
    rs = _replica_support()
    os.environ["IMGMCP_BIN"] = args.imgmcp
    log("bench: starting PostgreSQL for P7-P9")
    pg = rs.pg_cluster.PgCluster()
    try:
        sessions, edits = (8, 3) if args.quick else (32, 10)
        # P7 and P8: each store as before, then 3 replicas through scripts/cluster's HAProxy.
        routed = [(label, kind, count, None) for label, kind, count in STORE_VARIANTS] + [
            (label, "postgresql", 3, balance) for label, balance in CLUSTER_VARIANTS]
        if want("P7"):
            base = None
            for label, kind, count, balance in routed:
                log(f"bench: P7 {label}")
                url = (pg.create_database(f"p7_{count}_{balance or 'direct'}")
                       if kind == "postgresql" else kind)
                r = measure_replica_sessions(rs, url, count, fake, small, sessions, edits,
                                             workdir, f"p7-{count}-{safe_tag(label)}",
                                             balance=balance)
                results[("P7", label)] = r
                what = f"{sessions} sessions × {edits} edits (200 ms latency), HTTP"
                if "error" in r:
                    rows.append(("P7", what, "imgmcp", "FAILED", "—", "—",
                                 f"{label}: {r['error'][:300]}"))
                    continue
                base = base or (r["wall"] if kind == "sqlite" else None)
                vs = "" if kind == "sqlite" or base is None else f" = {r['wall'] / base:.2f}× SQLite"
                rows.append(("P7", what, "imgmcp", f"{r['wall']:.2f} s{vs}", "—", "—",
                             f"{label}; {cache_text(r['cache'])}"))
            # The cost of the instrumentation: the SQLite run again with --metrics off.
            log("bench: P7 SQLite, 1 process, --metrics off")
            off = measure_replica_sessions(rs, "sqlite", 1, fake, small, sessions, edits, workdir,
                                           "p7-metrics-off", ["--metrics", "off"])
            on = results.get(("P7", STORE_VARIANTS[0][0]), {})
            if "wall" in off and "wall" in on:
                rows.append(("P7", f"{sessions} sessions × {edits} edits (200 ms latency), HTTP, "
                             "--metrics off", "imgmcp", f"{off['wall']:.2f} s", "—", "—",
                             f"SQLite, 1 process; metrics on ÷ off wall in this run: "
                             f"{on['wall'] / off['wall']:.3f}"))
        if want("P8"):
            n = 20 if args.quick else 60
            base = None
            for label, kind, count, balance in routed:
                log(f"bench: P8 {label}")
                url = (pg.create_database(f"p8_{count}_{balance or 'direct'}")
                       if kind == "postgresql" else kind)
                r = measure_single_session_rate(rs, url, count, n, workdir,
                                                f"p8-{count}-{safe_tag(label)}", balance)
                results[("P8", label)] = r
                what = f"one session, {n} edits sent at once (local backend), HTTP"
                if "error" in r:
                    rows.append(("P8", what, "imgmcp", "FAILED", "—", "—",
                                 f"{label}: {r['error'][:300]}"))
                    continue
                base = base or (r["rate"] if kind == "sqlite" else None)
                vs = "" if kind == "sqlite" or base is None else f" = {r['rate'] / base:.2f}× SQLite"
                rows.append(("P8", what, "imgmcp", f"{r['rate']:.1f} edits/s{vs}", "—", "—",
                             f"{label}; {cache_text(r['cache'])}"))
        if want("P9"):
            n = 20 if args.quick else 100
            base = None
            for label, kind, count in STORE_VARIANTS[:2]:
                log(f"bench: P9 {label}")
                database = f"p9_{count}"
                url = pg.create_database(database) if kind == "postgresql" else kind
                r = measure_bytes_per_version(rs, url, pg, database, n, workdir,
                                              f"p9-{safe_tag(label)}")
                results[("P9", label)] = r
                what = f"bytes stored per version ({n} distinct images)"
                if "error" in r:
                    rows.append(("P9", what, "imgmcp", "FAILED", "—", "—",
                                 f"{label}: {r['error'][:300]}"))
                    continue
                base = base or (r["per_version"] if kind == "sqlite" else None)
                vs = ("" if kind == "sqlite" or base is None
                      else f" = {r['per_version'] / base:.2f}× SQLite")
                rows.append(("P9", what, "imgmcp",
                             f"{r['per_version'] / 1024:.1f} KB{vs} (mean image "
                             f"{r['image'] / 1024:.1f} KB)", "—", "—", label))
    finally:
        pg.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--imgmcp", required=True)
    ap.add_argument("--fake-gemini", required=True)
    ap.add_argument("--out", default=os.path.join(BENCH, "RESULTS.md"))
    ap.add_argument("--calls", type=int, default=15)
    ap.add_argument("--versions", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="fewer calls; for trying the harness")
    ap.add_argument("--only", default="",
                    help="comma list of P1,P2,P3,P4,P5,P6,P7,P8,P9,R1,R2,C1,M1,M2,M3,M4,T1")
    ap.add_argument("--chain-bench", default="",
                    help="bench_chain_request binary for C1 (default: beside imgmcp's build tree)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--baseline-imgmcp", default="",
                    help="an earlier imgmcp build: P3, P6, M2, M3 and M4 measure it too, in the same run")
    ap.add_argument("--baseline-label", default="before",
                    help="what the earlier build is, e.g. a commit (shown in its rows)")
    ap.add_argument("--builds", default="",
                    help="what the measured builds are (e.g. their build type), for --merge's note")
    ap.add_argument("--merge", action="store_true",
                    help="with --only: replace just those rows (and their target lines) in --out, "
                         "saying which run they come from, and keep the rest")
    args = ap.parse_args()
    args.imgmcp = os.path.abspath(args.imgmcp)
    args.fake_gemini = os.path.abspath(args.fake_gemini)
    if args.quick:
        global IDLE_SECONDS  # past the budget's one-second trim, which quick figures need not show
        args.calls, args.versions, IDLE_SECONDS = 3, 100, 1.5
    only = set(x.strip().upper() for x in args.only.split(",") if x.strip())
    want = (lambda p: not only or p in only)

    workdir = tempfile.mkdtemp(prefix="imgmcp-bench-")
    started = time.time()
    big = os.path.join(workdir, "answer-2.8mb.png")
    preview_src = os.path.join(workdir, "answer-2048.png")
    small = os.path.join(workdir, "small.png")
    with open(big, "wb") as f:
        f.write(noisy_png(1024, 912, seed=8))
    with open(preview_src, "wb") as f:
        f.write(textured_png(2048, 2048, seed=9))
    with open(small, "wb") as f:
        f.write(small_png())
    big_size = os.path.getsize(big)
    def log(*a):  # progress on stderr, with the seconds since the harness started
        print(f"[{time.time() - started:6.1f} s]", *a, file=sys.stderr, flush=True)
    log(f"bench: workdir {workdir}; answer {big_size} B, preview source "
        f"{os.path.getsize(preview_src)} B")

    fake = FakeGemini(args.fake_gemini, big, workdir)
    servers = make_servers(args, fake, workdir)
    imgmcp = servers[0]
    peers = servers[1:]
    rows = []  # (id, what, server, value, imgmcp/peer, imgmcp/floor, notes)
    results = {}
    try:
        # ---- P1 + floor ----
        if want("P1"):
            floor = measure_floor(big, args.calls)
            fake_ms = statistics.median(fake.raw_generate_ms()[0] for _ in range(5))
            results["floor"] = floor
            results["P1-fake"] = fake_ms
            for s in servers:
                log(f"bench: P1 {s.name}")
                results[("P1", s.name)] = measure_calls(s, workdir, fake, big, "full", args.calls,
                                                        safe_tag(s.name) + "-p1")
            me = results[("P1", "imgmcp")]
            for s in servers:
                r = results[("P1", s.name)]
                if "error" in r:
                    rows.append(("P1", "generate, full 2.8 MB image", s.name, "FAILED", "—", "—",
                                 r["error"][:300]))
                    continue
                val = (f"median {fmt_ms(r['median'])}, p95 {fmt_ms(r['p95'])}; "
                       f"line {fmt_mb(r['line_bytes'])}, image {fmt_mb(r['image_bytes'])}")
                rp = "—" if s is imgmcp or "error" in me else ratio(me["median"], r["median"])
                rf = ratio(r["median"], floor["median"]) if s is imgmcp else "—"
                rows.append(("P1", "generate, full 2.8 MB image", s.name, val, rp, rf, s.note))
            rows.append(("P1-floor", "base64 + one line through a pipe (python3 minimal program)",
                         "floor", f"median {fmt_ms(floor['median'])}, p95 {fmt_ms(floor['p95'])}; "
                         f"line {fmt_mb(floor['line_bytes'])}", "—", "1.00", ""))
            rows.append(("P1-fake", "fake_gemini's own generateContent answer (inside every P1)",
                         "fake_gemini", f"median {fmt_ms(fake_ms)}", "—", "—",
                         "HTTP client in the harness; shared cost of all servers"))

        # ---- P2 ----
        if want("P2"):
            for s in servers:
                log(f"bench: P2 {s.name}")
                mode = "preview" if s is imgmcp else "full"
                calls = max(3 if args.quick else 5, args.calls // 2)
                results[("P2", s.name)] = measure_calls(s, workdir, fake, preview_src, mode,
                                                        calls, safe_tag(s.name) + "-p2")
            me = results[("P2", "imgmcp")]
            for s in servers:
                r = results[("P2", s.name)]
                what = "preview of a 2048² image" if s is imgmcp else "same call (peer: no preview)"
                if "error" in r:
                    rows.append(("P2", what, s.name, "FAILED", "—", "—", r["error"][:300]))
                    continue
                val = (f"median {fmt_ms(r['median'])}, p95 {fmt_ms(r['p95'])}; "
                       f"line {fmt_mb(r['line_bytes'])}")
                rp = "—" if s is imgmcp or "error" in me else ratio(me["median"], r["median"])
                rows.append(("P2", what, s.name, val, rp, "—", s.note))
            fake.configure(fixed_image_file=preview_src, latency_ms=0)
            fake2_ms = statistics.median(fake.raw_generate_ms()[0] for _ in range(5))
            results["P2-fake"] = fake2_ms
            rows.append(("P2-fake", "fake_gemini's own answer with the 2048² image (inside every "
                         "P2)", "fake_gemini", f"median {fmt_ms(fake2_ms)}", "—", "—",
                         "HTTP client in the harness; shared cost of all servers"))

        # ---- P3 ----
        if want("P3"):
            starts = 3 if args.quick else 5
            for s in servers:
                log(f"bench: P3 {s.name}")
                results[("P3", s.name)] = measure_cold_start(s, workdir, starts, safe_tag(s.name))
            me = results[("P3", "imgmcp")]
            for s in servers:
                r = results[("P3", s.name)]
                if "error" in r:
                    rows.append(("P3", "cold start to initialize answer", s.name, "FAILED", "—",
                                 "—", r["error"][:300]))
                    continue
                rp = "—" if s is imgmcp or "error" in me else ratio(me["median"], r["median"])
                rows.append(("P3", "cold start to initialize answer", s.name,
                             f"median {fmt_ms(r['median'])}", rp, "—", ""))
            if args.baseline_imgmcp:
                # A few per cent apart, two builds need many turns to be told apart on a
                # shared machine; each start of imgmcp costs ~12 ms.
                rows.append(baseline_p3_row(imgmcp, args, workdir, 20 if args.quick else 150,
                                            results, log))
            log("bench: P3 imgmcp, 2026-07-28")
            modern = measure_cold_start(imgmcp, workdir, starts, "imgmcp-modern", modern=True)
            what = "cold start to server/discover answer (2026-07-28)"
            if "error" in modern:
                rows.append(("P3", what, "imgmcp", "FAILED", "—", "—", modern["error"][:300]))
            else:
                results["P3-modern"] = modern["median"]
                rows.append(("P3", what, "imgmcp", f"median {fmt_ms(modern['median'])}", "—", "—",
                             "modern ÷ legacy (initialize) in this run: " +
                             ("—" if "error" in me else ratio(modern["median"], me["median"]))))

        # ---- P4 ----
        if want("P4"):
            for s in servers:
                log(f"bench: P4 {s.name}")
                results[("P4", s.name)] = measure_rss(s, workdir, fake, small, args.versions,
                                                      safe_tag(s.name) + "-p4")
            me = results[("P4", "imgmcp")]
            for s in servers:
                r = results[("P4", s.name)]
                if "error" in r:
                    rows.append(("P4", "RSS idle / after N versions", s.name, "FAILED", "—", "—",
                                 r["error"][:300]))
                    continue
                rp = "—"
                if s is not imgmcp and "error" not in me:
                    rp = f"{ratio(me['idle'], r['idle'])} / {ratio(me['after'], r['after'])}"
                how = ("edit_image ×%d on one session" % (args.versions - 1) if s.edit
                       else "generate_image ×%d (files saved)" % args.versions)
                rows.append(("P4", f"RSS idle / after {args.versions} versions", s.name,
                             f"{r['idle'] / 1024:.1f} MB / {r['after'] / 1024:.1f} MB",
                             rp, "—", f"{how}, {r['wall']:.1f} s"))

        # ---- P5 ----
        if want("P5"):
            log("bench: P5 imgmcp")
            variants = [("default --max-backend-calls 32", []),
                        ("--max-backend-calls 8", ["--max-backend-calls", "8"])]
            edits = 3 if args.quick else 10
            what = f"32 sessions × {edits} edits vs 1 × {edits} (200 ms latency)"
            for label, extra in variants:
                s = Server("imgmcp", imgmcp.argv + extra, imgmcp.env, imgmcp.generate,
                           imgmcp.edit)
                one = measure_sessions(s, workdir, fake, small, 1, edits,
                                       "p5-one" + str(len(extra)))
                many = measure_sessions(s, workdir, fake, small, 32, edits,
                                        "p5-many" + str(len(extra)))
                if "error" in one or "error" in many:
                    rows.append(("P5", what, "imgmcp", "FAILED", "—", "—",
                                 (one.get("error") or many.get("error"))[:300]))
                    continue
                results[("P5", label)] = many["wall"] / one["wall"]
                rows.append(("P5", what, "imgmcp",
                             f"{many['wall']:.2f} s vs {one['wall']:.2f} s = "
                             f"{many['wall'] / one['wall']:.2f}×", "—", "—", label))
            rows.append(("P5", "same", "peers", "n/a", "—", "—",
                         "peers keep no sessions (one global last image)"))

        # ---- P6 ----
        if want("P6"):
            log("bench: P6")
            p6_seconds = 1 if args.quick else 5
            wired = imgmcp_http_wired(args.imgmcp, workdir)
            peer_port = free_port()
            t2i = peers[0]
            peer_env = dict(t2i.env, PORT=str(peer_port))
            peer = measure_http(node_peer("text2image-mcp", "remote.js"), peer_env, workdir,
                                peer_port, "get_last_image_info", {}, p6_seconds, 16,
                                os.path.join(workdir, "t2i-remote.log"))
            if wired:
                port = free_port()
                me = measure_http(
                    [args.imgmcp, "--backend", "local", "--log-level", "warning", "--http",
                     f"127.0.0.1:{port}", "--data-dir", os.path.join(workdir, "http-data")],
                    imgmcp.env, workdir, port, "get_image",
                    {"session_id": "small", "inline": "none", "include_history": False},
                    p6_seconds, 16, os.path.join(workdir, "imgmcp-http.log"),
                    setup={"name": "generate_image",
                           "arguments": {"prompt": "solid teal", "session_id": "small",
                                         "inline": "none"}})
                log("bench: P6 imgmcp, metrics on and --metrics off in turn")
                cost = measure_metrics_cost(args.imgmcp, imgmcp.env, workdir,
                                            rounds=1 if args.quick else 4,
                                            seconds=p6_seconds if args.quick else 3)
                if "error" not in cost and not args.quick:  # callgrind: a minute or more
                    log("bench: P6 imgmcp, instructions per call under callgrind")
                    counts = [instructions_per_call(args.imgmcp, imgmcp.env, workdir, extra)
                              for extra in ([], ["--metrics", "off"])]
                    if None not in counts:
                        cost["instructions"] = counts
                rows.append(metrics_cost_row(cost))
                log("bench: P6 imgmcp, OAuth on and off in turn")
                oauth = measure_oauth_cost(args.imgmcp, imgmcp.env, workdir,
                                           rounds=1 if args.quick else 4,
                                           seconds=p6_seconds if args.quick else 3)
                if "error" not in oauth:
                    results["P6-oauth-cpu-us"] = (oauth["oauth"].get("server_cpu_us", 0)
                                                  - oauth["open"].get("server_cpu_us", 0))
                rows.append(oauth_cost_row(oauth))
                if args.baseline_imgmcp:
                    log(f"bench: P6 imgmcp and imgmcp {args.baseline_label} in turn")
                    pair = measure_side_by_side(
                        {"imgmcp": (args.imgmcp, []),
                         "baseline": (os.path.abspath(args.baseline_imgmcp), [])},
                        imgmcp.env, workdir, "baseline", rounds=2 if args.quick else 4,
                        seconds=p6_seconds if args.quick else 3)
                    if "error" not in pair:
                        results["P6-baseline"] = pair["imgmcp"]["rps"] / pair["baseline"]["rps"]
                    rows.append(baseline_p6_row(pair, args.baseline_label))
                log("bench: P6 imgmcp, 2026-07-28")
                port = free_port()
                modern = measure_http(
                    [args.imgmcp, "--backend", "local", "--log-level", "warning", "--http",
                     f"127.0.0.1:{port}", "--data-dir", os.path.join(workdir, "http-data")],
                    imgmcp.env, workdir, port, "get_image",
                    {"session_id": "small", "inline": "none", "include_history": False},
                    p6_seconds, 16, os.path.join(workdir, "imgmcp-http-modern.log"), modern=True)
                what = "small tools/call over HTTP, 16 clients, 2026-07-28 stateless"
                if "error" in modern:
                    rows.append(("P6", what, "imgmcp", "FAILED", "—", "—",
                                 modern["error"][:300]))
                else:
                    rows.append(("P6", what, "imgmcp",
                                 f"{modern['rps']:.0f} calls/s, p50 {fmt_ms(modern['p50'])}",
                                 "—", "—",
                                 f"{modern['calls']} calls, {modern['errors']} errors, load from "
                                 f"{modern['client']}; modern ÷ legacy throughput in this run: "
                                 + ("—" if "error" in me else ratio(modern["rps"], me["rps"]))
                                 + (f"; CPU per call: server {modern['server_cpu_us']:.0f} µs"
                                    if modern.get("server_cpu_us") is not None else "")
                                 + (f" (first: {modern['first_error'][:200]})"
                                    if modern.get("first_error") else "")))
            else:
                me = {"error": "pending: imgmcp --http is not wired in main yet"}
                results["P6-pending"] = "imgmcp --http does not serve yet"
            for name, r in (("imgmcp", me), ("text2image-mcp-remote@2.4.0", peer)):
                if "error" in r:
                    rows.append(("P6", "small tools/call over HTTP, 16 clients", name,
                                 "pending" if r["error"].startswith("pending") else "FAILED",
                                 "—", "—", r["error"][:300]))
                    continue
                rp = "—"
                if name == "imgmcp" and "error" not in peer:
                    rp = ratio(r["rps"], peer["rps"]) + " (throughput)"
                    results["P6"] = r["rps"] / peer["rps"]
                    results["P6-cpu"] = (r.get("server_cpu_us"), r.get("client_cpu_us"),
                                         peer.get("server_cpu_us"))
                    results["P6-peer-rps"] = peer["rps"]
                cpu = ""
                if r.get("server_cpu_us") is not None:
                    cpu = (f"; CPU per call: server {r['server_cpu_us']:.0f} µs, "
                           f"{r['client']} {r['client_cpu_us']:.0f} µs")
                rows.append(("P6", "small tools/call over HTTP, 16 clients", name,
                             f"{r['rps']:.0f} calls/s, p50 {fmt_ms(r['p50'])}", rp, "—",
                             f"{r['calls']} calls, {r['errors']} errors, load from {r['client']}"
                             + cpu
                             + (f" (first: {r['first_error'][:200]})" if r.get("first_error")
                                else "")))

        # ---- R1 ----
        if want("R1"):
            log("bench: R1")
            counts = [400] if args.quick else [0, 100, 400, 1000]
            calls = 20 if args.quick else 100
            r = measure_half_open(args.imgmcp, workdir, counts, calls)
            what = "pings with the token while N half-open connections are held"
            if "error" in r:
                rows.append(("R1", what, "imgmcp", "FAILED", "—", "—", r["error"][:300]))
            for n, m in ([] if "error" in r else sorted(r.items())):
                rows.append(("R1", what + f" (N = {n})", "imgmcp",
                             f"p50 {fmt_ms(m['p50'])}, slowest {fmt_ms(m['max'])}, "
                             f"{m['errors']} errors", "—", "—",
                             f"{calls} calls, a new connection each; {m['held']} of the {n} "
                             f"half-open connections still open at the end (the server keeps "
                             f"512 waiting, closing the longest waiting beyond that)"))

        # ---- R2 (full runs only: the rolling-restart test covers its behaviour in CI) ----
        if want("R2") and not args.quick:
            log("bench: R2")
            r = measure_rolling_restart(args.imgmcp)
            what = "rolling restart of 3 replicas (scripts/cluster, SIGHUP) under 5 editing clients"
            if "error" in r:
                rows.append(("R2", what, "imgmcp", "FAILED", "—", "—", r["error"][:300]))
            else:
                results["R2"] = r
                rows.append(("R2", what, "imgmcp", f"{r['failed']} failed of {r['calls']} calls",
                             "—", "—", f"the roll took {r['roll_wall']:.1f} s (each replica "
                             f"drains, exits 0 and is ready again before the next); HAProxy "
                             f"checks /readyz; 2026-07-28 stateless edit_image calls with "
                             f"idempotency keys, local backend"))

        # ---- M1 ----
        if want("M1"):
            refs = 4 if args.quick else 14
            what = f"3 concurrent generate_image calls, {refs} references of a 12.6 MB PNG each"
            for budget in (512, 0):
                log(f"bench: M1 --max-inflight-mb {budget}")
                r = measure_memory_budget(imgmcp, workdir, fake, small, budget,
                                          f"imgmcp-m1-{budget}", refs=refs)
                label = f"--max-inflight-mb {budget}" if budget else "no budget (0)"
                if "error" in r:
                    rows.append(("M1", what, "imgmcp", "FAILED", "—", "—",
                                 f"{label}: {r['error']}"))
                    continue
                results[("M1", budget)] = r
                rows.append(("M1", what, "imgmcp",
                             f"peak {r['peak'] / 1024:.0f} MB, after {r['after'] / 1024:.0f} MB",
                             "—", "—",
                             f"{label}: {r['ok']} applied, {r['busy']} refused as busy; peak "
                             f"before the edits {r['idle_peak'] / 1024:.0f} MB; references by "
                             f"path, {r['ref_mb']:.1f} MB each; after: {IDLE_SECONDS} s after "
                             f"the calls"))

        # ---- M2-M4 (before and after, when --baseline-imgmcp names an earlier build) ----
        run_memory_rows(args, workdir, want, rows, results, log)

        # ---- C1 ----
        if want("C1"):
            log("bench: C1")
            r = measure_chain_request(chain_bench_binary(args), args.quick)
            what = "building a chain edit's request, 4 replayed 2K turns"
            if "error" in r:
                rows.append(("C1", what, "imgmcp",
                             "pending" if r["error"].startswith("pending") else "FAILED",
                             "—", "—", r["error"][:300]))
            else:
                four, one, plain = r[4], r[1], r[0]
                results["C1"] = r
                rows.append(("C1", what, "imgmcp",
                             f"median {fmt_ms(four['wall'])} ({fmt_ms(four['cpu'])} CPU); body "
                             f"{four['body_mb']:.1f} MB", "—", "—",
                             f"gemini::BuildEditRequest in bench_chain_request: the 4 turns' "
                             f"{four['images_mb']:.1f} MB of PNGs as base64 beside the stored parts "
                             f"and signatures; 1 turn {fmt_ms(one['wall'])} ({fmt_ms(one['cpu'])} "
                             f"CPU, {one['body_mb']:.1f} MB), a plain edit of one 2K image "
                             f"{fmt_ms(plain['wall'])} ({fmt_ms(plain['cpu'])} CPU, "
                             f"{plain['body_mb']:.1f} MB); reading the turns from the store is "
                             f"not included"))
        # ---- P7-P9: the PostgreSQL store, 1 and 3 replicas, against SQLite ----
        run_store_rows(args, fake, small, workdir, want, rows, results, log)
        # ---- T1: MCP Tasks, a round trip against a direct call; tasks/get on both stores ----
        run_task_rows(args, want, rows, results, log)
    finally:
        fake.close()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    elapsed = time.time() - started
    lines = [
        "# imgmcp benchmarks",
        "",
        f"One run of `scripts/bench` on {platform.node() or 'this machine'} "
        f"({os.cpu_count()} CPUs, {platform.machine()}, Node {node_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}), {elapsed:.0f} s. Every number comes from the same "
        "run; the machine is shared, so read the ratios, not the absolute times. Gemini is "
        "`tests/fake_gemini` on 127.0.0.1 answering with a fixed image generated at run time "
        f"(a {big_size / 1e6:.2f} MB noise PNG for P1, a 2048² PNG for P2, a 64² PNG for P4/P5). "
        f"One client (bench/harness/run.py) drives every server over stdio; N = {args.calls} "
        "calls after one warm-up; times run from writing the request to receiving the whole "
        "answer line. Ratios are imgmcp ÷ other (below 1 = imgmcp is faster/smaller; P6 is "
        "throughput, above 1 = imgmcp is faster).",
        "",
        "| row | what | server | result | imgmcp/peer | imgmcp/floor | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append("| " + " | ".join(str(x).replace("|", "/").replace("\n", " ") for x in r)
                     + " |")
    lines += ["", "Targets, as measured in this run:", ""]
    lines += ["- " + t for t in targets(results) + memory_targets(results)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.merge and only and os.path.exists(args.out):
        ids = ", ".join(sorted(only))
        baseline = (f"; `imgmcp {args.baseline_label}` is an earlier build measured in the same "
                    f"run" if args.baseline_imgmcp else "")
        builds = f" ({args.builds})" if args.builds else ""
        text = merged_results(args.out, text, only, (
            f"Rows {ids}: a later run (`--only {ids} --merge`) on "
            f"{platform.node() or 'this machine'} ({os.cpu_count()} CPUs, "
            f"{time.strftime('%Y-%m-%d %H:%M')}), {elapsed:.0f} s, of builds{builds} of the "
            f"commit the file is in{baseline}; the other rows are from the run above."))
    with open(args.out, "w") as f:
        f.write(text)
    log(f"bench: wrote {args.out}")


def targets(results):
    """One line per benchmark target: the measured ratio and whether it is met."""
    out = []

    def ok(cond):
        return "met" if cond else "not met"

    def get(key):
        r = results.get(key)
        return None if r is None or "error" in r else r

    me = get(("P1", "imgmcp"))
    t2i = get(("P1", "text2image-mcp@2.4.0"))
    floor = results.get("floor")
    if me and t2i:
        x = t2i["median"] / me["median"]
        line = f"P1 ≥ 20× faster than text2image-mcp: {x:.1f}× — {ok(x >= 20)}"
        bounds = []
        if floor:  # every full-image answer includes piping its base64 to the client
            bounds.append(f"20× would be {fmt_ms(t2i['median'] / 20)}, under the "
                          f"{fmt_ms(floor['median'])} floor of only piping the answer")
        fake_ms = results.get("P1-fake")
        if fake_ms:  # no server can answer before the fake has answered it
            bounds.append(f"the fake's own answer takes {fmt_ms(fake_ms)}, so no server can be "
                          f"more than {t2i['median'] / fake_ms:.1f}× faster than "
                          f"text2image-mcp here")
        if bounds:
            line += " (" + "; ".join(bounds) + ")"
        out.append(line)
    if me and floor:
        x = me["median"] / floor["median"]
        out.append(f"P1 ≤ 3× the floor: {x:.1f}× — {ok(x <= 3)}")
    me = get(("P2", "imgmcp"))
    peers = [get(k) for k in results if isinstance(k, tuple) and k[0] == "P2" and k[1] != "imgmcp"]
    peers = [p for p in peers if p and p.get("image_bytes")]
    if me and peers:
        best = min(p["median"] for p in peers)
        x = best / me["median"]
        line = (f"P2 ≥ 5× the best peer (peers return the full image; none previews): "
                f"{x:.1f}× — {ok(x >= 5)}")
        fake_ms = results.get("P2-fake")
        if fake_ms:
            line += (f" (the fake's own answer takes {fmt_ms(fake_ms)}, so at most "
                     f"{best / fake_ms:.1f}× is possible here)")
        out.append(line)
    me = get(("P3", "imgmcp"))
    peers = [get(k) for k in results if isinstance(k, tuple) and k[0] == "P3" and k[1] != "imgmcp"]
    peers = [p for p in peers if p]
    if me and peers:
        x = min(p["median"] for p in peers) / me["median"]
        out.append(f"P3 ≤ 1/20 of the fastest Node peer: 1/{x:.0f} — {ok(x >= 20)}")
    me = get(("P4", "imgmcp"))
    peers = [get(k) for k in results if isinstance(k, tuple) and k[0] == "P4" and k[1] != "imgmcp"]
    peers = [p for p in peers if p]
    if me and peers:
        x = min(p["idle"] for p in peers) / me["idle"]
        out.append(f"P4 idle ≤ 1/8 of the lightest Node peer: 1/{x:.1f} — {ok(x >= 8)}; after "
                   f"the versions {me['after'] / 1024:.1f} MB (idle {me['idle'] / 1024:.1f} MB)")
    r = results.get(("P5", "default --max-backend-calls 32"))
    if r:
        out.append(f"P5 wall ≤ 1.3× the single session (default --max-backend-calls 32): "
                   f"{r:.2f}× — {ok(r <= 1.3)}")
    r = results.get(("P5", "--max-backend-calls 8"))
    if r:
        out.append(f"(not a target) with --max-backend-calls 8 the 32 sessions share 8 Gemini "
                   f"slots: {r:.2f}×, against 32/8 = 4 rounds expected")
    r = results.get("P6")
    if r is not None:
        line = f"P6 ≥ 10× text2image-mcp-remote: {r:.1f}× — {ok(r >= 10)}"
        mine, client, theirs = results.get("P6-cpu", (None, None, None))
        if mine and client and theirs:
            # Server and load client share the machine's cores: at N calls/s they need
            # N × (server + client) CPU-seconds per second.
            cores = os.cpu_count() or 1
            line += (f" (CPU per call: imgmcp {mine:.0f} µs, text2image-mcp-remote {theirs:.0f} µs "
                     f"= {theirs / mine:.1f}×; the load client itself takes {client:.0f} µs per "
                     f"call, so {cores} cores allow at most "
                     f"{cores / ((mine + client) * 1e-6):.0f} calls/s with imgmcp as it is, and "
                     f"10× the peer would need imgmcp at "
                     f"{max(0.0, cores * 1e6 / (10 * results['P6-peer-rps']) - client):.0f} µs "
                     f"per call)")
        out.append(line)
    elif "P6-pending" in results:
        out.append("P6 ≥ 10×: pending (" + results["P6-pending"] + ")")
    # Against an earlier build measured in turn in this run: a change must not make either worse
    # (5 % of the noise of a shared machine allowed).
    r = results.get("P3-baseline")
    if r is not None:
        out.append(f"P3 no slower than the earlier build: this ÷ earlier {r:.2f} — "
                   f"{ok(r <= 1.05)}")
    r = results.get("P6-baseline")
    if r is not None:
        out.append(f"P6 throughput no lower than the earlier build's: this ÷ earlier {r:.2f} — "
                   f"{ok(r >= 0.95)}")
    r = results.get("P6-oauth-cpu-us")
    if r is not None:
        out.append(f"P6 with OAuth (a JWT on every call, keys cached) ≤ +10 µs server CPU per "
                   f"call: {r:+.1f} µs — {ok(r <= 10)}")
    sqlite, routed = get(("P8", STORE_VARIANTS[0][0])), get(("P8", ROUTED_LABEL))
    if sqlite and routed:
        ratio_routed = routed["rate"] / sqlite["rate"]
        out.append(f"P8 one session's edits through 3 replicas routed by session (HAProxy hashing "
                   f"Mcp-Param-Session-Id) ≥ 0.95× SQLite: {ratio_routed:.2f}× — "
                   f"{ok(ratio_routed >= 0.95)}; {cache_text(routed['cache'])}")
    labels = [label for label, _, _ in STORE_VARIANTS] + [label for label, _ in CLUSTER_VARIANTS]
    for row, what, key, fmt in (("P7", "P5 on each store (HTTP), wall", "wall", "{:.2f} s"),
                                ("P8", "one session's edit rate", "rate", "{:.1f} edits/s"),
                                ("P9", "bytes per version", "per_version", "{:.0f} B")):
        got = [(label, get((row, label))) for label in labels]
        got = [(label, r[key]) for label, r in got if r]
        if len(got) > 1:
            base = got[0][1]
            out.append(f"(not a target) {row} {what}: " + "; ".join(
                f"{label} {fmt.format(v)}" + ("" if i == 0 else f" ({v / base:.2f}×)")
                for i, (label, v) in enumerate(got)))
    r = results.get("R2")
    if r:
        out.append(f"R2 a rolling restart fails no call: {r['failed']} of {r['calls']} failed — "
                   f"{ok(r['failed'] == 0)}")
    r = results.get(("M1", 512))
    if r:
        margin = 64
        peak = r["peak"] / 1024
        out.append(f"M1 peak ≤ --max-inflight-mb 512 + {margin} MB margin (idle, one decoded "
                   f"frame, the call's JSON): {peak:.0f} MB — {ok(peak <= 512 + margin)}; after "
                   f"{r['after'] / 1024:.0f} MB")
    return out


def node_version():
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


if __name__ == "__main__":
    main()
