"""A catalogue of bad input over the real binary (stdio): malformed JSON, wrong JSON-RPC shapes,
wrong types for every tool field, huge strings, deep nesting, NUL bytes, invalid UTF-8, invalid
base64, lying MIME types, decompression bombs, paths outside the allowed roots, bad session ids
and version numbers.

Every case must get a spec-correct answer — a JSON-RPC error with the right code, or an isError
tool result whose text names the field — the server must answer a ping right after it, every
stdout line must be valid JSON, and no file may appear outside the data dir.
"""
import base64
import json
import os
import shutil
import struct
import tempfile
import unittest
import zlib

from docs_support import assert_listed
from mcp_harness import ServerProcess
from tools_support import noisy_png, pngio

PING_TIMEOUT = 10.0
CALL_TIMEOUT = 30.0
DEEP = 100_000  # nesting levels: far beyond any real message, deep enough to smash a stack


# --- inputs ---------------------------------------------------------------------------------------

def png_bytes(size=8, rgb=(10, 200, 30)):
    return pngio.solid_png(size, size, rgb)


def b64(data):
    return base64.b64encode(data).decode()


def bomb_png(width=60000, height=60000):
    """A tiny, valid PNG whose header declares width x height pixels (one compressed row)."""
    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\x00" * (1 + 3 * 64))) + chunk(b"IEND", b""))


