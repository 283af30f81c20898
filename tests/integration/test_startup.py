"""Start-up order (docs/design.md §3): the server answers initialize before any slow work — no network, and
the session store opens in the background — while a tool call that arrives during the open waits
for it and then sees the stored state, in arrival order.

The order is shown by events, not by a time budget: IMGMCP_TEST_STORE_OPEN_GATE (a test hook read
by the binary) names a FIFO that the background open waits on until the test opens it for writing
and closes it. Whatever is answered while the gate is shut was answered without the store.
"""
import os
import select
import shutil
import socket
import tempfile
import threading
import unittest

from mcp_harness import ServerProcess
from tools_support import small_png_b64, structured

GATE_TIMEOUT = 30  # seconds for the server to reach its end of the gate; a bound, not a measure


class StoreOpenGate:
    """A FIFO the server's background store open waits on until release()."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "store-open-gate")
        os.mkfifo(self.path)
        self.released = False

    def release(self):
        """Lets the store open. Opening the write end waits for the server's read end, so it runs
        on a thread: a server that never reaches the gate fails the test instead of hanging it."""
        if self.released:
            return
        self.released = True
        opened = threading.Event()

        def open_and_close():
            os.close(os.open(self.path, os.O_WRONLY))
            opened.set()

        threading.Thread(target=open_and_close, daemon=True).start()
        if not opened.wait(GATE_TIMEOUT):
            raise AssertionError("the server never opened " + self.path)


class SlowStoreOpen(unittest.TestCase):
    def setUp(self):
        self.data_dir = tempfile.mkdtemp(prefix="imgmcp-startup-")
        self.addCleanup(shutil.rmtree, self.data_dir, True)
        # A previous run left session "old" at version 2 (1: import, 2: invert).
        with ServerProcess(args=["--backend", "local"], data_dir=self.data_dir) as first:
            first.initialize()
            structured(first.call_tool("edit_image", {
                "session_id": "old", "prompt": "invert", "inline": "none",
                "image": {"data": small_png_b64(8, (10, 20, 30)), "mime_type": "image/png"}}))
            first.close_stdin()
            self.assertEqual(first.wait_exit(), 0)

    def start_gated(self):
        """A server whose store cannot finish opening until the returned gate is released."""
        gate_dir = tempfile.mkdtemp(prefix="imgmcp-gate-")
        self.addCleanup(shutil.rmtree, gate_dir, True)
        gate = StoreOpenGate(gate_dir)
        server = ServerProcess(args=["--backend", "local"], data_dir=self.data_dir,
                               env={"IMGMCP_TEST_STORE_OPEN_GATE": gate.path})
        self.addCleanup(server.__exit__, None, None, None)
        # Runs first (cleanups are last in, first out): a shut gate would keep the server's exit
        # waiting for the open.
        self.addCleanup(lambda: server.proc.poll() is None and gate.release())
        return server, gate

    def assert_unanswered(self, server, ids):
        """None of `ids` was answered before a ping sent after them was."""
        self.assertEqual(server.request("ping")["result"], {})
        answered = {m.get("id") for m in server.pending}
        self.assertEqual(answered & set(ids), set(), "answered before the store had opened")

    def test_initialize_is_answered_while_the_store_opens_and_calls_wait_for_it(self):
        server, gate = self.start_gated()
        # The gate is shut, so the store has not opened: none of these waited for it.
        server.initialize()
        self.assertEqual(server.request("ping")["result"], {})
        tools = server.request("tools/list")["result"]["tools"]
        self.assertEqual(len(tools), 4)

        # Sent while the store is still opening: they wait, then see the old state and keep
        # their arrival order.
        get_id, edit1_id, edit2_id, list_id = (server.next_id() for _ in range(4))
        server.send({"jsonrpc": "2.0", "id": get_id, "method": "tools/call", "params": {
            "name": "get_image", "arguments": {"session_id": "old", "inline": "none"}}})
        server.send({"jsonrpc": "2.0", "id": edit1_id, "method": "tools/call", "params": {
            "name": "edit_image", "arguments": {"session_id": "old", "prompt": "invert",
                                                "expected_version": 2, "inline": "none"}}})
        server.send({"jsonrpc": "2.0", "id": edit2_id, "method": "tools/call", "params": {
            "name": "edit_image", "arguments": {"session_id": "old", "prompt": "grayscale",
                                                "expected_version": 3, "inline": "none"}}})
        server.send({"jsonrpc": "2.0", "id": list_id, "method": "resources/list"})
        self.assert_unanswered(server, [get_id, edit1_id, edit2_id, list_id])
        gate.release()

        got = structured(server.wait_for(lambda m: m.get("id") == get_id, timeout=60))
        self.assertEqual((got["session_id"], got["version"]), ("old", 2))
        self.assertEqual([h["operation"] for h in got["history"]], ["import", "edit"])

        first = structured(server.wait_for(lambda m: m.get("id") == edit1_id, timeout=60))
        second = structured(server.wait_for(lambda m: m.get("id") == edit2_id, timeout=60))
        self.assertEqual((first["version"], first["parent_version"]), (3, 2))
        self.assertEqual((second["version"], second["parent_version"]), (4, 3))
        listing = server.wait_for(lambda m: m.get("id") == list_id, timeout=60)["result"]
        self.assertIn("imgmcp://sessions/old", [r["uri"] for r in listing["resources"]])

    def test_a_store_that_fails_to_open_is_reported_to_calls_not_by_dying(self):
        # Passes the fast start-up check (a regular file), fails in SQLite.
        with open(os.path.join(self.data_dir, "imgmcp.db"), "r+b") as f:
            f.write(b"this is not an SQLite database" * 10)
        for name in os.listdir(self.data_dir):
            if name.startswith("imgmcp.db-"):
                os.remove(os.path.join(self.data_dir, name))
        server, gate = self.start_gated()
        server.initialize()
        # Arrives while the store is still opening, and learns that the open failed.
        get_id = server.next_id()
        server.send({"jsonrpc": "2.0", "id": get_id, "method": "tools/call", "params": {
            "name": "get_image", "arguments": {"session_id": "old"}}})
        self.assert_unanswered(server, [get_id])
        gate.release()
        resp = server.wait_for(lambda m: m.get("id") == get_id, timeout=60)
        self.assertTrue(resp["result"].get("isError"), resp)
        self.assertIn("imgmcp.db", resp["result"]["content"][0]["text"])
        self.assertEqual(server.request("ping")["result"], {})


class NoNetworkAtStartup(unittest.TestCase):
    def test_gemini_backend_connects_to_nothing_until_a_call(self):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        server = ServerProcess(
            args=["--backend", "gemini", "--gemini-base-url", f"http://127.0.0.1:{port}",
                  "--gemini-timeout", "2"],
            env={"GEMINI_API_KEY": "dummy-startup-key"})
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        server.request("tools/list")
        server.request("resources/list")
        self.assertEqual(server.request("ping")["result"], {})
        readable, _, _ = select.select([listener], [], [], 0)
        self.assertEqual(readable, [], "the server connected to the backend during start-up")
        # The same listener does see a connection once a call needs the backend: the check above
        # was able to fail.
        server.send({"jsonrpc": "2.0", "id": "gen", "method": "tools/call", "params": {
            "name": "generate_image", "arguments": {"prompt": "solid red", "inline": "none"}}})
        readable, _, _ = select.select([listener], [], [], 30)
        self.assertEqual(readable, [listener])


if __name__ == "__main__":
    unittest.main()
