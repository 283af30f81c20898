"""The image tools over Streamable HTTP: rapid overlapping edits of one image session from
several MCP sessions at once, and resource-update notifications on the GET stream."""
import base64
import concurrent.futures
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "demo"))
import pngio  # noqa: E402  (demo/pngio.py)

from test_http import HttpServer, SseReader  # noqa: E402


def structured(messages):
    result = messages[-1]["result"]
    if result.get("isError"):
        raise AssertionError(result["content"][0]["text"])
    return result["structuredContent"]


class HttpImageToolsTest(unittest.TestCase):
    def setUp(self):
        self.server = HttpServer("--backend", "local")
        self.addCleanup(self.server.stop)
        self.session = self.server.initialize()
        tools = self.server.call(self.session, 1, "tools/list")[-1]["result"]["tools"]
        self.assertIn("edit_image", {t["name"] for t in tools})

    def edit(self, session, id_, image_session, prompt, **extra):
        args = {"session_id": image_session, "prompt": prompt, "inline": "none", **extra}
        return structured(self.server.call(session, id_, "tools/call",
                                           {"name": "edit_image", "arguments": args}))

    def test_rapid_edits_from_several_http_sessions_lose_nothing(self):
        png = base64.b64encode(pngio.solid_png(16, 16, (0, 0, 0))).decode()
        first = self.edit(self.session, 2, "hr", "invert",
                          image={"data": png, "mime_type": "image/png"})
        self.assertEqual(first["version"], 2)  # v1 import, v2 invert (white)
        sessions = [self.server.initialize() for _ in range(6)]
        jobs = [(n, k, "draw square #ff0000 at %d,%d size 1" % (n, k))
                for n in range(len(sessions)) for k in range(4)]

        def run(job):
            n, k, prompt = job
            return prompt, self.edit(sessions[n], 100 + k, "hr", prompt)["version"]

        with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
            results = list(pool.map(run, jobs))
        self.assertEqual(sorted(v for _, v in results), list(range(3, 3 + len(jobs))))
        final = structured(self.server.call(self.session, 3, "tools/call", {
            "name": "get_image", "arguments": {"session_id": "hr", "inline": "none",
                                            "history_limit": 100}}))
        self.assertEqual(final["version"], 2 + len(jobs))
        by_version = {h["version"]: h["prompt"] for h in final["history"]}
        for prompt, version in results:
            self.assertEqual(by_version[version], prompt)
        # Every edit read the then-current image: all the dots are there.
        with open(final["path"], "rb") as f:
            image = pngio.decode_png(f.read())
        for n, k, _ in jobs:
            self.assertEqual(pngio.pixel(image, n, k)[:3], (255, 0, 0), (n, k))
        self.assertEqual(pngio.pixel(image, 15, 15)[:3], (255, 255, 255))

    def test_get_stream_receives_resource_updates(self):
        png = base64.b64encode(pngio.solid_png(8, 8, (10, 20, 30))).decode()
        self.edit(self.session, 2, "watched", "invert", image={"data": png,
                                                               "mime_type": "image/png"})
        uri = "imgmcp://sessions/watched"
        self.assertEqual(self.server.call(self.session, 3, "resources/subscribe",
                                          {"uri": uri})[-1]["result"], {})
        resp, conn = self.server.open("GET", session=self.session)
        self.addCleanup(conn.close)
        self.assertEqual(resp.status, 200)
        reader = SseReader(resp)
        self.assertIn("retry", reader.next_event())
        other = self.server.initialize()
        self.edit(other, 2, "watched", "invert")
        while True:
            event = reader.next_event()
            self.assertIsNotNone(event, "GET stream ended without the update")
            if not event.get("data"):
                continue
            message = json.loads(event["data"])
            if message.get("method") == "notifications/resources/updated":
                self.assertEqual(message["params"]["uri"], uri)
                break


if __name__ == "__main__":
    unittest.main()
