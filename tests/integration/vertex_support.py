"""Vertex AI against the Gemini fake: a service account made for the test (an RSA key pair from
the openssl command line, its public half given to the fake's token endpoint), credential files
of every kind, and VertexMixin, which runs a FakeGeminiTestCase's tests on `--backend vertex`
instead of `--backend gemini` (tests/fake_gemini serves the Vertex paths and checks the bearer
tokens it issued)."""
import json
import os
import secrets
import shutil
import subprocess
import tempfile

PROJECT = "imgmcp-test-project"
CLIENT_EMAIL = "imgmcp-test@imgmcp-test-project.iam.gserviceaccount.com"
CLIENT_ID = "imgmcp-test-client.apps.googleusercontent.com"
# Recognisable secrets, searched for verbatim in everything imgmcp writes.
CLIENT_SECRET = "GOCSPX-imgmcp-" + secrets.token_hex(10)
REFRESH_TOKEN = "1//imgmcp-refresh-" + secrets.token_hex(12)
EXPRESS_KEY = "AQ.imgmcp-express-" + secrets.token_hex(12)


class ServiceAccount:
    """A fresh RSA key pair and credential files in a temp dir (removed by close())."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="imgmcp-vertex-")
        self.private_pem_path = os.path.join(self.dir, "key.pem")
        self.public_pem_path = os.path.join(self.dir, "pub.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                        "rsa_keygen_bits:2048", "-out", self.private_pem_path],
                       check=True, capture_output=True, timeout=60)
        subprocess.run(["openssl", "pkey", "-in", self.private_pem_path, "-pubout", "-out",
                        self.public_pem_path], check=True, capture_output=True, timeout=60)
        with open(self.private_pem_path) as f:
            self.private_pem = f.read()
        # The base64 body of the key: what a leak would show.
        self.key_material = [line for line in self.private_pem.splitlines()
                             if line and not line.startswith("-----")]

    def write(self, name, content):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def service_account_file(self, token_uri, name="sa.json", **override):
        data = {"type": "service_account", "project_id": PROJECT,
                "private_key_id": "0123abcd", "private_key": self.private_pem,
                "client_email": CLIENT_EMAIL, "client_id": "1234567890",
                "token_uri": token_uri}
        data.update(override)
        return self.write(name, data)

    def authorized_user_file(self, token_uri, name="user.json", **override):
        data = {"type": "authorized_user", "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET, "refresh_token": REFRESH_TOKEN,
                "token_uri": token_uri}
        data.update(override)
        return self.write(name, data)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def configure_fake(fake, account):
    fake.configure_oauth(public_key_file=account.public_pem_path, client_email=CLIENT_EMAIL,
                         client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                         refresh_token=REFRESH_TOKEN)


def vertex_env(fake, credentials_file, **extra):
    env = {"GOOGLE_CLOUD_PROJECT": PROJECT, "IMGMCP_VERTEX_BASE_URL": fake.base_url,
           "GOOGLE_APPLICATION_CREDENTIALS": credentials_file, "HOME": "/nonexistent"}
    env.update(extra)
    return env


class VertexMixin:
    """Put before a FakeGeminiTestCase subclass: its tests run on --backend vertex with a
    service account whose JWTs the fake verifies. Every request must have reached the Vertex
    path with a valid bearer token."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.account = ServiceAccount()
        cls.addClassCleanup(cls.account.close)
        cls.credentials = cls.account.service_account_file(cls.fake.base_url + "/token")

    def setUp(self):
        super().setUp()
        configure_fake(self.fake, self.account)
        self.addCleanup(self._check_requests_were_vertex)

    def _check_requests_were_vertex(self):
        for entry in self.fake.requests():
            self.assertEqual(entry["api"], "vertex", entry["path"])
            self.assertEqual(entry["project"], PROJECT)
            self.assertTrue(entry["bearer_valid"], entry["path"])

    backend = "vertex"

    def gemini_env(self, key=None, base_url=None):
        return vertex_env(self.fake, self.credentials)

    def generate_path(self, model):
        return (f"/v1/projects/{PROJECT}/locations/global/publishers/google/models/"
                f"{model}:generateContent")
