"""Hostile or broken answers to imgmcp's Gemini and Vertex AI calls, with the real binary against
the Gemini fake (tests/fake_gemini) and its token endpoint (docs/bad-input.md, "Backend answers"):

- an endpoint or proxy that echoes the request's headers in an error body (the access token,
  the API key) or a token endpoint that echoes the request's credentials (the refresh token, the
  client secret, the signed JWT assertion): each is `[redacted]` in the result, the progress
  lines and the log, and never appears verbatim or in part;
- a token endpoint that never answers: the error names the token endpoint, not Gemini;
- `expires_in: 1e300` or a negative one: clamped, and the token is still reused by the next call;
- answers over the caps (gemini_client/http_call.h): a Gemini answer over 96 MiB, declared or
  chunked, and a token answer over 64 KiB are refused naming the cap and the endpoint, without
  a retry; an access token over 8 KiB is never sent as a header."""
import re
import unittest

from docs_support import assert_listed, names_of_tests
from fake_gemini_support import TEST_KEY, FakeGeminiTestCase, progress_of
from mcp_harness import ServerProcess
from tools_support import error_text, structured
from vertex_support import (CLIENT_SECRET, REFRESH_TOKEN, ServiceAccount, configure_fake,
                            vertex_env)

MiB = 1 << 20


def pieces(secret, size=12):
    """`secret` and the consecutive pieces of it a cut quotation could leave behind."""
    return [secret] + [secret[i:i + size] for i in range(0, len(secret) - size + 1, size)]


