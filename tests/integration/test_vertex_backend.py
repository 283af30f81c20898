"""--backend vertex with the real binary against the Gemini fake's Vertex AI surface and its
token endpoint (tests/fake_gemini/fake_oauth.h): every credential kind of Application Default
Credentials in Google's order, express mode, a 401 once then success, 32 concurrent calls with a
rejected token and one token request, wrong files and keys and an unreachable metadata server
(clear errors, nothing committed), the location rules, `auto`, --self-check-token; and no key
material, secret or token in anything imgmcp writes."""
import os
import shutil
import tempfile
import unittest

from fake_gemini_support import FakeGeminiTestCase, current_version
from mcp_harness import ServerProcess
from ports import refusing_port  # tests/support, on sys.path through mcp_harness
from tools_support import error_text, structured
from vertex_support import (CLIENT_SECRET, EXPRESS_KEY, PROJECT, REFRESH_TOKEN, ServiceAccount,
                            configure_fake, vertex_env)

MODEL = "gemini-3.1-flash-lite-image"


class VertexBase(FakeGeminiTestCase):
    backend = "vertex"
    stderr_seen = []  # every imgmcp stderr of the class, scanned for secrets at the end

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.account = ServiceAccount()
        cls.addClassCleanup(cls.account.close)
        cls.token_uri = cls.fake.base_url + "/token"
        cls.sa_file = cls.account.service_account_file(cls.token_uri)
        cls.stderr_seen = []
        cls.tokens_seen = []  # every token the fake issued to the class's tests
        cls.addClassCleanup(cls.check_no_secret_was_written)

    @classmethod
    def check_no_secret_was_written(cls):
        tokens = cls.tokens_seen
        if not cls.stderr_seen or not cls.account.key_material:
            raise AssertionError("nothing was scanned for secrets")
        secrets = [CLIENT_SECRET, REFRESH_TOKEN, EXPRESS_KEY, *cls.account.key_material, *tokens]
        for text in cls.stderr_seen:
            for secret in secrets:
                if secret in text:
                    raise AssertionError(f"a secret ({secret[:8]}…) appeared on stderr")

    def setUp(self):
        super().setUp()
        configure_fake(self.fake, self.account)
        self.addCleanup(lambda: self.tokens_seen.extend(
            r["token"] for r in self.fake.token_requests() if r.get("token")))

    def env(self, credentials=None, **extra):
        return vertex_env(self.fake, credentials or self.sa_file, **extra)

    def start(self, env=None, extra_args=(), backend="vertex"):
        server = ServerProcess(args=["--backend", backend, *extra_args],
                               env=self.env() if env is None else env)
        self.addCleanup(lambda: self.stderr_seen.append(server.stderr))
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        return server

    def start_failing(self, env, extra_args=()):
        """A server that must stop at start-up: its stderr."""
        server = ServerProcess(args=["--backend", "vertex", *extra_args], env=env)
        self.addCleanup(server.__exit__, None, None, None)
        self.assertNotEqual(server.proc.wait(timeout=30), 0)
        server.__exit__(None, None, None)
        self.stderr_seen.append(server.stderr)
        return server.stderr

    def generate(self, server, session="v", **extra):
        return server.call_tool("generate_image", {"session_id": session, "prompt": "solid red",
                                                   "inline": "none", **extra}, timeout=60)

    def assert_nothing_committed(self, server):
        text = error_text(server.call_tool("get_image", {"session_id": "v"}))
        self.assertIn("unknown session", text)

    def token_kinds(self):
        return [(r["kind"], r["ok"]) for r in self.fake.token_requests()]


