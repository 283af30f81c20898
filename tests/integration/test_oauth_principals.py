"""Sessions per person under OAuth, against a real authorization server (oidc-provider, through
oauth_support.py) and the real binary over HTTP, in both MCP eras.

Two principals (the provider's "writer" and "writer-es256" clients: two subjects) use the same
session names: each has a chain of their own; neither can read, list, edit, subscribe to or even
learn of the other's sessions; idempotency keys are per person too. Without OAuth nothing of this
applies (every other integration test runs without it, unchanged).
"""
import concurrent.futures
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oauth_support import OAuthProvider  # noqa: E402
from replica_support import LegacyClient, ModernClient  # noqa: E402
from test_tasks import TasksClient  # noqa: E402
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support, on the path through replica_support)


def structured(response):
    result = response["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def error_text(response):
    result = response["result"]
    assert result.get("isError"), result
    return " ".join(block.get("text", "") for block in result["content"])


class SessionsPerPersonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.provider = OAuthProvider()
        try:
            cls.server = HttpProcess("--oauth-issuer", cls.provider.issuer)
        except BaseException:
            cls.provider.close()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.server.close()
        finally:
            cls.provider.close()

    def clients(self, kind):
        """(alice, bob): clients of two principals, of the era `kind` names."""
        make = LegacyClient if kind == "legacy" else ModernClient
        tokens = [self.provider.client_credentials_token(client, self.server.url)
                  for client in ("writer", "writer-es256")]
        return [make(self.server.port, token=token) for token in tokens]

    def check_two_people(self, kind):
        alice, bob = self.clients(kind)
        fox, only = f"fox-{kind}", f"bobs-own-{kind}"
        a1 = structured(alice.call_tool("generate_image", {"prompt": "a red fox",
                                                           "session_id": fox}))
        b1 = structured(bob.call_tool("generate_image", {"prompt": "a blue fox",
                                                         "session_id": fox}))
        self.assertEqual((a1["session_id"], a1["version"]), (fox, 1))
        self.assertEqual((b1["session_id"], b1["version"]), (fox, 1))  # a chain of bob's own
        b2 = structured(bob.call_tool("edit_image", {"prompt": "tint green",
                                                     "session_id": fox}))
        self.assertEqual(b2["version"], 2)
        mine = structured(alice.call_tool("get_image", {"session_id": fox}))
        self.assertEqual((mine["version"], mine["prompt"]), (1, "a red fox"))
        self.assertEqual(structured(bob.call_tool("get_image", {"session_id": fox}))["version"], 2)

        # Bob's other session does not exist for alice: the same answer as a name nobody used.
        structured(bob.call_tool("generate_image", {"prompt": "a cat", "session_id": only}))
        theirs = error_text(alice.call_tool("get_image", {"session_id": only}))
        nobodys = error_text(alice.call_tool("get_image", {"session_id": f"nobody-{kind}"}))
        self.assertEqual(theirs.replace(only, "X"), nobodys.replace(f"nobody-{kind}", "X"))
        refused = alice.call("resources/read", {"uri": f"imgmcp://sessions/{only}"})["error"]
        unknown = alice.call("resources/read", {"uri": f"imgmcp://sessions/nobody-{kind}"})
        self.assertIn(refused["code"], (-32002, -32602))  # the era's "resource not found"
        self.assertEqual((refused["code"], refused["message"]),
                         (unknown["error"]["code"], unknown["error"]["message"]))
        edit = alice.call_tool("edit_image", {"prompt": "invert", "session_id": only})
        self.assertIn("no image yet", error_text(edit))
        self.assertEqual(structured(bob.call_tool("get_image", {"session_id": only}))["version"], 1)

        # Listings hold one's own sessions only.
        uris = {r["uri"] for r in alice.call("resources/list")["result"]["resources"]}
        self.assertIn(f"imgmcp://sessions/{fox}", uris)
        self.assertNotIn(f"imgmcp://sessions/{only}", uris)
        uris = {r["uri"] for r in bob.call("resources/list")["result"]["resources"]}
        self.assertIn(f"imgmcp://sessions/{only}", uris)
        manifest = alice.call("resources/read", {"uri": f"imgmcp://sessions/{fox}"})
        self.assertIn('"current_version":1', manifest["result"]["contents"][0]["text"])

        # The same idempotency key in both people's sessions: two different calls, both made.
        key = f"key-{kind}"
        a = structured(alice.call_tool("reset_session", {"session_id": fox, "to_version": 1,
                                                         "idempotency_key": key}))
        b = structured(bob.call_tool("reset_session", {"session_id": fox, "to_version": 2,
                                                       "idempotency_key": key}))
        self.assertEqual((a["version"], b["version"]), (2, 3))

    def test_two_people_with_the_same_session_names_legacy(self):
        self.check_two_people("legacy")

    def test_two_people_with_the_same_session_names_modern(self):
        self.check_two_people("modern")

    def test_many_edits_at_once_of_two_peoples_same_session(self):
        # 2 people x 12 edits of "busy" in flight at once (also under ThreadSanitizer): each
        # person's chain gets exactly their own 12, numbered 2..13, whatever the other does.
        people = self.clients("legacy")
        prompts = {0: "invert", 1: "grayscale"}
        for who, client in enumerate(people):
            structured(client.call_tool("generate_image", {"prompt": f"p{who}",
                                                           "session_id": "busy"}))

        def edit(job):
            who, _ = job
            return structured(people[who].call_tool("edit_image", {
                "prompt": prompts[who], "session_id": "busy", "inline": "none"}))["version"]

        jobs = [(who, i) for i in range(12) for who in (0, 1)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            versions = list(pool.map(edit, jobs))
        for who, client in enumerate(people):
            mine = sorted(v for (w, _), v in zip(jobs, versions) if w == who)
            self.assertEqual(mine, list(range(2, 14)))
            history = structured(client.call_tool("get_image", {"session_id": "busy",
                                                                "inline": "none"}))["history"]
            self.assertEqual([h["prompt"] for h in history],
                             [f"p{who}"] + [prompts[who]] * 12)

    def test_a_persons_task_works_on_their_own_session(self):
        alice, bob = [TasksClient(self.server.port, token=self.provider.client_credentials_token(
            client, self.server.url)) for client in ("writer", "writer-es256")]
        results = []
        for client, prompt in ((alice, "a"), (bob, "b"), (alice, "c")):
            created = client.start("generate_image", {"prompt": prompt, "session_id": "tfox",
                                                      "inline": "preview"})
            results.append(client.wait_status(created["taskId"])["result"])
        self.assertEqual([r["structuredContent"]["version"] for r in results], [1, 1, 2])
        self.assertEqual({r["structuredContent"]["session_id"] for r in results}, {"tfox"})
        for result in results:  # each image read back from its owner's session, not another's
            self.assertIn("image", [block["type"] for block in result["content"]], result)
        history = structured(bob.call_tool("get_image", {"session_id": "tfox",
                                                         "inline": "none"}))["history"]
        self.assertEqual([h["prompt"] for h in history], ["b"])

    def test_a_subscriber_hears_of_their_own_session_only(self):
        alice, bob = self.clients("legacy")
        name = "watched"
        structured(alice.call_tool("generate_image", {"prompt": "a", "session_id": name}))
        structured(bob.call_tool("generate_image", {"prompt": "b", "session_id": name}))
        uri = f"imgmcp://sessions/{name}"
        self.assertIn("result", alice.call("resources/subscribe", {"uri": uri}))
        listener = alice.listen()
        try:
            # Bob's edit is answered (and announced) before alice's edit starts: had it reached
            # alice, it would be on her stream before her own.
            structured(bob.call_tool("edit_image", {"prompt": "invert", "session_id": name}))
            structured(alice.call_tool("edit_image", {"prompt": "grayscale", "session_id": name}))
            updated = "notifications/resources/updated"
            listener.wait_for(lambda m: m.get("method") == updated)
            seen = [m for m in listener.messages if m.get("method") == updated]
            self.assertEqual([m["params"]["uri"] for m in seen], [uri])
        finally:
            listener.close()


if __name__ == "__main__":
    unittest.main()