class HardeningBase(FakeGeminiTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.account = ServiceAccount()
        cls.addClassCleanup(cls.account.close)
        cls.token_uri = cls.fake.base_url + "/token"
        cls.sa_file = cls.account.service_account_file(cls.token_uri)

    def setUp(self):
        super().setUp()
        configure_fake(self.fake, self.account)

    def start(self, credentials=None, extra_args=(), backend="vertex", env=None):
        env = env or vertex_env(self.fake, credentials or self.sa_file)
        server = ServerProcess(args=["--backend", backend, "--log-level", "debug", *extra_args],
                               env=env)
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        return server

    def generate(self, server, progress=None):
        meta = {"progressToken": progress} if progress else None
        return server.call_tool("generate_image", {"session_id": "h", "prompt": "solid red",
                                                   "inline": "none"}, timeout=90, meta=meta)

    def assert_nothing_committed(self, server):
        text = error_text(server.call_tool("get_image", {"session_id": "h"}))
        self.assertIn("unknown session", text)

    def assert_absent(self, secrets, texts):
        for secret in secrets:
            for piece in pieces(secret):
                for text in texts:
                    self.assertNotIn(piece, text, f"a piece of a secret ({secret[:10]}…) leaked")

    def issued_tokens(self):
        return [r["token"] for r in self.fake.token_requests() if r.get("token")]


class Redaction(HardeningBase):
    def test_an_access_token_echoed_in_error_bodies_is_redacted_everywhere(self):
        # A 503 whose JSON error message lists the headers (retried: a progress line and a log
        # line quote it), then a 400 whose plain-text body does (the result quotes it).
        self.fake.script({"status": 503, "echo_headers": "json"},
                         {"status": 400, "echo_headers": "text"})
        server = self.start()
        resp = self.generate(server, progress="p1")
        text = error_text(resp)
        self.assertEqual(len(self.fake.requests()), 2)
        [token] = self.issued_tokens()
        self.assertIn("Bearer [redacted]", text)
        progress = [p.get("message", "") for p in progress_of(server, "p1")]
        self.assertTrue(any("503" in line for line in progress), progress)
        self.assert_absent([token], [text, server.stderr, *progress])
        self.assert_nothing_committed(server)

    def test_an_api_key_echoed_in_an_error_body_is_redacted_too(self):
        self.fake.script({"status": 400, "echo_headers": "json"})
        server = self.start(backend="gemini",
                            env={"GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": self.fake.base_url})
        text = error_text(self.generate(server))
        self.assertIn("x-goog-api-key: [redacted]", text)
        self.assert_absent([TEST_KEY], [text, server.stderr])

    def test_a_refresh_token_and_client_secret_echoed_by_the_token_endpoint_are_redacted(self):
        self.fake.configure_oauth(echo_request=True)
        server = self.start(self.account.authorized_user_file(self.token_uri))
        text = error_text(self.generate(server))
        self.assertIn("refresh_token=[redacted]", text)
        self.assertIn("the token endpoint", text)
        self.assert_absent([REFRESH_TOKEN, CLIENT_SECRET], [text, server.stderr])
        self.assertEqual(self.fake.requests(), [])

    def test_a_jwt_assertion_echoed_by_the_token_endpoint_is_redacted_also_by_self_check(self):
        self.fake.configure_oauth(echo_request=True)
        server = self.start()
        text = error_text(self.generate(server))
        check = ServerProcess(args=["--backend", "vertex", "--self-check-token"],
                              env=vertex_env(self.fake, self.sa_file))
        self.addCleanup(check.__exit__, None, None, None)
        self.assertNotEqual(check.proc.wait(timeout=60), 0)
        check.__exit__(None, None, None)
        self.assertIn("self-check FAILED", check.stderr)
        assertions = [re.search(r"assertion=([A-Za-z0-9_.-]+)", r["error"]).group(1)
                      for r in self.fake.token_requests()]
        self.assertGreaterEqual(len(assertions), 2)
        self.assertIn("assertion=[redacted]", text)
        # The JWT's header is no secret; its claims and signature are.
        secrets = [a.split(".", 1)[1] for a in assertions]
        self.assert_absent(secrets, [text, server.stderr, check.stderr])


class TokenEndpoint(HardeningBase):
    def test_a_hanging_token_endpoint_is_named_when_the_deadline_passes(self):
        self.fake.configure_oauth(hold="never")
        server = self.start(extra_args=["--gemini-timeout", "2"])
        text = error_text(self.generate(server))
        self.assertIn(f"the token endpoint {self.token_uri}", text)
        self.assertIn("call deadline", text)
        self.assertNotIn("Gemini did not answer", text)
        self.assertEqual(self.fake.requests(), [])
        self.assert_nothing_committed(server)

    def test_a_huge_expires_in_is_clamped_and_the_token_reused(self):
        self.fake.configure_oauth(expires_in=1e300)
        server = self.start()
        self.assertEqual(structured(self.generate(server))["version"], 1)
        self.assertEqual(structured(self.generate(server))["version"], 2)
        self.assertEqual(len(self.fake.token_requests()), 1)

    def test_a_negative_expires_in_is_clamped_and_the_token_reused(self):
        self.fake.configure_oauth(expires_in=-5)
        server = self.start()
        self.assertEqual(structured(self.generate(server))["version"], 1)
        self.assertEqual(structured(self.generate(server))["version"], 2)
        self.assertEqual(len(self.fake.token_requests()), 1)

    def test_a_token_answer_over_64_kib_is_refused_without_a_retry(self):
        self.fake.configure_oauth(access_token_bytes=MiB)
        server = self.start()
        text = error_text(self.generate(server))
        self.assertIn(f"the token endpoint {self.token_uri}", text)
        self.assertIn("64 KiB", text)
        self.assertEqual(len(self.fake.token_requests()), 1)
        self.assertEqual(self.fake.requests(), [])
        self.assert_nothing_committed(server)

    def test_an_access_token_over_8_kib_is_never_sent_as_a_header(self):
        self.fake.configure_oauth(access_token_bytes=16 * 1024)
        server = self.start()
        text = error_text(self.generate(server))
        self.assertIn("access_token of 16384 bytes", text)
        self.assertIn("8 KiB", text)
        self.assertEqual(len(self.fake.token_requests()), 1)
        self.assertEqual(self.fake.requests(), [])
        self.assert_absent([self.issued_tokens()[0][:40]], [text, server.stderr])


class AnswerCap(HardeningBase):
    def check_refused(self, action, backend):
        self.fake.script(action)
        if backend == "gemini":
            server = self.start(backend="gemini", env={"GEMINI_API_KEY": TEST_KEY,
                                                       "GEMINI_BASE_URL": self.fake.base_url})
        else:
            server = self.start()
        text = error_text(self.generate(server))
        self.assertIn("96 MiB", text)
        self.assertIn(self.fake.base_url, text)
        self.assertEqual(len(self.fake.requests()), 1, "an over-cap answer is not retried")
        self.assert_nothing_committed(server)
        return text

    def test_a_declared_answer_over_96_mib_is_refused_at_once(self):
        self.check_refused({"answer_bytes": 97 * MiB}, "gemini")

    def test_a_chunked_answer_over_96_mib_is_refused_without_a_retry(self):
        self.check_refused({"answer_bytes": 97 * MiB, "chunked": True}, "vertex")

    def test_an_answer_just_under_the_cap_is_read(self):
        # 95 MiB of text and no image: read whole, then refused for what it says, not its size.
        self.fake.script({"answer_bytes": 95 * MiB})
        server = self.start()
        text = error_text(self.generate(server))
        self.assertNotIn("96 MiB", text)
        self.assertIn("text", text)


class CatalogueDocs(unittest.TestCase):
    def test_both_docs_list_every_case_here(self):
        assert_listed(self, names_of_tests(Redaction, TokenEndpoint, AnswerCap),
                      pages=("bad-input.md", "security.md"))


if __name__ == "__main__":
    unittest.main()
