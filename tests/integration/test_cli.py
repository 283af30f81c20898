"""imgmcp-cli end to end: it starts the real imgmcp over stdio, makes one tools/call, prints the
text, writes the image and exits 0 (success), 1 (isError) or 2 (usage/protocol error).

The CLI binary is $IMGMCP_CLI_BIN, else imgmcp-cli next to $IMGMCP_BIN (both build to bin/).
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import unittest

from fake_gemini_support import FakeGeminiTestCase, TEST_KEY
from mcp_harness import binary_path
from tools_support import pngio

TIMEOUT = 60


def cli_path():
    path = os.environ.get("IMGMCP_CLI_BIN") or os.path.join(
        os.path.dirname(binary_path()), "imgmcp-cli")
    if not os.path.exists(path):
        raise RuntimeError(f"imgmcp-cli not found at {path}: build the imgmcp-cli target "
                           "(cli/) or set IMGMCP_CLI_BIN")
    return path


def running(pid):
    """True while `pid` runs (a process killed but not yet reaped, a zombie, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def kill_if_running(pid):
    if running(pid):
        os.kill(pid, signal.SIGKILL)


class CliTest(unittest.TestCase):
    def setUp(self):
        self.cwd = tempfile.mkdtemp(prefix="imgmcp-cli-test-")
        self.addCleanup(shutil.rmtree, self.cwd, True)
        self.data_dir = os.path.join(self.cwd, "data")
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("GEMINI_API_KEY", "IMGMCP_DATA_DIR", "IMGMCP_BACKEND")}

    def cli(self, *args, server_flags=("--backend", "local"), explicit_server=True, cli=None):
        """Runs imgmcp-cli (`cli`, else cli_path()) in self.cwd; returns CompletedProcess with
        text stdout/stderr."""
        argv = [cli or cli_path()]
        if explicit_server:
            argv += ["--server", binary_path()]
        argv += [*args, "--", *server_flags, "--data-dir", self.data_dir]
        return subprocess.run(argv, cwd=self.cwd, env=self.env, capture_output=True, text=True,
                              timeout=TIMEOUT)

    def file(self, name):
        return os.path.join(self.cwd, name)

    def read(self, name):
        with open(self.file(name), "rb") as f:
            return f.read()

    def outputs(self):
        return sorted(n for n in os.listdir(self.cwd) if n != "data")

    # --- success ------------------------------------------------------------------------
    def test_generate_prints_the_text_and_writes_the_preview(self):
        r = self.cli("generate_image", "prompt=solid red", "session_id=c1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("version 1 of session 'c1'", r.stdout)
        self.assertIn('"sha256"', r.stdout)  # the text block carries the JSON too
        self.assertNotIn("imgmcp info", r.stderr, "server logs are quiet by default")
        self.assertIn("wrote c1-v1-preview.png", r.stderr)
        self.assertEqual(self.outputs(), ["c1-v1-preview.png"])
        decoded = pngio.decode_png(self.read("c1-v1-preview.png"))
        self.assertEqual(decoded[:2], (768, 768))
        self.assertEqual(pngio.pixel(decoded, 5, 5), (255, 0, 0))

    def test_generate_edit_get_across_processes_share_the_session(self):
        self.assertEqual(self.cli("generate_image", "prompt=solid red", "session_id=s",
                                  "inline=none").returncode, 0)
        r = self.cli("edit_image", "session_id=s", "prompt=invert", "expected_version=1",
                     "inline=full")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("version 2", r.stdout)
        self.assertEqual(self.outputs(), ["s-v2.png"])  # full bytes: named after the version
        data = self.read("s-v2.png")
        decoded = pngio.decode_png(data)
        self.assertEqual(decoded[:2], (1024, 1024))
        self.assertEqual(pngio.pixel(decoded, 100, 100), (0, 255, 255))

        r = self.cli("--json", "get_image", "session_id=s", "inline=none")
        self.assertEqual(r.returncode, 0, r.stderr)
        result = json.loads(r.stdout)
        sc = result["structuredContent"]
        self.assertEqual(sc["version"], 2)
        self.assertEqual(sc["sha256"], hashlib.sha256(data).hexdigest())
        self.assertEqual([h["operation"] for h in sc["history"]], ["generate", "edit"])
        self.assertEqual(self.outputs(), ["s-v2.png"], "inline none writes no file")

        r = self.cli("reset_session", "session_id=s", "to_version=1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("version 3", r.stdout)

    def test_nested_keys_build_objects_and_out_names_the_file(self):
        with open(self.file("input.png"), "wb") as f:
            f.write(pngio.solid_png(40, 20, (10, 20, 30)))
        r = self.cli("edit_image", "session_id=imp", "prompt=invert", "image.path=input.png",
                     "inline=full", "--out", "result.png")
        self.assertEqual(r.returncode, 0, r.stderr)
        decoded = pngio.decode_png(self.read("result.png"))
        self.assertEqual(decoded[:2], (40, 20))
        self.assertEqual(pngio.pixel(decoded, 3, 3), (245, 235, 225))
        self.assertEqual(self.outputs(), ["input.png", "result.png"])

    def test_json_values_and_quoted_strings(self):
        # "\"7\"" is the JSON string "7": a prompt that looks like a number stays a string.
        r = self.cli("--json", "-q", "generate_image", 'prompt="7"', "session_id=j",
                     "inline=none")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["structuredContent"]["prompt"], "7")
        # A bare 7 is the number 7, which the server rejects for a string field.
        r = self.cli("generate_image", "prompt=7", "session_id=j")
        self.assertEqual(r.returncode, 1)
        self.assertIn("prompt", r.stderr)

    def test_default_server_is_the_imgmcp_next_to_the_cli(self):
        # Both binaries side by side in a directory of their own (wherever the build put them),
        # and no imgmcp on PATH: only "next to the CLI" can find the server.
        bindir = tempfile.mkdtemp(prefix="imgmcp-cli-bin-")
        self.addCleanup(shutil.rmtree, bindir, True)
        shutil.copy2(cli_path(), os.path.join(bindir, "imgmcp-cli"))
        shutil.copy2(binary_path(), os.path.join(bindir, "imgmcp"))
        self.env["PATH"] = os.path.join(bindir, "no-such-dir")
        r = self.cli("generate_image", "prompt=solid blue", "session_id=d", "inline=none",
                     explicit_server=False, cli=os.path.join(bindir, "imgmcp-cli"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("version 1 of session 'd'", r.stdout)

    # --- errors -------------------------------------------------------------------------
    def test_tool_error_exits_1_with_the_text_on_stderr(self):
        self.assertEqual(self.cli("generate_image", "prompt=solid red", "session_id=e",
                                  "inline=none").returncode, 0)
        r = self.cli("edit_image", "session_id=e", "prompt=invert", "expected_version=5")
        self.assertEqual(r.returncode, 1)
        self.assertIn("version conflict", r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(self.outputs(), [])

    def test_protocol_and_usage_errors_exit_2(self):
        r = self.cli("no_such_tool")
        self.assertEqual(r.returncode, 2)
        self.assertIn("-32602", r.stderr)
        for args in (["get_image", "session_id"],           # not key=value
                     ["--frobnicate", "get_image"],         # unknown flag
                     [],                                    # no tool
                     ["get_image", "a=1", "a=2"]):          # key twice
            r = self.cli(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("imgmcp-cli --help", r.stderr)
        r = subprocess.run([cli_path(), "--server", os.path.join(self.cwd, "missing"),
                            "get_image", "session_id=x"], capture_output=True, text=True,
                           timeout=TIMEOUT, cwd=self.cwd)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot start", r.stderr)
        # The server refuses its flags and exits before answering.
        r = self.cli("get_image", "session_id=x", server_flags=("--backend", "bogus"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--backend", r.stderr)

    def test_a_server_that_never_answers_times_out_with_exit_2(self):
        script = self.file("silent-server.sh")
        pid_file = self.file("silent-server.pid")
        with open(script, "w") as f:
            f.write(f"#!/bin/sh\necho $$ > '{pid_file}'\nexec sleep 600\n")
        os.chmod(script, 0o755)
        r = subprocess.run([cli_path(), "--server", script, "--timeout", "1", "get_image",
                            "session_id=x"], capture_output=True, text=True, timeout=TIMEOUT,
                           cwd=self.cwd)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no answer from the server in time", r.stderr)
        with open(pid_file) as f:
            pid = int(f.read())
        self.addCleanup(kill_if_running, pid)
        # The CLI did not wait for the server's own end (ten minutes away): it killed it.
        self.assertFalse(running(pid), "the silent server was not killed")

    def test_help_and_version(self):
        r = subprocess.run([cli_path(), "--help"], capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0)
        for words in ("Usage: imgmcp-cli", "key=value", "image.path=", "--out", "--server",
                      "Exit status", "-- SERVER_FLAGS"):
            self.assertIn(words, r.stdout)
        r = subprocess.run([cli_path(), "--version"], capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"^imgmcp-cli \d+\.\d+\.\d+")


if __name__ == "__main__":
    unittest.main()


class CliBatchTest(FakeGeminiTestCase):
    """delivery=batch through imgmcp-cli against the Gemini fake's Batch API: the call prints its
    task and returns; a later imgmcp-cli on the same data directory waits for its image."""

    def setUp(self):
        super().setUp()
        self.fake.configure(batch_states=["pending", "succeeded"])
        self.cwd = tempfile.mkdtemp(prefix="imgmcp-cli-batch-")
        self.addCleanup(shutil.rmtree, self.cwd, True)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("IMGMCP_DATA_DIR", "IMGMCP_BACKEND")}
        self.env.update(GEMINI_API_KEY=TEST_KEY, GEMINI_BASE_URL=self.fake.base_url)

    def cli(self, *args):
        argv = [cli_path(), "--server", binary_path(), *args, "--", "--backend", "gemini",
                "--batch-window", "0.3", "--batch-poll", "0.3", "--data-dir",
                os.path.join(self.cwd, "data")]
        return subprocess.run(argv, cwd=self.cwd, env=self.env, capture_output=True, text=True,
                              timeout=TIMEOUT)

    def test_a_batch_call_prints_its_task_and_a_later_wait_gets_its_image(self):
        r = self.cli("generate_image", "prompt=a red fox", "session_id=fox", "delivery=batch")
        self.assertEqual(r.returncode, 0, r.stderr)
        task_id = r.stdout.strip()
        self.assertRegex(task_id, r"^[0-9a-f]{32}$")
        self.assertIn("waiting for the batch window", r.stderr)
        self.assertIn(f"--wait-task {task_id}", r.stderr)

        r = self.cli("--wait-task", task_id)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("version 1 of session 'fox'", r.stdout)
        self.assertIn("wrote fox-v1-preview.png", r.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.cwd, "fox-v1-preview.png")))
        jobs = self.fake.batches()
        self.assertEqual([job["requests"] for job in jobs], [1], jobs)

    def test_wait_gets_the_result_in_one_go(self):
        r = self.cli("--wait", "--json", "generate_image", "prompt=a blue fox", "session_id=w",
                     "delivery=batch", "inline=none")
        self.assertEqual(r.returncode, 0, r.stderr)
        result = json.loads(r.stdout)
        self.assertEqual(result["structuredContent"]["version"], 1)
        self.assertEqual(result["structuredContent"]["cost"]["price_factor"], 0.5)

    def test_wait_without_a_task_is_a_usage_error(self):
        r = self.cli("--wait", "generate_image", "prompt=p")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--wait waits for a task", r.stderr)
