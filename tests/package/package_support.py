"""What the install tests share: the artifacts scripts/package wrote ($IMGMCP_DIST), a fresh
temporary prefix per test, and one MCP conversation over stdio with an installed command."""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from mcp_harness import ServerProcess  # noqa: E402  (tests/integration)

VERSION = os.environ.get("IMGMCP_VERSION", "")


def artifact(name):
    path = os.path.join(os.environ["IMGMCP_DIST"], name)
    if not os.path.isfile(path):
        raise AssertionError(f"{path} is missing: scripts/package did not write it")
    return path


def fresh_prefix(test):
    """A new empty directory, removed when `test` ends."""
    prefix = tempfile.mkdtemp(prefix="imgmcp-pkg-")
    test.addCleanup(shutil.rmtree, prefix, True)
    return prefix


def server_over_stdio(test, command, args=("--backend", "local"), env=None):
    """`command --data-dir TMP ARGS` (an installed imgmcp) as a ServerProcess, ended and removed
    when `test` ends."""
    previous = os.environ.get("IMGMCP_BIN")
    os.environ["IMGMCP_BIN"] = command  # mcp_harness starts $IMGMCP_BIN
    try:
        server = ServerProcess(args=list(args), env=env)
    finally:
        if previous is None:
            del os.environ["IMGMCP_BIN"]
        else:
            os.environ["IMGMCP_BIN"] = previous
    test.addCleanup(server.__exit__, None, None, None)
    return server


def generate_over_stdio(test, command, args=("--backend", "local"), env=None):
    """Starts `command --data-dir TMP ARGS` (an installed imgmcp), initializes and generates
    one image; returns the initialize result and the generate_image structured content."""
    server = server_over_stdio(test, command, args, env)
    info = server.initialize()
    result = server.call_tool("generate_image", {"prompt": "solid red", "session_id": "pkg",
                                                  "inline": "none"}, timeout=60)
    test.assertNotIn("error", result, result)
    test.assertFalse(result["result"].get("isError"), result)
    test.tool_names = [t["name"] for t in server.request("tools/list")["result"]["tools"]]
    return info, result["result"]["structuredContent"]


def initialize_over_http(server, timeout=60):
    """POSTs initialize to an installed imgmcp's /mcp (an HttpProcess); (HTTP status, body)."""
    conn = server.connection(timeout=timeout)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "imgmcp-tests", "version": "0"}}})
        conn.request("POST", "/mcp", body, {"Content-Type": "application/json",
                                            "Accept": "application/json, text/event-stream"})
        answer = conn.getresponse()
        return answer.status, answer.read().decode()
    finally:
        conn.close()
