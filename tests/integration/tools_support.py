"""Helpers shared by the integration tests: images (small, noisy) and reading them back,
result unpacking, assertions, waits."""
import base64
import hashlib
import os
import random
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "demo"))
import pngio  # noqa: E402  (demo/pngio.py)

from mcp_harness import ServerProcess  # noqa: E402,F401


def small_png_b64(size=32, rgb=(200, 40, 40)):
    return base64.b64encode(pngio.solid_png(size, size, rgb)).decode()


def noisy_png(width, height, seed=3):
    """An RGB PNG of random pixels, which does not compress: about width * height * 3 bytes."""
    rng = random.Random(seed)
    rows = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def center_pixel(path):
    """The (r, g, b, a) at the middle of the PNG file at `path`."""
    decoded = pngio.decode_png(read_bytes(path))
    return pngio.pixel(decoded, decoded[0] // 2, decoded[1] // 2)


def jpeg_size(data):
    """(width, height) from a JPEG's SOFn header; fails unless the bytes are a whole JPEG (SOI
    first, EOI last)."""
    if data[:2] != b"\xff\xd8" or data[-2:] != b"\xff\xd9":
        raise AssertionError("not a complete JPEG (SOI/EOI missing)")
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise AssertionError(f"bad JPEG marker at {pos}")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[pos + 5:pos + 9])
            return width, height
        pos += 2 + length
    raise AssertionError("JPEG has no SOF marker")


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


def under_sanitizer():
    """Whether the binary runs under ASan or TSan (scripts/test sets their options), whose shadow
    memory and quarantine make RSS figures meaningless."""
    return "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ


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
