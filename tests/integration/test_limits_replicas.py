"""Per-person limits and sessions across two real imgmcp replicas on one real PostgreSQL, with
OAuth against a real authorization server (oidc-provider): both replicas serve one resource
(--oauth-resource), so one token is good on either.

- a gallery link made by one replica opens on the other (the key is in the store);
- --rate-limit-per-user 4/min is counted by both replicas together: a person's calls, sent to
  the two replicas in turn, are answered four times and then refused (429, Retry-After) on
  whichever replica the fifth reaches; another person still has their own minute.
- Sessions are per person on the shared store too: one person's "fox", made through one
  replica, is theirs through the other; the other person's "fox" is another chain.
"""
import itertools
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oauth_support import OAuthProvider  # noqa: E402
from replica_support import ModernClient, Replica, pg_cluster, structured  # noqa: E402
from wall_minute import with_room_in_this_minute  # noqa: E402  (tests/support)

RESOURCE = "http://localhost/mcp"
CLUSTER = pg_cluster.SharedCluster()
setUpModule, tearDownModule = CLUSTER.start, CLUSTER.close
_db_names = itertools.count(1)


class LimitsAcrossReplicas(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.provider = OAuthProvider()
        cls.addClassCleanup(cls.provider.close)

    def setUp(self):
        url = CLUSTER.create_database(f"limits{next(_db_names)}")
        args = ("--oauth-issuer", self.provider.issuer, "--oauth-resource", RESOURCE,
                "--rate-limit-per-user", "4/min")
        self.replicas = []
        for name in ("a", "b"):
            replica = Replica(url, *args, name=name)
            self.addCleanup(replica.close)
            self.replicas.append(replica)
        self.tokens = [self.provider.client_credentials_token(c, RESOURCE)
                       for c in ("writer", "writer-es256")]

    def client(self, person, replica):
        return ModernClient(self.replicas[replica].port, token=self.tokens[person])

    def test_a_persons_rate_is_counted_by_both_replicas(self):
        with_room_in_this_minute()
        for i in range(4):
            status, _, body = self.client(0, i % 2).call_tool_raw("get_image",
                                                                  {"session_id": "x"})
            self.assertEqual(status, 200, body)
        for replica in (0, 1):  # the fifth and sixth: refused wherever they arrive
            status, headers, body = self.client(0, replica).call_tool_raw(
                "get_image", {"session_id": "x"})
            self.assertEqual(status, 429, body)
            self.assertTrue(1 <= int(headers["retry-after"]) <= 60)
            self.assertEqual(body["error"]["data"]["limit"], "--rate-limit-per-user")
        status, _, body = self.client(1, 1).call_tool_raw("get_image", {"session_id": "x"})
        self.assertEqual(status, 200, body)  # the other person's own minute

    def test_a_persons_session_is_theirs_on_either_replica(self):
        made = structured(self.client(0, 0).call_tool(
            "generate_image", {"prompt": "a red fox", "session_id": "fox", "inline": "none"}))
        self.assertEqual(made["version"], 1)
        theirs = structured(self.client(1, 1).call_tool(
            "generate_image", {"prompt": "a blue fox", "session_id": "fox", "inline": "none"}))
        self.assertEqual(theirs["version"], 1)  # another person's chain
        mine = structured(self.client(0, 1).call_tool(
            "get_image", {"session_id": "fox", "inline": "none"}))
        self.assertEqual((mine["version"], mine["prompt"]), (1, "a red fox"))

    def test_a_gallery_link_from_one_replica_opens_on_the_other(self):
        self.client(0, 0).call_tool("generate_image", {"prompt": "an owl", "session_id": "owl",
                                                       "inline": "none"})
        link = structured(self.client(0, 0).call_tool(
            "get_image", {"session_id": "owl", "inline": "none"}))["gallery_url"]
        self.assertTrue(link.startswith(RESOURCE[: -len("/mcp")] + "/gallery#/sessions/owl?link="))
        token = link.partition("?link=")[2]
        got = structured(ModernClient(self.replicas[1].port, token=token).call_tool(
            "get_image", {"session_id": "owl", "inline": "none"}))
        self.assertEqual(got["prompt"], "an owl")


if __name__ == "__main__":
    unittest.main()
