"""Resident memory of the real binary under the memory budget (--max-inflight-mb) and after a run
of calls: the bounds the budget and the allocator settings are for (docs/design.md §6).

- 16 local 4K generations sent at once: each holds about 129 MB while it runs (a 4096x4096 frame
  and the PNG written from it), so with a 64 MB budget every one is refused as larger than the
  whole budget, and with 160 MB one runs at a time while the others are refused as busy. The peak
  (VmHWM) stays under the budget plus what the process held before plus 64 MB of slack: the
  JSON-RPC lines, sixteen worker threads' stacks, what the allocator keeps beside the buffers,
  and the estimate being an estimate. Before the generations were leased it reached 1.8 GB.
- 30 edits importing a 4.3 MB image, one after the other over HTTP (each on a thread of the
  listener's pool), and 30 importing a 1.9 MB one: resident memory afterwards (VmRSS) comes back
  to within 64 MB of what it was after the first call (--cache-mb 0: the cache of recent images
  would hold up to its size by design): the 4.3 MB imports are trimmed once the calls stop (a
  second without a lease taken or given), the 1.9 MB ones (under 16 MB leased) are held to four
  malloc arenas. With glibc's default of 8 arenas a core, each keeping the high-water mark of the
  calls that ran on it, they left about 345 and 200 MB.
- The HTTP server runs with glibc's larger per-thread cache (common/allocator.h): it re-executes
  itself once with GLIBC_TUNABLES set, keeping its pid; an operator's own tcache_count stands; a
  stdio server is left as it starts.

RSS figures mean nothing under a sanitizer (shadow memory, ASan's quarantine): this file is
labelled no_sanitizer (tests/integration/CMakeLists.txt) and skips a sanitizer build. These are
bounds on memory, not timings; the figures themselves are in bench/RESULTS.md (M2, M3).
"""
import base64
import json
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from imgmcp_process import HttpProcess, binary_path  # noqa: E402  (tests/support)
from mcp_harness import ServerProcess  # noqa: E402
from tools_support import pngio, wait_until  # noqa: E402

MB = 1024 * 1024
SLACK_MB = 64


def status_mb(pid, field):
    """A field of /proc/PID/status (VmHWM: peak resident, VmRSS: resident now) in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def sanitizer_build():
    if "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ:
        return True
    with open(binary_path(), "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data


SANITIZED = sanitizer_build()


@unittest.skipIf(SANITIZED, "resident memory means nothing under a sanitizer")
class ConcurrentGenerations(unittest.TestCase):
    CALLS = 16

    def generate_all(self, budget_mb):
        """Sends CALLS local 4K generations at once; returns (answers, peak MB, baseline MB)."""
        server = ServerProcess(args=["--backend", "local", "--max-inflight-mb", str(budget_mb)])
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        baseline = status_mb(server.proc.pid, "VmHWM")
        ids = []
        for i in range(self.CALLS):
            ids.append(server.next_id())
            server.send({"jsonrpc": "2.0", "id": ids[-1], "method": "tools/call", "params": {
                "name": "generate_image", "arguments": {
                    "session_id": f"g{i}", "prompt": f"a lighthouse, take {i}",
                    "image_size": "4K", "inline": "none"}}})
        answers = [server.wait_for(lambda m, i=i: m.get("id") == i and "method" not in m,
                                   timeout=240)["result"] for i in ids]
        return answers, status_mb(server.proc.pid, "VmHWM"), baseline

    def test_with_64_mb_every_4k_generation_is_larger_than_the_whole_budget(self):
        answers, peak, baseline = self.generate_all(64)
        self.assertLessEqual(peak, baseline + 64 + SLACK_MB,
                             f"peak {peak:.0f} MB, {baseline:.0f} MB before the calls")
        for answer in answers:
            self.assertTrue(answer.get("isError"), answer.get("structuredContent"))
            text = answer["content"][0]["text"]
            self.assertIn("(making a 4096x4096 image) needs about 129 MB", text)
            self.assertIn("more than the whole --max-inflight-mb budget (64 MB)", text)

    def test_with_160_mb_one_runs_at_a_time_and_the_peak_stays_in_the_budget(self):
        answers, peak, baseline = self.generate_all(160)
        applied = [a for a in answers if not a.get("isError")]
        busy = [a for a in answers if a.get("isError")]
        self.assertGreaterEqual(len(applied), 1)
        for answer in busy:
            self.assertIn("busy: calls in flight hold", answer["content"][0]["text"])
        self.assertLessEqual(peak, baseline + 160 + SLACK_MB,
                             f"peak {peak:.0f} MB, {baseline:.0f} MB before the calls; "
                             f"{len(applied)} applied, {len(busy)} busy")


class McpOverHttp:
    """One MCP session over HTTP; every request on a new connection (as a client with no
    keep-alive would), so calls land on the listener's threads in turn."""

    def __init__(self, server):
        self.server = server
        self.session = None
        _, headers, _ = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test_memory_rss", "version": "1"}}})
        self.session = headers["mcp-session-id"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message):
        conn = self.server.connection(timeout=120)
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

    def call_tool(self, call_id, name, arguments):
        status, headers, body = self.post({"jsonrpc": "2.0", "id": call_id,
                                           "method": "tools/call",
                                           "params": {"name": name, "arguments": arguments}})
        if status != 200:
            raise AssertionError(f"HTTP {status}: {body[:300]!r}")
        if headers.get("content-type", "").startswith("text/event-stream"):
            datas = [line[5:] for line in body.split(b"\n") if line.startswith(b"data:")]
            body = next(d for d in reversed(datas) if d.strip())
        return json.loads(body)["result"]


