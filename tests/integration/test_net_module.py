"""The network module (server/netmod/net_module.h): the binary maps cpp-httplib, OpenSSL and
prometheus-cpp only when it first talks HTTP — the first Gemini call, or --http — and a missing or
broken module is a clear error, never a crash, while everything that needs no network keeps
working.

Which libraries a process has mapped is read from /proc/PID/maps of the real binary."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from fake_gemini_support import FakeGeminiTestCase, progress_of  # noqa: E402
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support)
from mcp_harness import ServerProcess, binary_path  # noqa: E402
from skips import require  # noqa: E402  (tests/support)
from tools_support import error_text, structured  # noqa: E402

NETWORK_LIBRARIES = ("libcpp-httplib", "libimgmcp_net.so", "libprometheus-cpp-core",
                     "libssl")  # sorted


def mapped_network_libraries(server):
    with open(f"/proc/{server.proc.pid}/maps") as f:
        maps = f.read()
    return sorted({name for name in NETWORK_LIBRARIES if name in maps})


def generate(server, session_id):
    return structured(server.call_tool("generate_image", {
        "session_id": session_id, "prompt": "solid red", "inline": "none"}))


class LoadedOnFirstUse(FakeGeminiTestCase):
    def test_local_backend_never_maps_tls(self):
        server = self.start_imgmcp(backend="local", env={})
        self.assertEqual(generate(server, "local")["version"], 1)
        self.assertEqual(mapped_network_libraries(server), [])

    def test_gemini_backend_maps_it_at_the_first_call_only(self):
        server = self.start_imgmcp()
        self.assertEqual(server.request("tools/list")["result"]["tools"][0]["name"],
                         "generate_image")
        self.assertEqual(mapped_network_libraries(server), [], "mapped before any Gemini call")
        self.assertEqual(generate(server, "g")["version"], 1)
        self.assertEqual(mapped_network_libraries(server), list(NETWORK_LIBRARIES))
        self.assertEqual(len(self.fake.requests()), 1)


class InstalledLayout(unittest.TestCase):
    def test_cmake_install_puts_the_module_where_the_installed_binary_finds_it(self):
        require(os.environ.get("IMGMCP_BUILD_DIR") and os.environ.get("CMAKE_COMMAND"),
                "needs the build tree: ctest sets IMGMCP_BUILD_DIR and CMAKE_COMMAND")
        prefix = tempfile.mkdtemp(prefix="imgmcp-install-")
        self.addCleanup(shutil.rmtree, prefix, True)
        subprocess.run([os.environ["CMAKE_COMMAND"], "--install", os.environ["IMGMCP_BUILD_DIR"],
                        "--prefix", prefix], check=True, capture_output=True, timeout=120)
        self.assertTrue(os.path.isfile(os.path.join(prefix, "lib", "imgmcp", "libimgmcp_net.so")))
        data_dir = os.path.join(prefix, "data")
        os.makedirs(data_dir)
        # Serving HTTP needs the module: the "listening on" line says it was found and loaded.
        with HttpProcess(binary=os.path.join(prefix, "bin", "imgmcp"), data_dir=data_dir,
                         name="the installed imgmcp") as server:
            self.assertEqual(server.host, "127.0.0.1", server.stderr)
            self.assertEqual(server.close(), 0, server.stderr)  # SIGTERM: a clean exit


class MissingOrBrokenModule(unittest.TestCase):
    """The binary copied into a temp tree: bin/imgmcp, and lib/imgmcp/ as each test sets it up."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="imgmcp-netmod-")
        self.addCleanup(shutil.rmtree, self.root, True)
        os.makedirs(os.path.join(self.root, "bin"))
        self.binary = os.path.join(self.root, "bin", "imgmcp")
        shutil.copy2(binary_path(), self.binary)
        self.module = os.path.join(self.root, "lib", "imgmcp", "libimgmcp_net.so")
        self.data_dir = os.path.join(self.root, "data")
        os.makedirs(self.data_dir)

    def run_binary(self, *args, env=None):
        full_env = {k: v for k, v in os.environ.items() if k != "GEMINI_API_KEY"}
        full_env.update(env or {})
        return subprocess.run([self.binary, "--data-dir", self.data_dir, *args],
                              stdin=subprocess.DEVNULL, capture_output=True, env=full_env,
                              timeout=30)

    def assert_refused(self, proc, *expected):
        stderr = proc.stderr.decode()
        self.assertNotEqual(proc.returncode, 0, stderr)
        self.assertLess(proc.returncode, 128, "crashed: " + stderr)
        self.assertEqual(proc.stdout, b"", "nothing on the MCP stream")
        for text in expected:
            self.assertIn(text, stderr)

    def test_without_the_module_http_and_gemini_refuse_to_start_and_say_where_it_belongs(self):
        self.assert_refused(self.run_binary("--http", "127.0.0.1:0"),
                            "--http: imgmcp's network module", "is missing: expected " +
                            self.module, "cmake --install")
        self.assert_refused(
            self.run_binary("--backend", "gemini", env={"GEMINI_API_KEY": "k" * 39,
                                                         "GEMINI_BASE_URL": "http://127.0.0.1:9"}),
            "backend: imgmcp's network module", self.module)

    def test_without_the_module_the_local_backend_still_serves(self):
        with mock.patch.dict(os.environ, {"IMGMCP_BIN": self.binary}):
            with ServerProcess(args=["--backend", "local"], data_dir=self.data_dir) as server:
                server.initialize()
                self.assertEqual(generate(server, "offline")["version"], 1)
                self.assertEqual(mapped_network_libraries(server), [])
                server.close_stdin()
                self.assertEqual(server.wait_exit(), 0)

    def test_a_file_that_is_not_a_library_is_named_with_the_loader_error(self):
        os.makedirs(os.path.dirname(self.module))
        with open(self.module, "wb") as f:
            f.write(b"not an ELF file\n")
        self.assert_refused(self.run_binary("--http", "127.0.0.1:0"),
                            "could not be loaded from " + self.module)

    def test_a_gemini_call_that_cannot_load_the_module_fails_cleanly_and_is_not_retried(self):
        os.makedirs(os.path.dirname(self.module))
        with open(self.module, "wb") as f:
            f.write(b"not an ELF file\n")
        env = {"IMGMCP_BIN": self.binary}
        gemini_env = {"GEMINI_API_KEY": "k" * 39, "GEMINI_BASE_URL": "http://127.0.0.1:9"}
        with mock.patch.dict(os.environ, env):
            with ServerProcess(args=["--backend", "gemini"], env=gemini_env,
                               data_dir=self.data_dir) as server:
                server.initialize()
                result = server.call_tool("generate_image", {
                    "session_id": "s", "prompt": "solid red", "inline": "none"},
                    meta={"progressToken": "p"})["result"]
                self.assertTrue(result.get("isError"), result)
                text = result["content"][0]["text"]
                self.assertIn("could not be loaded from " + self.module, text)
                self.assertNotIn("Retrying", text)
                messages = [p.get("message", "") for p in progress_of(server, "p")]
                self.assertFalse([m for m in messages if "retrying" in m], messages)
                # Nothing was committed and the server still answers.
                self.assertIn("unknown session 's'", error_text(server.call_tool(
                    "get_image", {"session_id": "s", "inline": "none"})))
                self.assertEqual(os.listdir(os.path.join(self.data_dir, "images")), [])
                self.assertEqual(server.request("ping")["result"], {})


if __name__ == "__main__":
    unittest.main()