def line(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def request(rid, method, params=None):
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


# --- expectations ---------------------------------------------------------------------------------

class Case:
    """One input and what must come back. `send` is a dict (a tools/call's arguments, or a full
    message when `raw_message` is set) or raw bytes for one stdio line."""

    def __init__(self, name, send, *, rpc=None, tool=None, names=(), ok=None, any_error=False,
                 response_id="same"):
        self.name = name
        self.send = send
        self.tool = tool            # tools/call of this tool with `send` as arguments
        self.rpc = rpc              # expected JSON-RPC error code(s)
        self.names = names          # substrings the error text must contain (field, limit…)
        self.ok = ok                # callable(structuredContent) for cases that must succeed
        self.any_error = any_error  # either a JSON-RPC error or an isError result is correct
        self.response_id = response_id  # "same", or None when the id is unreadable


def tool_case(name, tool, arguments, *names, ok=None, any_error=False):
    return Case(name, arguments, tool=tool, names=names, ok=ok, any_error=any_error)


def rpc_case(name, send, codes, *names, response_id="same"):
    codes = codes if isinstance(codes, tuple) else (codes,)
    return Case(name, send, rpc=codes, names=names, response_id=response_id)


def make_catalogue(sandbox):
    """The cases, given the sandbox layout (see BadInput.setUpClass)."""
    work = os.path.join(sandbox, "work")
    outside = os.path.join(sandbox, "outside", "secret.png")
    png = png_bytes()
    png_b64 = b64(png)
    huge_prompt = "p" * (5 * 1024 * 1024)
    deep_array = "[" * DEEP + "]" * DEEP
    cases = []
    add = cases.append

    # Malformed JSON: -32700 with id null.
    for name, raw in [
        ("unterminated object", b"{"),
        ("truncated message", b'{"jsonrpc":"2.0","id":1,"method":"ping"'),
        ("not json at all", b"hello there"),
        ("trailing garbage", b'{"jsonrpc":"2.0","id":1,"method":"ping"}}'),
        ("single quotes", b"{'jsonrpc':'2.0','id':1,'method':'ping'}"),
        ("NaN literal", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}'),
        ("raw control character in a string", b'{"jsonrpc":"2.0","id":1,"method":"pi\x01ng"}'),
        ("invalid UTF-8 bytes", b"\xff\xfe\xfd"),
        ("invalid UTF-8 inside a string",
         b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_image",'
         b'"arguments":{"session_id":"\xc3\x28"}}}'),
        ("overlong UTF-8 encoding of '/'", b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xafping"}'),
        ("lone surrogate escape outside a string", b'{"jsonrpc":"2.0","id":1,\\ud800}'),
    ]:
        add(rpc_case(name, raw, -32700, response_id=None))

    # A lone UTF-16 surrogate escape is valid JSON text (JSON.stringify emits one for a string cut
    # inside an emoji): it reads as U+FFFD and the request is answered with its own id.
    add(rpc_case("lone surrogate escape in the method",
                 b'{"jsonrpc":"2.0","id":"lone-m","method":"ping\\ud800"}', -32601))

    # Deep nesting: never a crash. The depth is checked on the text before parsing, so the id
    # cannot be read and the answer has id null (JSON-RPC 2.0 §5).
    add(rpc_case("100k nested arrays", deep_array.encode(), (-32700, -32600), response_id=None))
    add(rpc_case("20M unclosed arrays (refused before parsing)", b"[" * 20_000_000,
                 (-32700, -32600), response_id=None))
    add(rpc_case("100k nested objects", (b'{"a":' * DEEP) + b"1" + (b"}" * DEEP),
                 (-32700, -32600), response_id=None))
    add(Case("100k nesting inside tool arguments",
             ('{"jsonrpc":"2.0","id":"deep-args","method":"tools/call","params":{"name":'
              '"get_image","arguments":{"session_id":"s1","x":' + deep_array + '}}}').encode(),
             rpc=(-32600,), names=("128",), response_id=None))
    add(Case("100k nesting as a log level (echoed in the error)",
             ('{"jsonrpc":"2.0","id":"deep-level","method":"logging/setLevel","params":{"level":'
              + deep_array + '}}').encode(), rpc=(-32602, -32600, -32700),
             response_id=None))
    add(Case("100k nesting in clientInfo of a second initialize",
             ('{"jsonrpc":"2.0","id":"deep-init","method":"initialize","params":{'
              '"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":'
              + deep_array + '}}}').encode(), rpc=(-32600, -32700), response_id=None))

    # Wrong JSON-RPC shapes.
    add(rpc_case("empty batch", b"[]", -32600, response_id=None))
    add(rpc_case("batch in 2025-11-25", line([request(1, "ping"), request(2, "ping")]), -32600,
                 response_id=None))
    add(rpc_case("bare string", b'"ping"', -32600, response_id=None))
    add(rpc_case("bare number", b"42", -32600, response_id=None))
    add(rpc_case("null message", b"null", -32600, response_id=None))
    add(rpc_case("id is an object", line(request({"a": 1}, "ping")), -32600, response_id=None))
    add(rpc_case("id is an array", line(request([1], "ping")), -32600, response_id=None))
    add(rpc_case("id is a float", line(request(1.5, "ping")), -32600, response_id=None))
    add(rpc_case("id is null", line(request(None, "ping")), -32600, response_id=None))
    add(rpc_case("id is a boolean", line(request(True, "ping")), -32600, response_id=None))
    add(rpc_case("missing method", line({"jsonrpc": "2.0", "id": "no-method"}), -32600))
    add(rpc_case("jsonrpc 1.0", line({"jsonrpc": "1.0", "id": "v1", "method": "ping"}), -32600,
                 "2.0"))
    add(rpc_case("jsonrpc missing", line({"id": "nov", "method": "ping"}), -32600, "2.0"))
    add(rpc_case("jsonrpc as a number", line({"jsonrpc": 2.0, "id": "v2", "method": "ping"}),
                 -32600))
    add(rpc_case("method is a number", line({"jsonrpc": "2.0", "id": "m5", "method": 5}), -32600))
    add(rpc_case("method has a NUL byte", line(request("nul-m", "ping\u0000")), -32601))
    add(rpc_case("unknown method", line(request("unk", "images/destroy")), -32601))
    add(rpc_case("params is an array", line(request("pa", "tools/list", [1, 2])), -32602))
    add(rpc_case("params is a string", line(request("ps", "tools/call", "get_image")), -32602))
    add(rpc_case("tools/call without name", line(request("tn", "tools/call", {"arguments": {}})),
                 -32602, "name"))
    add(rpc_case("tools/call name is a number", line(request("tn2", "tools/call", {"name": 7})),
                 -32602, "name"))
    add(rpc_case("unknown tool", line(request("ut", "tools/call", {"name": "rm_rf"})), -32602,
                 "Unknown tool: rm_rf"))
    add(rpc_case("arguments is an array",
                 line(request("aa", "tools/call", {"name": "get_image", "arguments": [1]})),
                 -32602, "arguments"))
    add(rpc_case("arguments is a string",
                 line(request("as", "tools/call", {"name": "get_image", "arguments": "s1"})),
                 -32602, "arguments"))
    add(rpc_case("resources/read without uri", line(request("ru", "resources/read", {})), -32602,
                 "uri"))
    add(rpc_case("resources/read of an unknown session",
                 line(request("rn", "resources/read", {"uri": "imgmcp://sessions/nope/versions/1"})),
                 -32002))
    add(rpc_case("resources/read with ../ in the uri",
                 line(request("rdots", "resources/read",
                              {"uri": "imgmcp://sessions/../../etc/versions/1"})), (-32002, -32602)))
    add(rpc_case("resources/subscribe with ../ in the uri",
                 line(request("sdots", "resources/subscribe",
                              {"uri": "imgmcp://sessions/../../x"})), -32602,
                 "Unknown resource URI"))
    add(rpc_case("resources/subscribe to a file:// uri",
                 line(request("sfile", "resources/subscribe", {"uri": "file:///etc/passwd"})),
                 -32602, "Unknown resource URI"))
    add(rpc_case("resources/read of versions/01 (a second spelling of version 1)",
                 line(request("r01", "resources/read",
                              {"uri": "imgmcp://sessions/s1/versions/01"})), -32002))
    add(rpc_case("resources/read of versions/+1",
                 line(request("rplus", "resources/read",
                              {"uri": "imgmcp://sessions/s1/versions/+1"})), -32002))
    add(rpc_case("bad log level", line(request("ll", "logging/setLevel", {"level": "loud"})),
                 -32602, "level"))
    add(rpc_case("second initialize", line(request("init2", "initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x"}})),
        -32600))
    add(rpc_case("bad cursor", line(request("cur", "resources/list", {"cursor": "\u0000??"})),
                 -32602))

    # Wrong types and values, every field of every tool.
    gen, edit, get, reset = "generate_image", "edit_image", "get_image", "reset_session"
    add(tool_case("generate: prompt missing", gen, {}, "prompt"))
    add(tool_case("generate: prompt is a number", gen, {"prompt": 5}, "prompt", "string"))
    add(tool_case("generate: prompt is blank", gen, {"prompt": " \t\n"}, "prompt"))
    add(tool_case("generate: prompt is an object", gen, {"prompt": {"text": "x"}}, "prompt"))
    add(tool_case("generate: prompt with a NUL", gen, {"prompt": "keep\u0000 this"}, "prompt",
                  "NUL"))
    add(tool_case("generate: 5 MB prompt", gen, {"prompt": huge_prompt}, "prompt",
                  str(len(huge_prompt)), "102400"))
    add(tool_case("generate: session_id is a number", gen, {"prompt": "x", "session_id": 1},
                  "session_id", "string"))
    add(tool_case("generate: aspect_ratio not allowed", gen, {"prompt": "x", "aspect_ratio": "7:3"},
                  "aspect_ratio", "16:9"))
    add(tool_case("generate: aspect_ratio is a number", gen, {"prompt": "x", "aspect_ratio": 1.5},
                  "aspect_ratio"))
    add(tool_case("generate: reference_images is an object", gen,
                  {"prompt": "x", "reference_images": {"path": "a.png"}}, "reference_images",
                  "array"))
    add(tool_case("generate: reference_images[0] is a string", gen,
                  {"prompt": "x", "reference_images": ["a.png"]}, "reference_images[0]", "object"))
    add(tool_case("generate: too many reference images", gen,
                  {"prompt": "x", "reference_images": [{"data": png_b64, "mime_type": "image/png"}]
                   * 15}, "reference_images", "14"))
    add(tool_case("generate: inline not allowed", gen, {"prompt": "x", "inline": "huge"}, "inline",
                  "preview"))
    add(tool_case("generate: inline is a boolean", gen, {"prompt": "x", "inline": True}, "inline"))
    add(tool_case("generate: unknown field", gen, {"prompt": "x", "seed": 3}, "seed"))
    add(tool_case("edit: session_id missing", edit, {"prompt": "invert"}, "session_id"))
    add(tool_case("edit: session_id is an array", edit, {"session_id": ["s1"], "prompt": "invert"},
                  "session_id"))
    add(tool_case("edit: prompt is null", edit, {"session_id": "s1", "prompt": None}, "prompt"))
    add(tool_case("edit: prompt with a NUL", edit, {"session_id": "s1", "prompt": "a\u0000b"},
                  "prompt", "NUL"))
    add(tool_case("edit: expected_version is a string", edit,
                  {"session_id": "s1", "prompt": "invert", "expected_version": "2"},
                  "expected_version", "integer"))
    add(tool_case("edit: expected_version is fractional", edit,
                  {"session_id": "s1", "prompt": "invert", "expected_version": 1.5},
                  "expected_version", "integer"))
    add(tool_case("edit: expected_version conflict", edit,
                  {"session_id": "s1", "prompt": "invert", "expected_version": 7},
                  "version conflict", "expected_version"))
    add(tool_case("edit: from_version is a boolean", edit,
                  {"session_id": "s1", "prompt": "invert", "from_version": True}, "from_version"))
    add(tool_case("edit: from_version 0", edit,
                  {"session_id": "s1", "prompt": "invert", "from_version": 0}, "from_version"))
    add(tool_case("edit: from_version 2^64", edit,
                  {"session_id": "s1", "prompt": "invert", "from_version": 2 ** 64},
                  "from_version", "integer"))
    add(tool_case("edit: unknown from_version", edit,
                  {"session_id": "s1", "prompt": "invert", "from_version": 999}, "999"))
    add(tool_case("edit: image is a string", edit,
                  {"session_id": "s1", "prompt": "invert", "image": png_b64}, "image", "object"))
    add(tool_case("edit: image is empty", edit, {"session_id": "s1", "prompt": "invert",
                                                 "image": {}}, "image", "exactly one"))
    add(tool_case("edit: image has both path and data", edit,
                  {"session_id": "s1", "prompt": "invert",
                   "image": {"path": "in.png", "data": png_b64, "mime_type": "image/png"}},
                  "image", "exactly one"))
    add(tool_case("edit: image.mime_type not allowed", edit,
                  {"session_id": "s1", "prompt": "invert",
                   "image": {"data": png_b64, "mime_type": "image/bmp"}}, "image.mime_type"))
    add(tool_case("edit: image.data without mime_type", edit,
                  {"session_id": "s1", "prompt": "invert", "image": {"data": png_b64}},
                  "image.mime_type"))
    add(tool_case("edit: image.data is a number", edit,
                  {"session_id": "s1", "prompt": "invert", "image": {"data": 12,
                                                                     "mime_type": "image/png"}},
                  "image.data"))
    add(tool_case("edit: image has an unknown field", edit,
                  {"session_id": "s1", "prompt": "invert",
                   "image": {"url": "http://127.0.0.1/x.png"}}, "image.url"))
    add(tool_case("edit: image and from_version together", edit,
                  {"session_id": "s1", "prompt": "invert", "from_version": 1,
                   "image": {"data": png_b64, "mime_type": "image/png"}}, "image", "from_version"))
    add(tool_case("edit: reference_images is a number", edit,
                  {"session_id": "s1", "prompt": "invert", "reference_images": 3},
                  "reference_images"))
    add(tool_case("edit: inline is a number", edit,
                  {"session_id": "s1", "prompt": "invert", "inline": 1}, "inline"))
    add(tool_case("edit: unknown field", edit,
                  {"session_id": "s1", "prompt": "invert", "strength": 0.5}, "strength"))
    add(tool_case("edit: unknown instruction", edit, {"session_id": "s1", "prompt": "make it pop"},
                  "invert"))
    add(tool_case("edit: rotate 45", edit, {"session_id": "s1", "prompt": "rotate 45"},
                  "multiple of 90"))
    add(tool_case("edit: rotate 360 leaves the image as it is", edit,
                  {"session_id": "rot", "prompt": "rotate 360", "inline": "none",
                   "image": {"data": png_b64, "mime_type": "image/png"}},
                  ok=lambda sc: sc["version"] == 2))
    add(tool_case("edit: a coordinate too large for an int", edit,
                  {"session_id": "s1", "prompt": "draw dot red at 99999999999,5"},
                  "out of range"))
    add(tool_case("edit: a crop size too large for an int", edit,
                  {"session_id": "s1", "prompt": "crop 0,0,99999999999,5"}, "out of range"))
    add(tool_case("get: session_id is an object", get, {"session_id": {"id": "s1"}}, "session_id"))
    add(tool_case("get: version is a string", get, {"session_id": "s1", "version": "1"},
                  "version", "integer"))
    add(tool_case("get: version 0", get, {"session_id": "s1", "version": 0}, "version"))
    add(tool_case("get: inline is upper case", get, {"session_id": "s1", "inline": "FULL"},
                  "inline"))
    add(tool_case("get: include_history is a string", get,
                  {"session_id": "s1", "include_history": "yes"}, "include_history"))
    add(tool_case("get: unknown field", get, {"session_id": "s1", "format": "png"}, "format"))
    add(tool_case("get: unknown session", get, {"session_id": "never-made"}, "never-made"))
    add(tool_case("lone high surrogate in a prompt (a cut emoji)", gen,
                  {"prompt": "solid red \ud83e", "session_id": "cut-emoji", "inline": "none"},
                  ok=lambda sc: sc["version"] == 1))
    add(tool_case("lone low surrogate in a session_id", get, {"session_id": "s\udc00"},
                  "session_id"))
    add(tool_case("reset: session_id is a number", reset, {"session_id": 42}, "session_id"))
    add(tool_case("reset: to_version is a string", reset, {"session_id": "s1", "to_version": "1"},
                  "to_version"))
    add(tool_case("reset: to_version negative", reset, {"session_id": "s1", "to_version": -1},
                  "to_version"))
    add(tool_case("reset: unknown to_version", reset, {"session_id": "s1", "to_version": 4242},
                  "4242"))
    add(tool_case("reset: unknown field", reset, {"session_id": "s1", "hard": True}, "hard"))
    add(tool_case("reset: unknown session", reset, {"session_id": "ghost"}, "ghost"))

    # Version numbers: unknown, negative, huge.
    for value, label in [(999, "unknown"), (-1, "negative"), (-(2 ** 63), "-2^63"),
                         (2 ** 63, "2^63"), (2 ** 63 - 1, "2^63-1"), (1e300, "1e300"),
                         (-1e300, "-1e300"), (1e-300, "1e-300")]:
        add(tool_case(f"get: version {label}", get, {"session_id": "s1", "version": value},
                      "version"))

    # Session ids.
    for sid, label in [("a/b", "slash"), ("..", "dot-dot"), ("../../etc", "traversal"),
                       ("has space", "space"), ("x" * 65, "65 chars"), ("-lead", "leading dash"),
                       ("", "empty"), (".hidden", "leading dot"), ("a\u0000b", "NUL byte"),
                       ("caf\u00e9", "non-ASCII"), ("s1\n", "newline"), ("C:\\x", "backslash")]:
        add(tool_case(f"session_id {label} (generate)", gen, {"prompt": "x", "session_id": sid},
                      "session_id"))
    for sid, label in [("a/b", "slash"), ("..", "dot-dot"), ("x" * 65, "65 chars")]:
        add(tool_case(f"session_id {label} (get)", get, {"session_id": sid}, "session_id"))
        add(tool_case(f"session_id {label} (edit)", edit, {"session_id": sid, "prompt": "invert"},
                      "session_id"))
        add(tool_case(f"session_id {label} (reset)", reset, {"session_id": sid}, "session_id"))
    # An error that echoes input cut to a prefix must still serialise as valid UTF-8.
    add(tool_case("session_id cut inside a multi-byte character", gen,
                  {"prompt": "x", "session_id": "\u20ac" * 40}, "session_id"))
    add(tool_case("unknown field name cut inside a multi-byte character", get,
                  {"session_id": "s1", "\u20ac" * 40: 1}, "unknown field"))
    add(tool_case("1 MB session_id", get, {"session_id": "s" * (1 << 20)}, "session_id", "256"))

    # Image payloads.
    add(tool_case("invalid base64", edit, {"session_id": "s1", "prompt": "invert",
                                          "image": {"data": "!!not base64!!",
                                                    "mime_type": "image/png"}}, "image.data"))
    add(tool_case("base64 with a bad length", edit, {"session_id": "s1", "prompt": "invert",
                                                    "image": {"data": "iVBORw0KGgoAAAAN=",
                                                              "mime_type": "image/png"}},
                  "image"))
    add(tool_case("empty base64", edit, {"session_id": "s1", "prompt": "invert",
                                        "image": {"data": "", "mime_type": "image/png"}}, "image"))
    add(tool_case("truncated PNG", edit, {"session_id": "s1", "prompt": "invert",
                                         "image": {"data": b64(png[:30]),
                                                   "mime_type": "image/png"}}, "image"))
    big = noisy_png(64, 64)
    add(tool_case("PNG cut in half (header intact)", edit,
                  {"session_id": "half", "prompt": "invert",
                   "image": {"data": b64(big[:len(big) // 2]), "mime_type": "image/png"}},
                  "image", "cannot be decoded"))
    add(tool_case("PNG cut in half as a reference image", gen,
                  {"prompt": "x", "reference_images": [{"data": b64(big[:len(big) // 2]),
                                                        "mime_type": "image/png"}]},
                  "reference_images[0]", "cannot be decoded"))
    add(tool_case("text labelled PNG", edit, {"session_id": "s1", "prompt": "invert",
                                             "image": {"data": b64(b"just some text, no pixels"),
                                                       "mime_type": "image/png"}}, "image"))
    wrapped = "\n".join(png_b64[i:i + 76] for i in range(0, len(png_b64), 76))
    add(tool_case("image.data as a data: URL", edit,
                  {"session_id": "data-url", "prompt": "invert", "inline": "none",
                   "image": {"data": "data:image/png;base64," + png_b64}},
                  ok=lambda sc: sc["version"] == 2))
    add(tool_case("image.data wrapped at 76 columns", edit,
                  {"session_id": "wrapped", "prompt": "invert", "inline": "none",
                   "image": {"data": wrapped + "\n", "mime_type": "image/png"}},
                  ok=lambda sc: sc["version"] == 2))
    add(tool_case("image.data as a data: URL that is not base64", edit,
                  {"session_id": "s1", "prompt": "invert",
                   "image": {"data": "data:image/png,%89PNG"}}, "image.data", "data URL"))
    add(tool_case("PNG labelled JPEG works with its true type", edit,
                  {"session_id": "lying-mime", "prompt": "invert", "inline": "none",
                   "image": {"data": png_b64, "mime_type": "image/jpeg"}},
                  ok=lambda sc: sc["mime_type"] == "image/png" and sc["version"] == 2))
    add(tool_case("decompression bomb 60000x60000", edit,
                  {"session_id": "bomb", "prompt": "invert",
                   "image": {"data": b64(bomb_png()), "mime_type": "image/png"}}, "image",
                  "60000"))
    add(tool_case("decompression bomb as a reference image", gen,
                  {"prompt": "x", "reference_images": [{"data": b64(bomb_png(40000, 40000)),
                                                        "mime_type": "image/png"}]},
                  "reference_images[0]"))

    # Paths.
    def path_case(label, path, *names, field="image"):
        args = {"session_id": "s1", "prompt": "invert"}
        if field == "image":
            args["image"] = {"path": path}
        else:
            args["reference_images"] = [{"path": path}]
        add(tool_case(f"path {label}", edit, args, *names))

    path_case("../ outside the roots", "../outside/secret.png", "outside the allowed")
    path_case("absolute outside the roots", outside, "outside the allowed")
    path_case("/etc/passwd", "/etc/passwd", "outside the allowed")
    path_case("/proc/self/environ", "/proc/self/environ", "outside the allowed")
    path_case("symlink to outside", "link-out.png", "outside the allowed")
    path_case("symlinked dir to outside", "linkdir/secret.png", "outside the allowed")
    path_case("../ that comes back in", "../work/../outside/secret.png", "outside the allowed")
    path_case("symlink as a reference image", "link-out.png", "reference_images[0]",
              "outside the allowed", field="refs")
    path_case("missing file", "nope.png", "image.path", "no such file")
    path_case("a directory", ".", "image.path", "regular file")
    # Opening a FIFO for reading waits for a writer: it must be refused without opening it
    # blocking (it used to wedge the call and every later edit of the session).
    path_case("a FIFO", "fifo.png", "image.path", "regular file")
    path_case("a FIFO as a reference image", "fifo.png", "reference_images[0].path",
              "regular file", field="refs")
    # The header is intact, the pixels are cut off: refused before anything is committed.
    path_case("a PNG cut in half", "half.png", "image", "cannot be decoded")
    path_case("a text file inside the roots", "notes.txt", "image")
    path_case("NUL byte in the path", "in.png\u0000.jpg", "image.path", "NUL")
    path_case("empty path", "", "image.path")
    path_case("path is a number", 5, "image.path", "string")
    path_case("mime_type with a path", "in.png", "image")  # fixed below
    cases[-1].send["image"]["mime_type"] = "image/png"
    path_case("4 kB path", "a/" * 3000, "image.path")

    # save_to: refused before anything is generated, committed or written.
    def save_case(label, tool, save, *names):
        args = {"generate": {"prompt": "x"}, "edit": {"session_id": "s1", "prompt": "invert"},
                "get": {"session_id": "s1"}}[tool]
        add(tool_case(f"{tool}: save_to {label}", {"generate": gen, "edit": edit, "get": get}[tool],
                      dict(args, **save), *names))

    save_case("with ../", "generate", {"save_to": "../outside/x.png"}, "'save_to'", "'..'")
    save_case("outside every root", "generate", {"save_to": outside}, "'save_to'",
              "outside the directories")
    save_case("into the data dir", "generate",
              {"save_to": os.path.join(sandbox, "data", "x.png")}, "'save_to'", "data directory")
    save_case("a .gif", "generate", {"save_to": "x.gif"}, "'save_to' ends in .gif",
              "never a GIF")
    save_case("through a symlinked dir", "edit", {"save_to": "linkdir/x.png"}, "'save_to'",
              "symbolic link")
    save_case("a symlink to outside", "edit", {"save_to": "link-out.png", "overwrite": True},
              "'save_to'", "symbolic link")
    save_case("an existing file", "edit", {"save_to": "in.png"}, "'save_to'", "already exists")
    save_case("a FIFO", "edit", {"save_to": "fifo.png", "overwrite": True}, "'save_to'",
              "a FIFO")
    save_case("below a file", "get", {"save_to": "in.png/x.png"}, "'save_to'",
              "not a directory")
    save_case("empty", "get", {"save_to": ""}, "'save_to'", "empty")
    save_case("is a number", "get", {"save_to": 3}, "save_to", "string")
    save_case("NUL byte", "get", {"save_to": "x\u0000.png"}, "save_to", "NUL")
    save_case("an unknown extension", "get", {"save_to": "x.bmp"}, "'save_to'", ".bmp")
    save_case("extension against save_format", "get", {"save_to": "x.png", "save_format": "webp"},
              "'save_to' ends in .png", "'save_format' is \"webp\"")
    save_case("save_format not allowed", "get", {"save_to": "x.png", "save_format": "tiff"},
              "save_format", "\"png\"")
    save_case("save_quality 0", "get", {"save_to": "x.jpg", "save_quality": 0}, "save_quality",
              "1 to 100")
    save_case("save_quality for a png", "get", {"save_to": "x.png", "save_quality": 80},
              "save_quality", "jpeg and webp")
    save_case("save_format without save_to", "get", {"save_format": "png"}, "save_format",
              "save_to")
    save_case("overwrite is a string", "get", {"save_to": "y.png", "overwrite": "yes"},
              "overwrite")

    assert len({c.name for c in cases}) == len(cases), "case names must be unique"
    assert os.path.isdir(work)
    return cases


class BadInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # sandbox/ data/ (the data dir) work/ (cwd: an allowed root) outside/ (not allowed)
        cls.sandbox = tempfile.mkdtemp(prefix="imgmcp-bad-input-")
        sb = cls.sandbox
        for d in ("data", "work", "outside"):
            os.makedirs(os.path.join(sb, d))
        with open(os.path.join(sb, "outside", "secret.png"), "wb") as f:
            f.write(png_bytes(rgb=(1, 2, 3)))
        with open(os.path.join(sb, "work", "in.png"), "wb") as f:
            f.write(png_bytes())
        with open(os.path.join(sb, "work", "notes.txt"), "w") as f:
            f.write("not an image")
        os.mkfifo(os.path.join(sb, "work", "fifo.png"))
        half = noisy_png(64, 64)
        with open(os.path.join(sb, "work", "half.png"), "wb") as f:
            f.write(half[:len(half) // 2])
        os.symlink(os.path.join(sb, "outside", "secret.png"), os.path.join(sb, "work", "link-out.png"))
        os.symlink(os.path.join(sb, "outside"), os.path.join(sb, "work", "linkdir"))
        cls.server = ServerProcess(args=["--backend", "local"],
                                   data_dir=os.path.join(sb, "data"), cwd=os.path.join(sb, "work"))
        cls.server.initialize()
        # s1: version 1 (import) and 2 (invert).
        resp = cls.server.call_tool("edit_image", {
            "session_id": "s1", "prompt": "invert", "inline": "none",
            "image": {"data": b64(png_bytes()), "mime_type": "image/png"}}, timeout=CALL_TIMEOUT)
        assert not resp["result"].get("isError"), resp
        cls.before = cls.snapshot_outside_data()

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)
        shutil.rmtree(cls.sandbox, ignore_errors=True)

    @classmethod
    def snapshot_outside_data(cls):
        entries = set()
        data = os.path.join(cls.sandbox, "data")
        for root, dirs, files in os.walk(cls.sandbox):
            if root == data or root.startswith(data + os.sep):
                continue
            for name in dirs + files:
                path = os.path.join(root, name)
                st = os.lstat(path)
                entries.add((path, st.st_size, st.st_mode))
        return entries

    def ping(self, label):
        rid = f"ping-after-{label}"
        self.server.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        resp = self.server.wait_for(lambda m: m.get("id") == rid, timeout=PING_TIMEOUT)
        self.assertEqual(resp.get("result"), {}, f"ping after {label}")

    def run_case(self, case):
        server = self.server
        if case.tool is not None:
            rid = f"case-{case.name}"
            server.send(request(rid, "tools/call", {"name": case.tool, "arguments": case.send}))
        else:
            server.send_raw(case.send + b"\n")
            rid = None if case.response_id is None else (
                json.loads(case.send)["id"] if case.response_id == "same" else case.response_id)
        resp = server.wait_for(lambda m: "method" not in m and m.get("id", "?") == rid,
                               timeout=CALL_TIMEOUT)
        self.assertEqual(resp.get("jsonrpc"), "2.0")
        if "error" in resp:
            code, text = resp["error"]["code"], resp["error"]["message"]
            if case.rpc is None and not case.any_error:
                self.fail(f"expected a tool result, got JSON-RPC error {code}: {text}")
            if case.rpc is not None:
                self.assertIn(code, case.rpc, text)
        else:
            self.assertIn("result", resp)
            if case.rpc is not None:
                self.fail(f"expected JSON-RPC error {case.rpc}, got {str(resp)[:300]}")
            result = resp["result"]
            if case.ok is not None:
                self.assertFalse(result.get("isError"), result["content"][0].get("text"))
                self.assertTrue(case.ok(result["structuredContent"]),
                                result["structuredContent"])
                return
            self.assertTrue(result.get("isError"), f"expected isError, got {str(result)[:300]}")
            text = result["content"][0]["text"]
        for name in case.names:
            self.assertIn(name, text)
        self.assertLess(len(text), 20000, "errors must not echo huge input")

    def test_catalogue(self):
        cases = make_catalogue(self.sandbox)
        self.assertGreaterEqual(len(cases), 60)
        for case in cases:
            with self.subTest(case=case.name):
                try:
                    self.run_case(case)
                    self.ping(case.name)
                except (EOFError, BrokenPipeError):
                    pass  # reported just below, once
            if self.server.proc.poll() is not None:
                self.fail(f"imgmcp died (exit {self.server.proc.returncode}) on case "
                          f"{case.name!r}; stderr:\n{self.server.stderr}")
        # Every stdout line was one valid JSON message (the harness fails the wait otherwise) and
        # nothing was written outside the data dir.
        self.assertEqual(self.snapshot_outside_data(), self.before)
        self.assertNotIn("AddressSanitizer", self.server.stderr)


class CatalogueDocs(unittest.TestCase):
    """docs/bad-input.md lists every case above (so the page cannot fall behind the tests)."""

    def test_the_docs_list_every_case(self):
        sandbox = tempfile.mkdtemp(prefix="imgmcp-bad-input-docs-")
        self.addCleanup(shutil.rmtree, sandbox, True)
        os.makedirs(os.path.join(sandbox, "work"))
        assert_listed(self, [c.name for c in make_catalogue(sandbox)], form="| {} |")


class BeforeInitialize(unittest.TestCase):
    """Shapes that matter before initialize: answered, never fatal."""

    def test_requests_before_initialize_are_answered_and_the_server_stays_up(self):
        with ServerProcess(args=["--backend", "local"]) as server:
            for raw, code in [
                (line(request(1, "tools/list")), -32600),
                (line(request(2, "tools/call", {"name": "get_image",
                                                "arguments": {"session_id": "s1"}})), -32600),
                (line(request(3, "server/discover")), -32601),
                (line([request(4, "initialize", {"protocolVersion": "2025-03-26"})]), -32600),
                (b"{", -32700),
            ]:
                server.send_raw(raw + b"\n")
                resp = server.wait_for(lambda m: "method" not in m)
                self.assertEqual(resp["error"]["code"], code, resp)
            server.initialize()
            self.assertEqual(server.request("ping").get("result"), {})


if __name__ == "__main__":
    unittest.main()