@unittest.skipIf(SANITIZED, "resident memory means nothing under a sanitizer")
class IdleAfterSequentialImports(unittest.TestCase):
    CALLS = 30

    def assert_memory_comes_back(self, width, height):
        """CALLS edits, each importing a width x height noise PNG; resident memory after them
        is within SLACK_MB of what it was after the first."""
        png = pngio.encode_png(width, height, random.Random(3).randbytes(width * height * 4))
        image = {"data": base64.b64encode(png).decode(), "mime_type": "image/png"}
        server = HttpProcess("--backend", "local", "--max-inflight-mb", "64", "--cache-mb", "0")
        self.addCleanup(server.close)
        client = McpOverHttp(server)
        settled = None
        for i in range(self.CALLS):
            result = client.call_tool(i + 1, "edit_image", {
                "session_id": f"import-{i}", "prompt": "invert", "image": image})
            self.assertFalse(result.get("isError"), result["content"][0]["text"])
            if settled is None:
                settled = status_mb(server.proc.pid, "VmRSS")
        # The budget trims once no lease has come or gone for a second (common/byte_budget.h).
        bound = settled + SLACK_MB
        came_back = True
        try:
            wait_until(lambda: status_mb(server.proc.pid, "VmRSS") <= bound, timeout=20,
                       what=f"resident memory to come back under {bound:.0f} MB")
        except AssertionError:
            came_back = False
        self.assertTrue(came_back, f"{status_mb(server.proc.pid, 'VmRSS'):.0f} MB resident 20 s "
                        f"after {self.CALLS} imports of {len(png) / MB:.1f} MB, {settled:.0f} MB "
                        f"after the first; peak {status_mb(server.proc.pid, 'VmHWM'):.0f} MB")

    def test_after_imports_of_4_mb(self):
        # A call of this size leases more than 16 MB: the heap is trimmed once calls stop.
        self.assert_memory_comes_back(1200, 900)

    def test_after_imports_of_2_mb(self):
        # These lease less than 16 MB and do not trim: the bound on malloc arenas keeps it.
        self.assert_memory_comes_back(800, 600)


def tunables_of(pid):
    """GLIBC_TUNABLES as the process PID was started with; None when unset."""
    with open(f"/proc/{pid}/environ", "rb") as f:
        for entry in f.read().split(b"\0"):
            if entry.startswith(b"GLIBC_TUNABLES="):
                return entry.split(b"=", 1)[1].decode()
    return None


class AllocatorTunables(unittest.TestCase):
    def test_the_http_server_restarts_itself_with_the_larger_thread_cache(self):
        server = HttpProcess("--backend", "local")
        self.addCleanup(server.close)
        # The pid Popen knows is the server's: the re-execution kept it.
        self.assertEqual(tunables_of(server.proc.pid), "glibc.malloc.tcache_count=64")
        self.assertTrue(McpOverHttp(server).session)

    def test_an_operators_own_thread_cache_setting_stands(self):
        server = HttpProcess("--backend", "local",
                             env={"GLIBC_TUNABLES": "glibc.malloc.tcache_count=7"})
        self.addCleanup(server.close)
        self.assertEqual(tunables_of(server.proc.pid), "glibc.malloc.tcache_count=7")

    def test_a_stdio_server_is_left_as_it_starts(self):
        server = ServerProcess(args=["--backend", "local"])
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        self.assertIsNone(tunables_of(server.proc.pid))


if __name__ == "__main__":
    unittest.main()
