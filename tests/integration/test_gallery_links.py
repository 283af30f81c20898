"""Gallery links (README.md, "Serve a team"), with the real binary and a real authorization server
(oidc-provider, through oauth_support.py):

- under OAuth, get_image returns a gallery_url whose fragment carries a signed, expiring token;
  sent as the bearer token (as the /gallery page does), it opens that one session of that one
  person, read-only, in both eras: reads work, every other session is "not found" (the same answer
  as a name nobody used), listings hold that session alone, writes are 403 insufficient_scope,
  subscriptions to other sessions are refused, and the person's tasks are not its;
- an altered link, one made by another server (another store: another key) and an expired one
  are refused with 401 invalid_token;
- a second process on the same store opens the links the first made (the key is kept in the
  store), and so does the same server after a restart;
- without OAuth the link is the plain page address, and over stdio there is none.
"""
import base64
import concurrent.futures
import http.client
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_harness import ServerProcess  # noqa: E402
from oauth_support import OAuthProvider  # noqa: E402
from replica_support import LegacyClient, ModernClient, structured  # noqa: E402
from test_tasks import TasksClient  # noqa: E402
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support, through replica_support)

PREFIX = "imgmcp-gallery."


def error_text(response):
    result = response["result"]
    assert result.get("isError"), result
    return " ".join(block.get("text", "") for block in result["content"])


def link_token(gallery_url):
    page, _, token = gallery_url.partition("?link=")
    assert token.startswith(PREFIX), gallery_url
    return token


def status_of(client, method, params):
    """The HTTP status and JSON body of one request, whatever the status."""
    conn = client_connection(client)
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": dict(params)}
        if client._meta():
            body["params"]["_meta"] = client._meta()
        conn.request("POST", "/mcp", body=json.dumps(body).encode(),
                     headers=client._headers(method, params))
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def client_connection(client):
    return http.client.HTTPConnection(client.host, client.port, timeout=client.timeout)


