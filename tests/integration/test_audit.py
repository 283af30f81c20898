"""The audit trail (docs/security.md, "Audit trail") with the real binary over HTTP and OAuth
against a real authorization server (oidc-provider), read back with the real `imgmcp audit`:

- every write is recorded — generate, edit (failed ones too), reset, get_image with save_to —
  with the person (subject, client), the session, version, idempotency key, cost, trace id and
  outcome; a get_image without save_to is not a write and is not recorded;
- a refused token is recorded, without the token;
- `--principal` picks one person's events, `--since` later ones, `--format json|text`;
- nothing in the data dir holds a token.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oauth_support import OAuthProvider, decode_jwt_unverified  # noqa: E402
from replica_support import CallFailed, LegacyClient  # noqa: E402
from imgmcp_process import HttpProcess, binary_path, clean_env  # noqa: E402

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def structured(response):
    result = response["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


class AuditTrailTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.provider = OAuthProvider()
        cls.addClassCleanup(cls.provider.close)
        cls.saves = tempfile.mkdtemp(prefix="imgmcp-audit-saves-")
        cls.addClassCleanup(shutil.rmtree, cls.saves, True)
        cls.server = HttpProcess("--oauth-issuer", cls.provider.issuer,
                                 "--allow-write", cls.saves)
        cls.addClassCleanup(cls.server.close)
        cls.tokens = [cls.provider.client_credentials_token(c, cls.server.url)
                      for c in ("writer", "writer-es256")]
        alice, bob = [LegacyClient(cls.server.port, token=t) for t in cls.tokens]
        meta = {"traceparent": f"00-{TRACE}-00f067aa0ba902b7-01"}
        structured(alice.call("tools/call", {
            "name": "generate_image", "_meta": meta,
            "arguments": {"prompt": "a kite", "session_id": "kite",
                          "idempotency_key": "first-kite-0001"}}))
        structured(alice.call_tool("get_image", {"session_id": "kite"}))  # a read: not recorded
        structured(alice.call_tool("get_image", {"session_id": "kite",
                                                   "save_to": os.path.join(cls.saves, "k.png")}))
        bob.call_tool("edit_image", {"prompt": "no such edit", "session_id": "kite"})
        structured(alice.call_tool("reset_session", {"session_id": "kite"}))
        cls.tampered = cls.tokens[0][:-2] + ("AA" if not cls.tokens[0].endswith("AA") else "BB")
        with cls.assertRaises(cls, CallFailed):  # refused: 401
            LegacyClient(cls.server.port, token=cls.tampered)
        cls.subjects = {}
        for token, who in zip(cls.tokens, ("alice", "bob")):
            cls.subjects[who] = decode_jwt_unverified(token)[1]["sub"]

    def audit(self, *args):
        done = subprocess.run([binary_path(), "audit", "--data-dir", self.server.data_dir, *args],
                              capture_output=True, text=True, timeout=30, env=clean_env())
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def events(self, *args):
        return json.loads(self.audit("--format", "json", *args))

    def test_every_write_and_refused_token_is_recorded(self):
        events = self.events()
        actions = [(e["action"], e["session_id"]) for e in events]
        self.assertEqual(actions, [("generate_image", "kite"), ("get_image", "kite"),
                                   ("edit_image", "kite"), ("reset_session", "kite"),
                                   ("token", "")])
        generate, save, edit, reset, token = events
        self.assertEqual(generate["subject"], self.subjects["alice"])
        self.assertEqual(generate["client_id"], "writer")
        self.assertEqual(generate["issuer"], self.provider.issuer)
        self.assertEqual((generate["version"], generate["idempotency_key"]),
                         (1, "first-kite-0001"))
        self.assertEqual(generate["trace_id"], TRACE)
        self.assertEqual(generate["outcome"], "ok")
        self.assertEqual(save["outcome"], "ok")  # get_image with save_to: a write
        self.assertEqual(edit["subject"], self.subjects["bob"])
        self.assertTrue(edit["outcome"].startswith("error: "), edit)
        self.assertIsNone(edit["version"])
        self.assertEqual(reset["outcome"], "ok")
        self.assertTrue(token["outcome"].startswith("refused: "), token)
        self.assertEqual(token["principal"], "")
        text = json.dumps(events)
        for secret in (*self.tokens, self.tampered):
            self.assertNotIn(secret.split(".")[-1][:20], text)

    def test_one_persons_events_and_later_ones(self):
        bobs = self.events("--principal", self.subjects["bob"])
        self.assertEqual([e["action"] for e in bobs], ["edit_image"])
        self.assertEqual(self.events("--since", "2999-01-01"), [])
        lines = self.audit("--principal", self.subjects["alice"]).splitlines()
        self.assertEqual(len(lines), 3, lines)
        self.assertIn("generate_image kite v1 key first-kite-0001", lines[0])
        self.assertIn(f"trace {TRACE}", lines[0])
        self.assertIn("via writer", lines[0])

    def test_a_malformed_flag_is_refused(self):
        done = subprocess.run([binary_path(), "audit", "--data-dir", self.server.data_dir,
                               "--format", "xml"], capture_output=True, text=True, timeout=30,
                              env=clean_env())
        self.assertEqual(done.returncode, 2)
        self.assertIn("--format", done.stderr)

    def test_no_token_is_stored(self):
        for root, _, files in os.walk(self.server.data_dir):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    data = f.read()
                for token in (*self.tokens, self.tampered):
                    self.assertNotIn(token.split(".")[-1].encode(), data, name)


if __name__ == "__main__":
    unittest.main()
