"""Per-person limits on tool calls (README.md, "Serve a team"), with the real binary:

- over stdio (one local person): --rate-limit-per-user refuses the call past the limit with the
  JSON-RPC error -32029 naming the flag and when to try again; the server stays up;
- over HTTP with OAuth (a real oidc-provider), in both eras: each person has their own minute,
  and a refusal is 429 with Retry-After and the same JSON-RPC error in the body;
- --max-calls-per-user: a second call of one person while their first is in flight is refused;
  another person's is not; once the first ends the person may call again.

Across PostgreSQL replicas: test_cost_replicas.py (the per-person budget) and
test_limits_replicas.py (the rate counted by both replicas).
"""
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gemini_support import TEST_KEY, FakeGemini  # noqa: E402
from mcp_harness import ServerProcess  # noqa: E402
from oauth_support import OAuthProvider  # noqa: E402
from replica_support import LegacyClient, ModernClient  # noqa: E402
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support, through replica_support)
from wall_minute import with_room_in_this_minute  # noqa: E402  (tests/support)

TOO_MANY_REQUESTS = -32029
WAIT = 30.0


class RateOverStdio(unittest.TestCase):
    def test_the_call_past_the_rate_is_an_error_naming_the_limit(self):
        with ServerProcess(["--rate-limit-per-user", "2/min"]) as server:
            server.initialize()
            with_room_in_this_minute()
            for i in range(2):
                answer = server.call_tool("get_image", {"session_id": f"s{i}"})
                self.assertIn("result", answer)  # answered (the session is simply unknown)
            refused = server.call_tool("get_image", {"session_id": "s3"})
            error = refused["error"]
            self.assertEqual(error["code"], TOO_MANY_REQUESTS)
            self.assertEqual(error["data"]["limit"], "--rate-limit-per-user")
            self.assertIn("--rate-limit-per-user 2/min", error["message"])
            self.assertTrue(1 <= error["data"]["retryAfterSeconds"] <= 60)
            self.assertEqual(server.request("ping")["result"], {})  # still up

    def test_a_malformed_rate_is_refused_at_start(self):
        with ServerProcess(["--rate-limit-per-user", "fast"]) as server:
            self.assertNotEqual(server.wait_exit(), 0)
            self.assertIn("--rate-limit-per-user", server.stderr)


class LimitsOverHttp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.provider = OAuthProvider()
        cls.addClassCleanup(cls.provider.close)

    def server(self, *args, env=None):
        server = HttpProcess("--oauth-issuer", self.provider.issuer, *args, env=env)
        self.addCleanup(server.close)
        return server

    def people(self, server, kind):
        make = LegacyClient if kind == "legacy" else ModernClient
        return [make(server.port, token=self.provider.client_credentials_token(c, server.url))
                for c in ("writer", "writer-es256")]

    def test_each_person_has_their_own_minute_and_a_refusal_is_429(self):
        for kind in ("legacy", "modern"):  # a server each: the two people's minutes start afresh
            with self.subTest(kind):
                server = self.server("--rate-limit-per-user", "3/min")
                alice, bob = self.people(server, kind)
                with_room_in_this_minute()
                for i in range(3):
                    status, _, body = alice.call_tool_raw("get_image", {"session_id": "a"})
                    self.assertEqual(status, 200, body)
                status, headers, body = alice.call_tool_raw("get_image", {"session_id": "a"})
                self.assertEqual(status, 429, body)
                self.assertTrue(1 <= int(headers["retry-after"]) <= 60, headers)
                self.assertEqual(body["error"]["code"], TOO_MANY_REQUESTS)
                self.assertEqual(body["error"]["data"]["limit"], "--rate-limit-per-user")
                self.assertEqual(body["error"]["data"]["retryAfterSeconds"],
                                 int(headers["retry-after"]))
                status, _, body = bob.call_tool_raw("get_image", {"session_id": "a"})
                self.assertEqual(status, 200, body)  # bob's own minute

    def test_a_persons_second_call_in_flight_is_refused(self):
        fake = FakeGemini()
        self.addCleanup(fake.close)
        server = self.server("--max-calls-per-user", "1", "--backend", "gemini",
                             env={"GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": fake.base_url})
        alice, bob = self.people(server, "modern")
        fake.script({"hold": "g"}, {"hold": "g"})
        answers = {}

        def generate(who, client):
            answers[who] = client.call_tool("generate_image", {"prompt": "a kite",
                                                               "session_id": who,
                                                               "inline": "none"})

        first = threading.Thread(target=generate, args=("alice", alice))
        second = threading.Thread(target=generate, args=("bob", bob))
        first.start()
        try:
            fake.wait(held=1, timeout=WAIT)  # alice's call is in flight, at the gate
            status, headers, body = alice.call_tool_raw("get_image", {"session_id": "alice"})
            self.assertEqual(status, 429, body)
            self.assertEqual(headers["retry-after"], "1")
            self.assertEqual(body["error"]["data"]["limit"], "--max-calls-per-user")
            second.start()  # bob's own call is not refused
            fake.wait(held=2, timeout=WAIT)
        finally:
            fake.release("g")
            first.join(WAIT)
            if second.is_alive() or second.ident is not None:
                second.join(WAIT)
        for who in ("alice", "bob"):
            self.assertFalse(answers[who]["result"].get("isError"), answers[who])
        status, _, body = alice.call_tool_raw("get_image", {"session_id": "alice"})
        self.assertEqual(status, 200, body)  # her first call is over


if __name__ == "__main__":
    unittest.main()
