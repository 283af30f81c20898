"""Helpers shared by the tool integration tests: small images, result unpacking, assertions."""
import base64
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "demo"))
import pngio  # noqa: E402  (demo/pngio.py)

from mcp_harness import ServerProcess  # noqa: E402,F401


def small_png_b64(size=32, rgb=(200, 40, 40)):
    return base64.b64encode(pngio.solid_png(size, size, rgb)).decode()


def tool_result(resp):
    """The result of a tools/call response; fails loudly on a JSON-RPC error."""
    if "result" not in resp:
        raise AssertionError(f"expected a result, got {resp}")
    return resp["result"]


def ok_result(resp):
    result = tool_result(resp)
    if result.get("isError"):
        raise AssertionError(f"tool failed: {result['content'][0]['text']}")
    return result


def error_text(resp):
    result = tool_result(resp)
    if not result.get("isError"):
        raise AssertionError(f"expected isError, got {result.get('structuredContent')}")
    return result["content"][0]["text"]


def structured(resp):
    return ok_result(resp)["structuredContent"]


def blocks(resp, kind):
    return [c for c in ok_result(resp)["content"] if c["type"] == kind]


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def start_server(test, data_dir=None, extra_args=(), env=None):
    server = ServerProcess(args=["--backend", "local", *extra_args], data_dir=data_dir, env=env)
    test.addCleanup(server.__exit__, None, None, None)
    server.initialize()
    return server


def new_session_with_image(server, session_id, size=32, rgb=(200, 40, 40)):
    """Imports a small solid image as version 1 and inverts it as version 2 (fast edits)."""
    resp = server.call_tool("edit_image", {
        "session_id": session_id, "prompt": "invert", "inline": "none",
        "image": {"data": small_png_b64(size, rgb), "mime_type": "image/png"}})
    return structured(resp)


def wait_until(predicate, timeout=20.0, what="condition"):
    """predicate()'s first truthy value, polled every 20 ms (no fixed sleep stands for the
    condition); AssertionError naming `what` and the last value when `timeout` s pass first."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")
