"""The real imgmcp binary with `--backend gemini` pointed at the Gemini fake (tests/fake_gemini),
whose process and control API live in tests/support/fake_gemini_process.py (FakeGemini, re-exported
here for the tests and demo/generation_demo.py).

FakeGeminiTestCase: one fake per test class, reset before every test (which also lets go of any
call a test left held at a gate), a per-test watchdog, and start_imgmcp() for the real binary.
"""
import os
import secrets
import signal
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from fake_gemini_process import FakeGemini, fake_binary  # noqa: E402,F401  (tests/support)
from mcp_harness import ServerProcess  # noqa: E402

MODEL = "gemini-3.1-flash-lite-image"
# A dummy key with a recognisable, unguessable body: searched for verbatim in everything imgmcp
# writes. It is not a real key and only ever reaches 127.0.0.1.
TEST_KEY = "AIzaTEST-imgmcp-" + secrets.token_hex(12)
TEST_TIMEOUT = 120  # seconds; a watchdog fails a test that hangs longer than this


class FakeGeminiTestCase(unittest.TestCase):
    """One fake per test class (reset before every test) and a per-test watchdog."""

    fake = None
    backend = "gemini"  # VertexMixin (vertex_support.py) runs the same tests on "vertex"

    @classmethod
    def setUpClass(cls):
        cls.fake = FakeGemini()
        cls.addClassCleanup(cls.fake.close)

    def setUp(self):
        self.fake.reset()
        self._arm_watchdog()

    def _arm_watchdog(self):
        def on_alarm(signum, frame):
            raise TimeoutError(f"test exceeded {TEST_TIMEOUT}s")
        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(TEST_TIMEOUT)

        def disarm():
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        self.addCleanup(disarm)

    def gemini_env(self, key=TEST_KEY, base_url=None):
        return {"GEMINI_API_KEY": key, "GEMINI_BASE_URL": base_url or self.fake.base_url}

    def generate_path(self, model):
        """The path a generateContent call for `model` reaches the fake on."""
        return f"/v1beta/models/{model}:generateContent"

    def start_imgmcp(self, extra_args=(), env=None, backend="", data_dir=None,
                     capabilities=None):
        """The real imgmcp binary (temp data dir, killed and removed on cleanup), initialized.
        `backend` "" means the class's own (gemini); None passes no --backend."""
        if backend == "":
            backend = self.backend
        args = ["--backend", backend, *extra_args] if backend else list(extra_args)
        server = ServerProcess(args=args, env=self.gemini_env() if env is None else env,
                               data_dir=data_dir)
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize(capabilities=capabilities)
        return server


def progress_of(server, token):
    """Progress notifications for `token` that were read while waiting for other messages."""
    return [m["params"] for m in server.notifications("notifications/progress")
            if m["params"].get("progressToken") == token]


def current_version(server, session_id):
    resp = server.call_tool("get_image", {"session_id": session_id, "inline": "none",
                                          "include_history": False})
    result = resp["result"]
    if result.get("isError"):
        raise AssertionError(f"get_image failed: {result['content'][0]['text']}")
    return result["structuredContent"]["version"]


def files_under(root):
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            yield os.path.join(dirpath, name)