class CredentialKinds(VertexBase):
    def test_service_account_jwt_is_verified_and_the_token_reaches_the_vertex_path(self):
        server = self.start(extra_args=["--log-level", "debug"])
        sc = structured(self.generate(server))
        self.assertEqual((sc["backend"], sc["version"]), ("vertex", 1))
        [req] = self.fake.token_requests()
        self.assertEqual((req["kind"], req["ok"]), ("jwt", True), req)
        claims = req["claims"]
        self.assertEqual(claims["aud"], self.token_uri)
        self.assertEqual(claims["scope"], "https://www.googleapis.com/auth/cloud-platform")
        self.assertLessEqual(claims["exp"] - claims["iat"], 3600)
        [entry] = self.fake.requests()
        self.assertEqual(entry["path"], f"/v1/projects/{PROJECT}/locations/global/publishers/"
                                        f"google/models/{MODEL}:generateContent")
        self.assertTrue(entry["bearer_valid"])
        self.assertFalse(entry["api_key_present"])
        # The token is reused by the next call.
        structured(self.generate(server))
        self.assertEqual(len(self.fake.token_requests()), 1)

    def test_authorized_user_refresh_grant(self):
        user = self.account.authorized_user_file(self.token_uri)
        server = self.start(self.env(user))
        self.assertEqual(structured(self.generate(server))["version"], 1)
        self.assertEqual(self.token_kinds(), [("refresh", True)])

    def test_gcloud_well_known_file_is_found_through_home(self):
        home = tempfile.mkdtemp(prefix="imgmcp-home-")
        self.addCleanup(shutil.rmtree, home, True)
        os.makedirs(os.path.join(home, ".config", "gcloud"))
        shutil.copy(self.account.authorized_user_file(self.token_uri),
                    os.path.join(home, ".config", "gcloud", "application_default_credentials.json"))
        env = self.env(HOME=home)
        del env["GOOGLE_APPLICATION_CREDENTIALS"]
        server = self.start(env)
        self.assertEqual(structured(self.generate(server))["version"], 1)
        self.assertEqual(self.token_kinds(), [("refresh", True)])

    def test_metadata_server_when_no_file_is_found(self):
        env = self.env(GCE_METADATA_HOST=self.fake.base_url[len("http://"):])
        del env["GOOGLE_APPLICATION_CREDENTIALS"]
        server = self.start(env)
        self.assertEqual(structured(self.generate(server))["version"], 1)
        self.assertEqual(self.token_kinds(), [("metadata", True)])

    def test_express_mode_key_without_a_project(self):
        env = {"GOOGLE_API_KEY": EXPRESS_KEY, "IMGMCP_VERTEX_BASE_URL": self.fake.base_url,
               "HOME": "/nonexistent"}
        server = self.start(env)
        self.assertEqual(structured(self.generate(server))["backend"], "vertex")
        [entry] = self.fake.requests()
        self.assertEqual(entry["path"], f"/v1/publishers/google/models/{MODEL}:generateContent")
        self.assertEqual(entry["api_key"], EXPRESS_KEY)
        self.assertEqual(self.fake.token_requests(), [])


class Refresh(VertexBase):
    def test_a_401_refreshes_once_and_retries(self):
        server = self.start()
        structured(self.generate(server))
        self.fake.expire_tokens()
        self.assertEqual(structured(self.generate(server))["version"], 2)
        self.assertEqual(self.token_kinds(), [("jwt", True), ("jwt", True)])
        statuses = [e["response_status"] for e in self.fake.requests()]
        self.assertEqual(statuses, [200, 401, 200])

    def test_thirty_two_concurrent_calls_with_a_rejected_token_make_one_token_request(self):
        server = self.start(extra_args=["--max-backend-calls", "32"])
        structured(self.generate(server, "warm"))
        self.fake.expire_tokens()
        ids = []
        for i in range(32):
            rid = server.next_id()
            ids.append(rid)
            server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                         "params": {"name": "generate_image", "arguments": {
                             "session_id": f"c{i}", "prompt": "solid blue", "inline": "none"}}})
        for rid in ids:
            resp = server.wait_for(lambda m, rid=rid: m.get("id") == rid, timeout=90)
            self.assertEqual(structured(resp)["version"], 1)
        self.assertEqual(self.token_kinds(), [("jwt", True), ("jwt", True)])

    def test_a_persistent_401_is_a_clear_error_and_commits_nothing(self):
        server = self.start()
        structured(self.generate(server))
        # Every token the fake issues is rejected: refresh once, then give up.
        self.fake.configure_oauth(token_lifetime_s=0)
        self.fake.expire_tokens()
        text = error_text(self.generate(server))
        self.assertIn("401", text)
        self.assertIn("service_account", text)
        self.assertEqual(current_version(server, "v"), 1)


class BadCredentials(VertexBase):
    def test_missing_file_names_the_file(self):
        missing = os.path.join(self.account.dir, "nope.json")
        stderr = self.start_failing(self.env(missing))
        self.assertIn(missing, stderr)
        self.assertIn("GOOGLE_APPLICATION_CREDENTIALS", stderr)
        self.assertIn("cannot be read", stderr)

    def test_not_json_names_the_file_not_its_content(self):
        bad = self.account.write("bad.json", "not json " + CLIENT_SECRET)
        stderr = self.start_failing(self.env(bad))
        self.assertIn(bad, stderr)
        self.assertIn("is not a JSON object", stderr)

    def test_missing_field_and_unsupported_type(self):
        no_key = self.account.service_account_file(self.token_uri, name="nokey.json",
                                                   private_key="")
        self.assertIn('has no "private_key"', self.start_failing(self.env(no_key)))
        external = self.account.write("ext.json", {"type": "external_account"})
        self.assertIn('"external_account", which imgmcp does not support',
                      self.start_failing(self.env(external)))

    def test_a_key_the_token_endpoint_rejects_commits_nothing(self):
        other = ServiceAccount()
        self.addCleanup(other.close)
        wrong = self.account.service_account_file(self.token_uri, name="wrong.json",
                                                  private_key=other.private_pem)
        server = self.start(self.env(wrong))
        text = error_text(self.generate(server))
        self.assertIn("Invalid JWT Signature", text)
        self.assertIn(wrong, text)
        self.assertEqual(self.fake.requests(), [])
        self.assert_nothing_committed(server)
        self.stderr_seen.append(text)
        for line in other.key_material:
            self.assertNotIn(line, text)

    def test_a_private_key_that_is_not_pem_names_the_file(self):
        garbage = self.account.service_account_file(self.token_uri, name="garbage.json",
                                                    private_key="-----BEGIN PRIVATE KEY-----\nxx")
        server = self.start(self.env(garbage))
        text = error_text(self.generate(server))
        self.assertIn(garbage, text)
        self.assertIn("not a PEM private key", text)
        self.assert_nothing_committed(server)

    def test_unreachable_metadata_server_is_a_clear_error(self):
        host = f"127.0.0.1:{refusing_port(self)}"
        env = self.env(GCE_METADATA_HOST=host)
        del env["GOOGLE_APPLICATION_CREDENTIALS"]
        server = self.start(env, extra_args=["--gemini-timeout", "10"])
        text = error_text(self.generate(server))
        self.assertIn(f"metadata server at {host}", text)
        self.assertIn("GOOGLE_APPLICATION_CREDENTIALS", text)
        self.assertEqual(self.fake.requests(), [])
        self.assert_nothing_committed(server)