class GalleryLinksUnderOAuth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.provider = OAuthProvider()
        cls.addClassCleanup(cls.provider.close)
        cls.server = HttpProcess("--oauth-issuer", cls.provider.issuer)
        cls.addClassCleanup(cls.server.close)

    def person(self, client="writer", kind="modern", server=None):
        server = server or self.server
        make = LegacyClient if kind == "legacy" else ModernClient
        return make(server.port, token=self.provider.client_credentials_token(client, server.url))

    def made(self, who, session_id, prompt):
        return structured(who.call_tool("generate_image", {"prompt": prompt,
                                                           "session_id": session_id,
                                                           "inline": "none"}))

    def test_a_link_opens_its_session_alone_and_read_only(self):
        for kind in ("legacy", "modern"):
            with self.subTest(kind):
                self.check_link(kind)

    def check_link(self, kind):
        alice, bob = self.person("writer"), self.person("writer-es256")
        fox, cat = f"fox-{kind}", f"cat-{kind}"
        self.made(alice, fox, "a red fox")
        self.made(alice, cat, "a grey cat")
        self.made(bob, fox, "a blue fox")  # bob's own fox: another chain
        got = structured(alice.call_tool("get_image", {"session_id": fox}))
        page = self.server.url[: -len("/mcp")] + "/gallery"
        self.assertTrue(got["gallery_url"].startswith(f"{page}#/sessions/{fox}?link={PREFIX}"),
                        got["gallery_url"])
        link = (LegacyClient if kind == "legacy" else ModernClient)(
            self.server.port, token=link_token(got["gallery_url"]))
        self.addCleanup(lambda: self.assertNotIn(link.token, self.server.stderr))  # never logged

        # Reads of its session: alice's fox, not bob's.
        mine = structured(link.call_tool("get_image", {"session_id": fox}))
        self.assertEqual((mine["version"], mine["prompt"]), (1, "a red fox"))
        manifest = link.call("resources/read", {"uri": f"imgmcp://sessions/{fox}"})
        self.assertIn("contents", manifest["result"], manifest)
        blob = link.call("resources/read", {"uri": f"imgmcp://sessions/{fox}/versions/1"})
        self.assertTrue(blob["result"]["contents"][0]["blob"])

        # Alice's other session is as unknown to the link as a name nobody used.
        other = error_text(link.call_tool("get_image", {"session_id": cat}))
        nobody = error_text(link.call_tool("get_image", {"session_id": f"nobody-{kind}"}))
        self.assertEqual(other.replace(cat, "X"), nobody.replace(f"nobody-{kind}", "X"))
        refused = link.call("resources/read", {"uri": f"imgmcp://sessions/{cat}"})
        self.assertIn(refused["error"]["code"], (-32002, -32602))
        listed = link.call("resources/list")["result"]["resources"]
        self.assertEqual({r["uri"].split("/")[3] for r in listed
                          if r["uri"].startswith("imgmcp://sessions/")}, {fox})

        # Read-only: a write is 403 insufficient_scope, save_to too; nothing was committed.
        for name, arguments in (("edit_image", {"prompt": "tint", "session_id": fox}),
                                ("reset_session", {"session_id": fox}),
                                ("get_image", {"session_id": fox, "save_to": "out/"})):
            status, headers, body = link.call_tool_raw(name, arguments)
            self.assertEqual(status, 403, (name, body))
            self.assertIn('error="insufficient_scope"', headers["www-authenticate"])
        self.assertEqual(structured(alice.call_tool("get_image", {"session_id": fox}))["version"],
                         1)

        if kind == "modern":  # alice's tasks are not the link's
            alice_tasks = TasksClient(self.server.port, token=alice.token)
            task_id = alice_tasks.start("generate_image", {"prompt": "a task's fox",
                                                           "session_id": f"task-{kind}",
                                                           "inline": "none"})["taskId"]
            self.assertIn("result", alice_tasks.wait_status(task_id))
            link_tasks = TasksClient(self.server.port, token=link.token)
            self.assertEqual(link_tasks.error_code("tasks/get", {"taskId": task_id}),
                             alice_tasks.error_code("tasks/get", {"taskId": "no-such-task"}))
        else:
            self.assertIn("error", link.call("resources/subscribe",
                                             {"uri": f"imgmcp://sessions/{cat}"}))
            self.assertEqual(link.call("resources/subscribe",
                                       {"uri": f"imgmcp://sessions/{fox}"})["result"], {})

    def test_many_readers_of_a_link_while_its_owner_edits(self):
        alice = self.person()
        self.made(alice, "busy", "a busy bee")
        token = link_token(structured(alice.call_tool("get_image",
                                                      {"session_id": "busy"}))["gallery_url"])

        def read(i):
            link = ModernClient(self.server.port, token=token)
            got = structured(link.call_tool("get_image", {"session_id": "busy",
                                                          "inline": "none"}))
            # One snapshot: the version read is the newest of the history read with it.
            self.assertEqual(got["version"], got["history"][-1]["version"])
            return got["version"]

        def edit(i):
            return structured(alice.call_tool("edit_image", {"prompt": f"brightness +{i + 1}%",
                                                             "session_id": "busy",
                                                             "inline": "none"}))["version"]

        with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
            edits = [pool.submit(edit, i) for i in range(6)]
            reads = [pool.submit(read, i) for i in range(24)]
            self.assertEqual(sorted(f.result() for f in edits), list(range(2, 8)))
            self.assertTrue(all(1 <= f.result() <= 7 for f in reads))

    def test_altered_and_foreign_links_are_refused(self):
        alice = self.person()
        self.made(alice, "kite", "a kite")
        token = link_token(structured(alice.call_tool("get_image",
                                                      {"session_id": "kite"}))["gallery_url"])
        altered = token[:-1] + ("0" if token[-1] != "0" else "1")
        # A link to another session cannot be made by editing the readable part either.
        body, _, mac = token[len(PREFIX):].rpartition(".")
        expiry, _, grant = body.partition(".")
        forged = json.loads(base64.b64decode(grant))
        forged["s"] = "other"
        forged = (PREFIX + expiry + "." + base64.b64encode(json.dumps(forged).encode()).decode()
                  + "." + mac)
        with HttpProcess("--oauth-issuer", self.provider.issuer) as elsewhere:
            bob_there = self.person(server=elsewhere)
            self.made(bob_there, "kite", "a kite")
            foreign = link_token(structured(bob_there.call_tool(
                "get_image", {"session_id": "kite"}))["gallery_url"])
        for bad in (altered, forged, foreign):
            status, headers, body = status_of(ModernClient(self.server.port, token=bad),
                                              "resources/list", {})
            self.assertEqual(status, 401, body)
            self.assertIn('error="invalid_token"', headers["www-authenticate"])

    def test_a_link_expires(self):
        # Five seconds: a link read at once is still valid even under ThreadSanitizer (with one
        # second, a slow first read came after the expiry).
        with HttpProcess("--oauth-issuer", self.provider.issuer,
                         "--gallery-link-ttl", "5") as server:
            alice = self.person(server=server)
            self.made(alice, "moth", "a moth")
            token = link_token(structured(alice.call_tool(
                "get_image", {"session_id": "moth"}))["gallery_url"])
            # The token names its expiry (unix seconds); it is refused once that second is past.
            expiry = int(token[len(PREFIX):].split(".")[0])
            link = ModernClient(server.port, token=token)
            read_at = time.time()
            status = status_of(link, "resources/list", {})[0]
            self.assertLess(read_at, expiry, "the first read came after the link's expiry")
            self.assertEqual(status, 200)
            time.sleep(max(0.0, expiry + 1.05 - time.time()))  # the clock, not a guess
            status, headers, body = status_of(link, "resources/list", {})
            self.assertEqual(status, 401, body)
            self.assertIn("expired", headers["www-authenticate"])

    def test_the_store_keeps_the_key_for_every_process_and_restart(self):
        with HttpProcess("--oauth-issuer", self.provider.issuer) as first:
            alice = self.person(server=first)
            self.made(alice, "owl", "an owl")
            token = link_token(structured(alice.call_tool(
                "get_image", {"session_id": "owl"}))["gallery_url"])
            with HttpProcess("--oauth-issuer", self.provider.issuer,
                             data_dir=first.data_dir) as second:
                got = structured(ModernClient(second.port, token=token).call_tool(
                    "get_image", {"session_id": "owl"}))
                self.assertEqual(got["prompt"], "an owl")
            data_dir = first.data_dir
            first.stop()
            with HttpProcess("--oauth-issuer", self.provider.issuer,
                             data_dir=data_dir) as again:
                got = structured(ModernClient(again.port, token=token).call_tool(
                    "get_image", {"session_id": "owl"}))
                self.assertEqual(got["version"], 1)


class GalleryLinksWithoutOAuth(unittest.TestCase):
    def test_over_http_the_plain_page_and_over_stdio_none(self):
        with HttpProcess() as server:
            client = ModernClient(server.port)
            client.call_tool("generate_image", {"prompt": "a bee", "session_id": "bee",
                                                "inline": "none"})
            got = structured(client.call_tool("get_image", {"session_id": "bee"}))
            self.assertEqual(got["gallery_url"],
                             server.url[: -len("/mcp")] + "/gallery#/sessions/bee")
        with ServerProcess() as stdio:
            stdio.initialize()
            stdio.call_tool("generate_image", {"prompt": "a bee", "session_id": "bee"})
            got = stdio.call_tool("get_image", {"session_id": "bee"})["result"]
            self.assertNotIn("gallery_url", got["structuredContent"])


if __name__ == "__main__":
    unittest.main()
