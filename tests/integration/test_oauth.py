"""imgmcp as an OAuth 2.1 resource server, against a real authorization server (oidc-provider,
tests/oauth/provider.mjs, through oauth_support.py) and the real binary over HTTP.

One provider and one `imgmcp --http 127.0.0.1:0 --oauth-issuer ISSUER` serve the whole class; the
resource is the listener's own /mcp URL (the default). Covered: the RFC 9728 metadata and the 401
challenge that leads to it; tokens from the client-credentials grant (RS256, ES256, EdDSA) and from
the authorization-code grant with PKCE; tokens refused for each rule (expired, not yet valid, wrong
audience, another issuer, tampered, alg none, HMAC, wrong typ, no subject); the read and write
scopes (403 insufficient_scope); a legacy session belonging to the principal that opened it; key
rotation without a restart; and no token in any log line or answer.
"""
import base64
import concurrent.futures
import http.client
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support)
from oauth_support import OAuthProvider, decode_jwt_unverified  # noqa: E402

TIMEOUT = 20.0
LATEST = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT_BOTH = "application/json, text/event-stream"
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": LATEST, "capabilities": {},
                         "clientInfo": {"name": "test_oauth", "version": "1"}}}


def challenge_params(value):
    """The auth-params of a `Bearer k="v", k="v"` challenge as a dict."""
    scheme, _, rest = value.partition(" ")
    assert scheme.lower() == "bearer", value
    params = {}
    for part in rest.split('", '):
        key, _, quoted = part.strip().partition("=")
        params[key] = quoted.strip('"')
    return params


def flip_last_char(text):
    return text[:-1] + ("A" if text[-1] != "A" else "B")


class OAuthServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.provider = OAuthProvider()
        try:
            cls.server = HttpProcess("--oauth-issuer", cls.provider.issuer)
        except BaseException:
            cls.provider.close()
            raise
        cls.resource = cls.server.url
        cls.tokens_seen = []

    @classmethod
    def tearDownClass(cls):
        try:
            cls.server.close()
            # No token, whole or in part (its signature), in anything the server logged.
            for token in cls.tokens_seen:
                for piece in (token, token.split(".")[-1]):
                    if len(piece) >= 16:
                        assert piece not in cls.server.stderr, "a token was logged"
        finally:
            cls.provider.close()

    # --- helpers ------------------------------------------------------------------------------
    def token(self, client="writer", resource=None, scope=None):
        token = self.provider.client_credentials_token(client, resource or self.resource, scope)
        self.tokens_seen.append(token)
        return token

    def post(self, body, token=None, session=None, headers=None, path="/mcp", server=None):
        """(status, headers with lower-case names, parsed JSON body or raw bytes), from the
        class's server or `server`."""
        server = server or self.server
        conn = server.connection()
        try:
            h = {"Host": "127.0.0.1:%d" % server.port, "Content-Type": "application/json",
                 "Accept": ACCEPT_BOTH}
            if token is not None:
                h["Authorization"] = "Bearer " + token
            if session:
                h["Mcp-Session-Id"] = session
            h.update(headers or {})
            conn.request("POST", path, body=json.dumps(body).encode(), headers=h)
            resp = conn.getresponse()
            raw = resp.read()
            answer_headers = {k.lower(): v for k, v in resp.getheaders()}
            if answer_headers.get("content-type", "").startswith("text/event-stream"):
                # A streamed answer: its last message is the response.
                data = [line[5:].strip() for line in raw.decode().splitlines()
                        if line.startswith("data:") and line[5:].strip()]
                parsed = json.loads(data[-1])
            else:
                try:
                    parsed = json.loads(raw)
                except ValueError:
                    parsed = raw
            return resp.status, answer_headers, parsed
        finally:
            conn.close()

    def get(self, path):
        conn = self.server.connection()
        try:
            conn.request("GET", path, headers={"Host": "127.0.0.1:%d" % self.server.port})
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def initialize(self, token):
        status, headers, body = self.post(INITIALIZE, token)
        self.assertEqual(status, 200, body)
        session = headers["mcp-session-id"]
        status, _, _ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                                 token, session)
        self.assertEqual(status, 202)
        return session

    def call_tool(self, token, session, name, arguments, id_=1):
        return self.post({"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}}, token, session)

    def assert_refused_token(self, token, why):
        self.tokens_seen.append(token)
        status, headers, body = self.post(INITIALIZE, token)
        self.assertEqual(status, 401, f"{why}: {body}")
        params = challenge_params(headers["www-authenticate"])
        self.assertEqual(params.get("error"), "invalid_token", why)
        self.assertIn("resource_metadata", params)
        text = json.dumps(body) + headers["www-authenticate"]
        self.assertNotIn(token, text)
        self.assertNotIn(token.split(".")[-1] or token, text)
        return body["error"]["message"]

    # --- discovery ----------------------------------------------------------------------------
    def test_protected_resource_metadata_is_served_without_a_token(self):
        for path in ("/.well-known/oauth-protected-resource/mcp",
                     "/.well-known/oauth-protected-resource"):
            status, headers, body = self.get(path)
            self.assertEqual(status, 200, path)
            self.assertTrue(headers["content-type"].startswith("application/json"))
            metadata = json.loads(body)
            self.assertEqual(metadata["resource"], self.resource)
            self.assertEqual(metadata["authorization_servers"], [self.provider.issuer])
            self.assertEqual(metadata["scopes_supported"], ["imgmcp:read", "imgmcp:write"])
            self.assertEqual(metadata["bearer_methods_supported"], ["header"])
        status, _, _ = self.get("/.well-known/oauth-protected-resource/other")
        self.assertEqual(status, 404)

    def test_a_request_without_a_token_gets_a_challenge_naming_the_metadata(self):
        for headers in ({}, {"Authorization": "Basic d3JpdGVyOnNlY3JldA=="}):
            status, answer, body = self.post(INITIALIZE, headers=headers)
            self.assertEqual(status, 401)
            params = challenge_params(answer["www-authenticate"])
            metadata_url = params["resource_metadata"]
            self.assertEqual(metadata_url, "http://127.0.0.1:%d/.well-known/"
                             "oauth-protected-resource/mcp" % self.server.port)
            self.assertEqual(params["scope"], "imgmcp:read imgmcp:write")
            self.assertNotIn("error", params)  # no token at all: no error code (RFC 6750 §3.1)
            self.assertEqual(body["error"]["code"], -32000)
        # The modern era too: a 2026-07-28 request without a token.
        status, answer, _ = self.post(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
             "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}},
            headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"})
        self.assertEqual(status, 401)
        self.assertIn("resource_metadata=", answer["www-authenticate"])

    # --- tokens that are accepted -------------------------------------------------------------
    def test_client_credentials_tokens_of_each_algorithm_are_accepted(self):
        for client, alg in (("writer", "RS256"), ("writer-es256", "ES256"),
                            ("writer-eddsa", "EdDSA")):
            token = self.token(client)
            self.assertEqual(decode_jwt_unverified(token)[0]["alg"], alg)
            session = self.initialize(token)
            status, _, body = self.call_tool(token, session, "generate_image",
                                             {"prompt": "a red square", "session_id": "fox"})
            self.assertEqual(status, 200, body)
            self.assertFalse(body["result"].get("isError"), body)

    def test_an_authorization_code_token_with_pkce_is_accepted(self):
        token = self.provider.authorization_code_token(self.resource, login="alice")
        self.tokens_seen.append(token)
        self.assertEqual(decode_jwt_unverified(token)[1]["sub"], "alice")
        session = self.initialize(token)
        status, _, body = self.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, token,
                                    session)
        self.assertEqual(status, 200, body)
        self.assertIn("generate_image", [t["name"] for t in body["result"]["tools"]])

    # --- tokens that are refused --------------------------------------------------------------
    def test_tokens_breaking_a_rule_are_refused(self):
        now = int(time.time())
        claims = self.provider.token_claims
        sign = self.provider.sign
        cases = {
            "expired beyond the leeway": sign(claims(self.resource, exp=now - 120)),
            "not valid yet": sign(claims(self.resource, nbf=now + 600)),
            "no expiry": sign(claims(self.resource, exp=None)),
            "no subject": sign(claims(self.resource, sub=None)),
            "another issuer's iss": sign(claims(self.resource, iss="http://127.0.0.1:1")),
            "typ of an ID token": sign(claims(self.resource), header={"typ": "id+jwt"}),
            "alg none": sign(claims(self.resource), header={"alg": "none"}),
            "a key id the issuer never had": sign(claims(self.resource), header={"kid": "nope"}),
            "audience with a trailing slash": sign(claims(self.resource + "/")),
            "another resource's audience": self.token(resource="http://127.0.0.1:1/mcp"),
        }
        good = self.token()
        header, payload, signature = good.split(".")
        tampered = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        tampered["sub"] = "someone-else"
        forged = base64.urlsafe_b64encode(json.dumps(tampered).encode()).rstrip(b"=").decode()
        cases["tampered payload"] = ".".join((header, forged, signature))
        cases["tampered signature"] = flip_last_char(good)
        hs_header = base64.urlsafe_b64encode(json.dumps(
            {"alg": "HS256", "typ": "at+jwt",
             "kid": decode_jwt_unverified(good)[0]["kid"]}).encode()).rstrip(b"=").decode()
        cases["HMAC (HS256)"] = ".".join((hs_header, payload, signature))
        cases["not a JWT"] = "opaque-looking-token-0123456789"
        for why, token in cases.items():
            with self.subTest(why):
                self.assert_refused_token(token, why)

    def test_a_token_of_an_untrusted_issuer_is_refused(self):
        with OAuthProvider() as other:
            token = other.client_credentials_token("writer", self.resource)
            message = self.assert_refused_token(token, "untrusted issuer")
            self.assertIn("trusted issuer", message)

    # --- scopes -------------------------------------------------------------------------------
    def test_a_read_only_token_reads_but_cannot_write(self):
        writer = self.token("writer")
        session = self.initialize(writer)
        status, _, body = self.call_tool(writer, session, "generate_image",
                                         {"prompt": "blue", "session_id": "scoped"})
        self.assertEqual(status, 200, body)
        reader = self.token("reader")
        self.assertEqual(decode_jwt_unverified(reader)[1]["scope"], "imgmcp:read")
        session = self.initialize(reader)
        status, _, body = self.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, reader,
                                    session)
        self.assertEqual(status, 200, body)
        status, _, body = self.call_tool(reader, session, "get_image", {"session_id": "nobody"})
        self.assertEqual(status, 200, body)  # allowed; the session is simply not there
        writes = {"generate_image": {"prompt": "x", "session_id": "r"},
                  "edit_image": {"prompt": "x", "session_id": "r"},
                  "reset_session": {"session_id": "r"},
                  "get_image": {"session_id": "r", "save_to": "out.png"}}
        for name, arguments in writes.items():
            with self.subTest(name):
                status, headers, body = self.call_tool(reader, session, name, arguments)
                self.assertEqual(status, 403, body)
                params = challenge_params(headers["www-authenticate"])
                self.assertEqual(params["error"], "insufficient_scope")
                self.assertEqual(params["scope"], "imgmcp:write")
                self.assertIn("imgmcp:write", body["error"]["message"])

    # --- principals ---------------------------------------------------------------------------
    def test_a_legacy_session_belongs_to_the_principal_that_opened_it(self):
        alice = self.token("writer")
        bob = self.token("writer-es256")
        session = self.initialize(alice)
        status, _, _ = self.post({"jsonrpc": "2.0", "id": 4, "method": "ping"}, bob, session)
        self.assertEqual(status, 404)  # not "forbidden": another person's session does not exist
        status, _, _ = self.post({"jsonrpc": "2.0", "id": 5, "method": "ping"}, alice, session)
        self.assertEqual(status, 200)

    # --- concurrency --------------------------------------------------------------------------
    def test_many_requests_at_once_with_new_and_repeated_tokens(self):
        # Tokens of three keys (one per algorithm), each first seen by several requests at once:
        # the keys are fetched, tokens checked and remembered, while other requests are refused
        # (tampered tokens) — 48 requests in flight over 16 threads. (Also under ThreadSanitizer.)
        tokens = [self.token(client) for client in ("writer", "writer-es256", "writer-eddsa")]
        jobs = [(tokens[i % 3], True) for i in range(36)]
        jobs += [(flip_last_char(tokens[i % 3]), False) for i in range(12)]

        def one(job):
            token, good = job
            status, _, body = self.post(INITIALIZE, token)
            return status == (200 if good else 401), (status, body)

        with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
            results = list(pool.map(one, jobs))
        self.assertEqual([r for r in results if not r[0]], [])

    # --- keys ---------------------------------------------------------------------------------
    def test_rotated_keys_are_fetched_without_a_restart(self):
        # A server of its own, so that no other test's fetch counts against its interval.
        with HttpProcess("--oauth-issuer", self.provider.issuer) as server:
            first = self.token("writer", resource=server.url)
            status, _, body = self.post(INITIALIZE, first, server=server)
            self.assertEqual(status, 200, body)  # the keys are cached now
            new_kid = self.provider.rotate_keys()
            token = self.token("writer", resource=server.url)
            self.assertEqual(decode_jwt_unverified(token)[0]["kid"], new_kid)
            # The unknown key id makes the server fetch the keys again, at once: the fetch that
            # first filled its set does not count against the once-per-2-s limit.
            status, _, body = self.post(INITIALIZE, token, server=server)
            self.assertEqual(status, 200, body)
            # The log line of the second fetch is read from the server's stderr on a thread.
            text = server.wait_for_stderr(lambda t: t.count("usable signing key(s)") >= 2)
            self.assertEqual(text.count("usable signing key(s)"), 2, text)


class OAuthIntrospectionTest(unittest.TestCase):
    """Opaque tokens, asked about at the provider's RFC 7662 endpoint with imgmcp's own client
    credentials (client imgmcp-rs)."""

    SECRET = "imgmcp-rs-secret"

    @classmethod
    def setUpClass(cls):
        cls.provider = OAuthProvider()
        try:
            cls.server = HttpProcess(
                "--oauth-issuer", cls.provider.issuer,
                "--oauth-introspection-url", cls.provider.metadata["introspection_endpoint"],
                "--oauth-client-id", "imgmcp-rs", env={"IMGMCP_OAUTH_CLIENT_SECRET": cls.SECRET})
        except BaseException:
            cls.provider.close()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.server.close()
            assert cls.SECRET not in cls.server.stderr
        finally:
            cls.provider.close()

    post = OAuthServerTest.post
    initialize = OAuthServerTest.initialize
    call_tool = OAuthServerTest.call_tool

    def test_an_opaque_token_is_introspected_and_accepted(self):
        token = self.provider.client_credentials_token("opaque", self.server.url)
        self.assertEqual(token.count("."), 0, "the opaque client's token is not a JWT")
        session = self.initialize(token)
        status, _, body = self.call_tool(token, session, "generate_image",
                                         {"prompt": "green", "session_id": "opaque"})
        self.assertEqual(status, 200, body)
        self.assertNotIn(token, self.server.stderr)

    def test_an_unknown_opaque_token_is_refused(self):
        status, headers, body = self.post(INITIALIZE, "never-issued-0123456789abcdef")
        self.assertEqual(status, 401, body)
        self.assertEqual(challenge_params(headers["www-authenticate"])["error"], "invalid_token")
        self.assertIn("not active", body["error"]["message"])


class OAuthFlagsTest(unittest.TestCase):
    def start_refused(self, *args):
        with self.assertRaises(RuntimeError) as refused:
            HttpProcess(*args, start_timeout=TIMEOUT).close()
        return str(refused.exception)

    def test_flags_that_cannot_work_are_refused_at_start(self):
        self.assertIn("https://", self.start_refused("--oauth-issuer", "http://issuer.example"))
        self.assertIn("exclude each other", self.start_refused(
            "--oauth-issuer", "http://127.0.0.1:9", "--auth-token", "t"))
        self.assertIn("--oauth-resource", self.start_refused(
            "--oauth-issuer", "https://issuer.example", "--http", "0.0.0.0:0"))
        self.assertIn("IMGMCP_OAUTH_CLIENT_SECRET", self.start_refused(
            "--oauth-issuer", "http://127.0.0.1:9", "--oauth-introspection-url",
            "http://127.0.0.1:9/introspect", "--oauth-client-id", "rs"))
        self.assertIn("READ,WRITE", self.start_refused(
            "--oauth-issuer", "https://issuer.example", "--oauth-scopes", "only-one"))


if __name__ == "__main__":
    unittest.main()