class LocationsAndChoice(VertexBase):
    def test_a_regional_location_refuses_global_only_models_before_any_request(self):
        stderr = self.start_failing(self.env(GOOGLE_CLOUD_LOCATION="us-central1"))
        self.assertIn("not offered by Vertex AI in location us-central1", stderr)
        # The one model the regions serve is retired: it takes --allow-retired.
        stderr = self.start_failing(self.env(GOOGLE_CLOUD_LOCATION="us-central1"),
                                    ["--model", "gemini-2.5-flash-image"])
        self.assertIn("the default model gemini-2.5-flash-image was retired on 2026-10-02", stderr)
        server = self.start(self.env(GOOGLE_CLOUD_LOCATION="us-central1"),
                            extra_args=["--model", "gemini-2.5-flash-image", "--allow-retired"])
        structured(self.generate(server))
        self.assertIn("/locations/us-central1/", self.fake.requests()[0]["path"])
        # The location offers only what it serves: the call is refused by the tool's check,
        # naming the location and where the model is served.
        text = error_text(self.generate(server, model="gemini-3.1-flash-image"))
        self.assertIn('"gemini-3.1-flash-image"; allowed: "gemini-2.5-flash-image"', text)
        self.assertIn("Vertex AI location us-central1 serves only gemini-2.5-flash-image", text)
        self.assertIn("global location (--vertex-location global)", text)
        self.assertEqual(len(self.fake.requests()), 1)

    def test_regional_default_base_url_and_global_host(self):
        # Without an override the URL follows the location; --self-check shows it.
        env = self.env(GOOGLE_CLOUD_LOCATION="europe-west4")
        del env["IMGMCP_VERTEX_BASE_URL"]
        stderr = self.start_failing(env, ["--self-check", "--model", "gemini-2.5-flash-image",
                                          "--allow-retired", "--vertex-project", "bad project"])
        self.assertIn("project id", stderr)
        server = ServerProcess(args=["--backend", "vertex", "--self-check", "--model",
                                     "gemini-2.5-flash-image", "--allow-retired"], env=env)
        self.addCleanup(server.__exit__, None, None, None)
        self.assertEqual(server.proc.wait(timeout=30), 0, server.stderr)
        server.__exit__(None, None, None)
        self.assertIn("https://europe-west4-aiplatform.googleapis.com", server.stderr)
        del env["GOOGLE_CLOUD_LOCATION"]
        server = ServerProcess(args=["--backend", "vertex", "--self-check"], env=env)
        self.addCleanup(server.__exit__, None, None, None)
        self.assertEqual(server.proc.wait(timeout=30), 0, server.stderr)
        server.__exit__(None, None, None)
        self.assertIn("at https://aiplatform.googleapis.com ", server.stderr)

    def test_auto_picks_vertex_with_a_project_and_credentials_and_says_so(self):
        server = self.start(backend="auto")
        self.assertIn("backend auto: using vertex", server.stderr)
        self.assertEqual(structured(self.generate(server))["backend"], "vertex")

    def test_auto_prefers_gemini_with_a_key(self):
        env = {**self.env(), "GEMINI_API_KEY": "AIzaTEST-auto", "GEMINI_BASE_URL":
               self.fake.base_url}
        server = self.start(env, backend="auto")
        self.assertEqual(structured(self.generate(server))["backend"], "gemini")

    def test_self_check_token_reports_without_secrets(self):
        server = ServerProcess(args=["--backend", "vertex", "--self-check-token"],
                               env=self.env())
        self.addCleanup(server.__exit__, None, None, None)
        self.assertEqual(server.proc.wait(timeout=30), 0, server.stderr)
        server.__exit__(None, None, None)
        self.stderr_seen.append(server.stderr)
        line = next(l for l in server.stderr.splitlines() if "self-check ok" in l)
        for part in ["backend vertex", f"project {PROJECT}", "location global",
                     "credential service_account", self.sa_file, "proxy none",
                     "token request ok"]:
            self.assertIn(part, line)
        self.assertEqual(self.token_kinds(), [("jwt", True)])


if __name__ == "__main__":
    unittest.main()
