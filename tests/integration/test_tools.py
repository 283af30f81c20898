"""The four tools end to end over stdio against the real binary (offline local backend)."""
import base64
import hashlib
import json
import os
import tempfile
import time
import unittest

from tools_support import (blocks, error_text, new_session_with_image, ok_result, pngio,
                           sha256_file, small_png_b64, start_server, structured, tool_result)


class ToolListing(unittest.TestCase):
    def test_four_tools_with_titles_schemas_and_annotations(self):
        server = start_server(self)
        tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
        for name in ("generate_image", "edit_image", "get_image", "reset_session"):
            self.assertIn(name, tools)
            tool = tools[name]
            self.assertTrue(tool["title"])
            self.assertGreater(len(tool["description"]), 40)
            self.assertEqual(tool["inputSchema"]["type"], "object")
            self.assertEqual(tool["outputSchema"]["type"], "object")
            schema_text = str(tool["inputSchema"])
            for banned in ("oneOf", "anyOf", "$ref"):
                self.assertNotIn(banned, schema_text)
        self.assertTrue(tools["get_image"]["annotations"]["readOnlyHint"])
        self.assertTrue(tools["reset_session"]["annotations"]["destructiveHint"])
        # Each revert saves another version; a clear deletes what came since: not idempotent.
        self.assertFalse(tools["reset_session"]["annotations"]["idempotentHint"])
        # With the default retention (100 versions), a new version can delete the oldest one.
        self.assertTrue(tools["generate_image"]["annotations"]["destructiveHint"])
        self.assertEqual(tools["edit_image"]["inputSchema"]["required"], ["session_id", "prompt"])


class HappyPaths(unittest.TestCase):
    def setUp(self):
        self.server = start_server(self)

    def test_generate_returns_version_file_preview_and_link(self):
        resp = self.server.call_tool("generate_image", {"prompt": "solid red", "session_id": "s1"})
        sc = structured(resp)
        self.assertEqual((sc["session_id"], sc["version"]), ("s1", 1))
        self.assertEqual((sc["width"], sc["height"], sc["mime_type"]), (1024, 1024, "image/png"))
        self.assertEqual(sc["backend"], "local")
        self.assertTrue(os.path.isabs(sc["path"]))
        self.assertEqual(sha256_file(sc["path"]), sc["sha256"])
        self.assertEqual(os.path.getsize(sc["path"]), sc["bytes"])
        self.assertEqual(sc["uri"], "imgmcp://sessions/s1/versions/1")
        decoded = pngio.decode_png(open(sc["path"], "rb").read())
        self.assertEqual(pngio.pixel(decoded, 500, 500), (255, 0, 0))
        text = blocks(resp, "text")[0]["text"]
        self.assertIn("version 1", text)
        self.assertNotIn("base64", str(sc))
        image = blocks(resp, "image")[0]
        preview = base64.b64decode(image["data"])
        self.assertLessEqual(len(preview), 600 * 1024)
        if image["mimeType"] == "image/png":
            w, h, _, _ = pngio.decode_png(preview)
            self.assertEqual(max(w, h), 768)
        link = blocks(resp, "resource_link")[0]
        self.assertEqual(link["uri"], "imgmcp://sessions/s1/versions/1")
        self.assertEqual(link["name"], "s1 v1")

    def test_generate_mints_a_session_id_and_honours_aspect_ratio(self):
        sc = structured(self.server.call_tool(
            "generate_image", {"prompt": "a teal sky over orange hills", "aspect_ratio": "16:9",
                               "inline": "none"}))
        self.assertRegex(sc["session_id"], r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
        self.assertEqual((sc["width"], sc["height"]), (1344, 768))

    def test_edit_applies_to_current_image_and_records_parent(self):
        structured(self.server.call_tool("generate_image", {"prompt": "solid red",
                                                            "session_id": "e1", "inline": "none"}))
        sc = structured(self.server.call_tool("edit_image", {"session_id": "e1",
                                                             "prompt": "invert", "inline": "none"}))
        self.assertEqual((sc["version"], sc["parent_version"], sc["operation"]), (2, 1, "edit"))
        decoded = pngio.decode_png(open(sc["path"], "rb").read())
        self.assertEqual(pngio.pixel(decoded, 10, 10), (0, 255, 255))

    def test_inline_full_is_the_stored_bytes_and_none_has_no_image(self):
        new_session_with_image(self.server, "f1")
        full = self.server.call_tool("get_image", {"session_id": "f1", "inline": "full"})
        data = base64.b64decode(blocks(full, "image")[0]["data"])
        self.assertEqual(hashlib.sha256(data).hexdigest(), structured(full)["sha256"])
        none = self.server.call_tool("get_image", {"session_id": "f1", "inline": "none"})
        self.assertEqual(blocks(none, "image"), [])
        self.assertEqual(len(blocks(none, "resource_link")), 1)

    def test_expected_version_conflict_changes_nothing(self):
        new_session_with_image(self.server, "c1")
        text = error_text(self.server.call_tool(
            "edit_image", {"session_id": "c1", "prompt": "invert", "expected_version": 1}))
        self.assertIn("version conflict", text)
        self.assertIn("version 2", text)
        self.assertEqual(structured(self.server.call_tool("get_image", {"session_id": "c1"}))["version"], 2)
        sc = structured(self.server.call_tool(
            "edit_image", {"session_id": "c1", "prompt": "invert", "expected_version": 2,
                           "inline": "none"}))
        self.assertEqual(sc["version"], 3)

    def test_from_version_edits_an_older_version(self):
        new_session_with_image(self.server, "fv", rgb=(200, 40, 40))  # v1 red-ish, v2 inverted
        sc = structured(self.server.call_tool(
            "edit_image", {"session_id": "fv", "prompt": "grayscale", "from_version": 1,
                           "inline": "none"}))
        self.assertEqual((sc["version"], sc["parent_version"]), (3, 1))

    def test_edit_with_outside_image_imports_it_first(self):
        sc = new_session_with_image(self.server, "imp", rgb=(10, 20, 30))
        self.assertEqual(sc["version"], 2)
        hist = structured(self.server.call_tool("get_image", {"session_id": "imp"}))["history"]
        self.assertEqual([h["operation"] for h in hist], ["import", "edit"])
        decoded = pngio.decode_png(open(sc["path"], "rb").read())
        self.assertEqual(pngio.pixel(decoded, 3, 3), (245, 235, 225))

    def test_a_webp_image_is_imported_and_edited_by_the_local_backend(self):
        # 64x32 lossless WebP (libwebp): red rises left to right, green top to bottom, blue 90.
        webp = ("UklGRlYAAABXRUJQVlA4TEoAAAAvP8AHAAmAIAb8PzuI6H/qBUAQ/s8dRPQ/NdQ2kuJsCP037eFNYiBt"
                "21C2/aMVSts2YFpWNK9Ajom8SDMCZHN+KMcnf6Dfvh4ZAA==")
        sc = structured(self.server.call_tool("edit_image", {
            "session_id": "webp", "prompt": "invert", "inline": "none",
            "image": {"data": webp, "mime_type": "image/webp"}}))
        self.assertEqual((sc["version"], sc["mime_type"], sc["width"], sc["height"]),
                         (2, "image/png", 64, 32))
        imported = structured(self.server.call_tool("get_image", {
            "session_id": "webp", "version": 1, "inline": "none"}))
        self.assertEqual(imported["mime_type"], "image/webp")
        decoded = pngio.decode_png(open(sc["path"], "rb").read())
        self.assertEqual(pngio.pixel(decoded, 0, 0)[:3], (255, 255, 165))  # inverted (0, 0, 90)
        self.assertEqual(pngio.pixel(decoded, 63, 31)[:3], (0, 0, 165))

    def test_edit_with_path_inside_allowed_root(self):
        path = os.path.join(self.server.data_dir, "input.png")
        with open(path, "wb") as f:
            f.write(pngio.solid_png(8, 8, (0, 0, 255)))
        sc = structured(self.server.call_tool(
            "edit_image", {"session_id": "p1", "prompt": "invert", "image": {"path": path},
                           "inline": "none"}))
        self.assertEqual(pngio.pixel(pngio.decode_png(open(sc["path"], "rb").read()), 0, 0),
                         (255, 255, 0))

    def test_history_versions_and_reads(self):
        new_session_with_image(self.server, "h1")
        for _ in range(3):
            structured(self.server.call_tool("edit_image", {"session_id": "h1", "prompt": "flip horizontal",
                                                            "inline": "none"}))
        sc = structured(self.server.call_tool("get_image", {"session_id": "h1", "version": 2,
                                                            "inline": "none"}))
        self.assertEqual(sc["version"], 2)
        self.assertEqual([h["version"] for h in sc["history"]], [1, 2, 3, 4, 5])
        no_hist = structured(self.server.call_tool("get_image", {"session_id": "h1",
                                                                 "include_history": False}))
        self.assertNotIn("history", no_hist)
        self.assertIn("no version 9", error_text(self.server.call_tool(
            "get_image", {"session_id": "h1", "version": 9})))
        self.assertIn("unknown session", error_text(self.server.call_tool(
            "get_image", {"session_id": "nope"})))

    def test_reset_clears_and_never_reuses_numbers_and_revert_copies(self):
        new_session_with_image(self.server, "r1")  # v1, v2
        v1 = structured(self.server.call_tool("get_image", {"session_id": "r1", "version": 1}))
        rev = structured(self.server.call_tool("reset_session", {"session_id": "r1", "to_version": 1}))
        self.assertEqual((rev["version"], rev["operation"]), (3, "revert"))
        self.assertEqual(rev["sha256"], v1["sha256"])
        cleared = structured(self.server.call_tool("reset_session", {"session_id": "r1"}))
        self.assertEqual((cleared["version"], cleared["next_version"]), (0, 4))
        empty = structured(self.server.call_tool("get_image", {"session_id": "r1"}))
        self.assertEqual(empty["version"], 0)
        self.assertIn("no image yet", error_text(self.server.call_tool(
            "edit_image", {"session_id": "r1", "prompt": "invert"})))
        sc = structured(self.server.call_tool("generate_image", {"session_id": "r1",
                                                                 "prompt": "solid blue", "inline": "none"}))
        self.assertEqual(sc["version"], 4)

    def test_a_reset_sent_right_after_the_first_generate_applies_after_it(self):
        # Sent back to back without waiting: the reset takes its turn after the generate, so it
        # finds the session the generate created, in arrival order.
        for attempt in range(10):
            session_id = f"pipelined{attempt}"
            gen_id, reset_id = self.server.next_id(), self.server.next_id()
            self.server.send({"jsonrpc": "2.0", "id": gen_id, "method": "tools/call", "params": {
                "name": "generate_image",
                "arguments": {"session_id": session_id, "prompt": "solid red", "inline": "none"}}})
            self.server.send({"jsonrpc": "2.0", "id": reset_id, "method": "tools/call",
                              "params": {"name": "reset_session",
                                         "arguments": {"session_id": session_id}}})
            gen = structured(self.server.wait_for(lambda m: m.get("id") == gen_id))
            self.assertEqual(gen["version"], 1)
            cleared = structured(self.server.wait_for(lambda m: m.get("id") == reset_id))
            self.assertEqual((cleared["version"], cleared["next_version"]), (0, 2))

    def test_long_prompt_with_quotes_backslashes_escapes_and_unicode_is_kept_exactly(self):
        prompt = ('a "quoted" \\ back\\slash %s %d %% 100%% ünïcødé 🎨 漢字 \u2028 tab\t'
                  * 80)[:5000]
        self.assertGreater(len(prompt.encode()), 4096)
        sc = structured(self.server.call_tool("generate_image", {"session_id": "lp",
                                                                 "prompt": prompt, "inline": "none"}))
        # Kept exactly: the manifest resource has it whole; results cut it at a UTF-8 boundary.
        manifest = self.server.request("resources/read", {"uri": "imgmcp://sessions/lp"})
        self.assertEqual(json.loads(manifest["result"]["contents"][0]["text"])["versions"][0]
                         ["prompt"], prompt)
        hist = structured(self.server.call_tool("get_image", {"session_id": "lp"}))["history"]
        for cut in (hist[0], sc):
            self.assertTrue(cut["prompt_truncated"])
            self.assertEqual(cut["prompt_bytes"], len(prompt.encode()))
            self.assertTrue(prompt.startswith(cut["prompt"].removesuffix("…")))


class Errors(unittest.TestCase):
    def setUp(self):
        self.server = start_server(self)

    def assertFieldError(self, tool, args, *needles):
        text = error_text(self.server.call_tool(tool, args))
        for needle in needles:
            self.assertIn(needle, text)
        return text

    def test_argument_errors_name_the_field(self):
        self.assertFieldError("generate_image", {}, "prompt")
        self.assertFieldError("generate_image", {"prompt": 7}, "prompt", "string")
        self.assertFieldError("generate_image", {"prompt": "  "}, "prompt", "empty")
        self.assertFieldError("generate_image", {"prompt": "x", "colour": "red"}, "colour",
                              "unknown field")
        self.assertFieldError("generate_image", {"prompt": "x", "aspect_ratio": "7:5"},
                              "aspect_ratio", "16:9")
        self.assertFieldError("generate_image", {"prompt": "x", "inline": "thumb"}, "inline",
                              "preview")
        for bad in ("../x", "a b", "a/b", "x" * 65, "", ".hidden"):
            self.assertFieldError("get_image", {"session_id": bad}, "session_id")
        self.assertFieldError("get_image", {"session_id": "s", "version": -1}, "version")
        self.assertFieldError("get_image", {"session_id": "s", "version": 1.5}, "version")
        self.assertFieldError("get_image", {"session_id": "s", "version": "2"}, "version")
        self.assertFieldError("get_image", {"session_id": "s", "include_history": "yes"},
                              "include_history")
        self.assertFieldError("edit_image", {"session_id": "s"}, "prompt")
        self.assertFieldError("edit_image", {"session_id": "s", "prompt": "invert",
                                             "image": {"data": "!!!", "mime_type": "image/png"}},
                              "image.data", "base64")
        self.assertFieldError("edit_image", {"session_id": "s", "prompt": "invert",
                                             "image": {"data": small_png_b64()}}, "mime_type")
        self.assertFieldError("edit_image", {"session_id": "s", "prompt": "invert",
                                             "image": {"data": base64.b64encode(b"hello").decode(),
                                                       "mime_type": "image/png"}}, "image")
        self.assertFieldError("edit_image", {"session_id": "s", "prompt": "invert",
                                             "reference_images": "x"}, "reference_images")

    def test_unknown_tool_is_a_jsonrpc_error(self):
        resp = self.server.call_tool("make_coffee", {})
        self.assertEqual(resp["error"]["code"], -32602)

    def test_paths_outside_allowed_roots_are_refused(self):
        outside_dir = tempfile.mkdtemp(prefix="imgmcp-outside-")
        self.addCleanup(lambda: __import__("shutil").rmtree(outside_dir, ignore_errors=True))
        outside = os.path.join(outside_dir, "x.png")
        with open(outside, "wb") as f:
            f.write(pngio.solid_png(4, 4, (1, 2, 3)))
        link = os.path.join(self.server.data_dir, "link.png")
        os.symlink(outside, link)
        for path in (outside, link, os.path.join(self.server.data_dir, "..",
                                                 os.path.basename(outside_dir), "x.png")):
            text = self.assertFieldError("edit_image", {"session_id": "s", "prompt": "invert",
                                                        "image": {"path": path}}, "outside")
            self.assertIn("image.path", text)
        self.assertFieldError("edit_image", {"session_id": "s", "prompt": "invert",
                                             "image": {"path": "/no/such/file.png"}},
                              "no such file")

    def test_unknown_edit_instruction_lists_the_vocabulary(self):
        new_session_with_image(self.server, "u1")
        text = error_text(self.server.call_tool("edit_image", {"session_id": "u1",
                                                               "prompt": "make it pop"}))
        self.assertIn("make it pop", text)
        self.assertIn("grayscale", text)
        self.assertEqual(structured(self.server.call_tool("get_image", {"session_id": "u1"}))["version"], 2)

    def test_server_survives_every_error(self):
        self.test_argument_errors_name_the_field()
        self.assertEqual(self.server.request("ping")["result"], {})


class Resources(unittest.TestCase):
    def test_preview_resource_is_a_small_rendition_of_a_version(self):
        server = start_server(self)
        full = structured(server.call_tool("generate_image", {
            "session_id": "pv", "prompt": "a harbour at dusk with soft circles", "inline": "none"}))
        self.assertEqual((full["width"], full["height"]), (1024, 1024))
        templates = server.request("resources/templates/list")["result"]["resourceTemplates"]
        self.assertIn("imgmcp://sessions/{session_id}/versions/{version}/preview",
                      [t["uriTemplate"] for t in templates])
        manifest = json.loads(server.request("resources/read", {"uri": "imgmcp://sessions/pv"})
                              ["result"]["contents"][0]["text"])
        entry = manifest["versions"][0]
        self.assertEqual(entry["preview_uri"], "imgmcp://sessions/pv/versions/1/preview")
        self.assertEqual((entry["backend"], entry["model"]), (full["backend"], full["model"]))
        content = server.request("resources/read", {"uri": entry["preview_uri"]})["result"]["contents"][0]
        self.assertEqual(content["uri"], entry["preview_uri"])
        data = base64.b64decode(content["blob"])
        self.assertLessEqual(len(data), 96 * 1024)
        if content["mimeType"] == "image/png":
            self.assertEqual(pngio.decode_png(data)[:2], (320, 320))
        else:
            self.assertEqual(content["mimeType"], "image/jpeg")
        # The full image is unchanged by it; an unknown version has no preview.
        blob = server.request("resources/read", {"uri": full["uri"]})["result"]["contents"][0]
        self.assertEqual(hashlib.sha256(base64.b64decode(blob["blob"])).hexdigest(), full["sha256"])
        missing = server.request("resources/read", {"uri": "imgmcp://sessions/pv/versions/9/preview"})
        self.assertEqual(missing["error"]["code"], -32002)
        bad = server.request("resources/read", {"uri": "imgmcp://sessions/pv/versions/1/previewx"})
        self.assertEqual(bad["error"]["code"], -32002)

    def test_list_read_templates_and_subscribe(self):
        server = start_server(self)
        a = new_session_with_image(server, "ra")
        new_session_with_image(server, "rb")
        listing = server.request("resources/list")["result"]["resources"]
        uris = [r["uri"] for r in listing]
        self.assertEqual(uris[:2], ["imgmcp://sessions/rb/versions/2", "imgmcp://sessions/rb"])
        self.assertIn("imgmcp://sessions/ra/versions/2", uris)
        self.assertEqual(listing[0]["name"], "rb v2")
        templates = server.request("resources/templates/list")["result"]["resourceTemplates"]
        self.assertIn("imgmcp://sessions/{session_id}/versions/{version}",
                      [t["uriTemplate"] for t in templates])
        blob = server.request("resources/read", {"uri": a["uri"]})["result"]["contents"][0]
        self.assertEqual(hashlib.sha256(base64.b64decode(blob["blob"])).hexdigest(), a["sha256"])
        self.assertEqual(blob["mimeType"], "image/png")
        manifest = server.request("resources/read", {"uri": "imgmcp://sessions/ra"})["result"]
        import json
        body = json.loads(manifest["contents"][0]["text"])
        self.assertEqual([v["version"] for v in body["versions"]], [1, 2])
        missing = server.request("resources/read", {"uri": "imgmcp://sessions/ra/versions/99"})
        self.assertEqual(missing["error"]["code"], -32002)
        self.assertEqual(server.request("resources/subscribe",
                                        {"uri": "imgmcp://sessions/ra"})["result"], {})
        structured(server.call_tool("edit_image", {"session_id": "ra", "prompt": "invert",
                                                   "inline": "none"}))
        note = server.wait_for(lambda m: m.get("method") == "notifications/resources/updated")
        self.assertEqual(note["params"]["uri"], "imgmcp://sessions/ra")


class ProgressAndCancellation(unittest.TestCase):
    def test_queued_edits_report_progress_and_a_cancelled_queued_edit_commits_nothing(self):
        server = start_server(self)
        structured(server.call_tool("generate_image", {"session_id": "pc", "prompt": "solid green",
                                                       "inline": "none"}))
        slow_ids = []
        for i in range(3):
            rid = server.next_id()
            slow_ids.append(rid)
            server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                         "params": {"name": "edit_image", "_meta": {"progressToken": f"t{i}"},
                                    "arguments": {"session_id": "pc", "prompt": "blur 12",
                                                  "inline": "none"}}})
        victim = server.next_id()
        server.send({"jsonrpc": "2.0", "id": victim, "method": "tools/call",
                     "params": {"name": "edit_image", "_meta": {"progressToken": "victim"},
                                "arguments": {"session_id": "pc", "prompt": "invert",
                                              "inline": "none"}}})
        server.notify("notifications/cancelled", {"requestId": victim, "reason": "test"})
        for rid in slow_ids:
            ok_result(server.wait_for(lambda m, r=rid: m.get("id") == r, timeout=60))
        queued = [m for m in server.pending if m.get("method") == "notifications/progress"
                  and "queued behind" in m["params"].get("message", "")]
        self.assertTrue(queued, "expected 'queued behind N edits' progress")
        hist = structured(server.call_tool("get_image", {"session_id": "pc"}))["history"]
        self.assertEqual([h["prompt"] for h in hist], ["solid green"] + ["blur 12"] * 3)
        self.assertFalse([m for m in server.pending if m.get("id") == victim])
        # The cancelled request never gets a response, and the server stays healthy.
        self.assertEqual(server.request("ping")["result"], {})
        self.assertFalse([m for m in server.pending if m.get("id") == victim])


class OrderingAndDurability(unittest.TestCase):
    def test_forty_edits_in_flight_apply_in_arrival_order(self):
        server = start_server(self)
        new_session_with_image(server, "o40", size=16)  # v1 import, v2 invert
        prompts = [f"draw dot #{i:02x}{(i * 5) % 256:02x}80 at {i % 16},{i // 16}" for i in range(40)]
        ids = []
        for p in prompts:
            rid = server.next_id()
            ids.append(rid)
            server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                         "params": {"name": "edit_image",
                                    "arguments": {"session_id": "o40", "prompt": p, "inline": "none"}}})
        versions = [structured(server.wait_for(lambda m, r=rid: m.get("id") == r, timeout=120))["version"]
                    for rid in ids]
        self.assertEqual(versions, list(range(3, 43)))
        hist = structured(server.call_tool("get_image", {"session_id": "o40",
                                                          "history_limit": 100}))["history"]
        self.assertEqual([h["version"] for h in hist], list(range(1, 43)))
        self.assertEqual([h["prompt"] for h in hist[2:]], prompts)

    def test_get_image_reads_version_and_history_from_one_snapshot(self):
        # A second process commits edits while this one reads: every get_image answer must be one
        # moment of the session — its version is the newest entry of its history.
        reader = start_server(self)
        new_session_with_image(reader, "snap", size=8)
        writer = start_server(self, data_dir=reader.data_dir)
        edit_ids = []
        for i in range(150):
            rid = writer.next_id()
            edit_ids.append(rid)
            writer.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
                "name": "edit_image", "arguments": {"session_id": "snap", "inline": "none",
                                                    "prompt": "invert" if i % 2 else "grayscale"}}})
        seen = set()
        for _ in range(6):  # waves of 150 calls, well under the server's cap on calls in flight
            read_ids, manifest_ids = [], []
            for i in range(150):
                rid = reader.next_id()
                if i % 3 == 2:  # the session's manifest resource is one moment too
                    manifest_ids.append(rid)
                    reader.send({"jsonrpc": "2.0", "id": rid, "method": "resources/read",
                                 "params": {"uri": "imgmcp://sessions/snap"}})
                    continue
                read_ids.append(rid)
                reader.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
                    "name": "get_image", "arguments": {"session_id": "snap", "inline": "none"}}})
            for rid in read_ids:
                sc = structured(reader.wait_for(lambda m, r=rid: m.get("id") == r, timeout=120))
                history = [h["version"] for h in sc["history"]]
                # Consecutive (the oldest may have been pruned: 100 versions are kept).
                self.assertEqual(history, list(range(history[0], history[0] + len(history))))
                self.assertEqual(sc["version"], history[-1], "version and history from two moments")
                seen.add(sc["version"])
            for rid in manifest_ids:
                resp = reader.wait_for(lambda m, r=rid: m.get("id") == r, timeout=120)
                manifest = json.loads(resp["result"]["contents"][0]["text"])
                self.assertEqual(manifest["current_version"], manifest["versions"][-1]["version"],
                                 "manifest versions and current from two moments")
                self.assertEqual(manifest["current"]["version"], manifest["current_version"])
        for rid in edit_ids:
            structured(writer.wait_for(lambda m, r=rid: m.get("id") == r, timeout=120))
        self.assertGreater(len(seen), 1, "the reads never overlapped a commit")

    def test_twelve_processes_on_one_data_dir_lose_nothing(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-multi-")
        self.addCleanup(lambda: __import__("shutil").rmtree(data_dir, ignore_errors=True))
        first = start_server(self, data_dir=data_dir)
        new_session_with_image(first, "mp", size=16)
        servers = [start_server(self, data_dir=data_dir) for _ in range(12)]
        sent = {}
        for n, server in enumerate(servers):
            for k in range(4):
                rid = server.next_id()
                prompt = f"draw dot #{n * 20:02x}{k * 60:02x}10 at {n},{k}"
                sent[(n, rid)] = prompt
                server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                             "params": {"name": "edit_image",
                                        "arguments": {"session_id": "mp", "prompt": prompt,
                                                      "inline": "none"}}})
        got = []
        for (n, rid), prompt in sent.items():
            got.append(structured(servers[n].wait_for(lambda m, r=rid: m.get("id") == r,
                                                      timeout=120))["version"])
        self.assertEqual(sorted(got), list(range(3, 3 + 48)))
        hist = structured(first.call_tool("get_image", {"session_id": "mp",
                                                        "history_limit": 100}))["history"]
        self.assertEqual([h["version"] for h in hist], list(range(1, 51)))
        self.assertEqual(sorted(h["prompt"] for h in hist[2:]), sorted(sent.values()))
        # Each process's own edits keep their relative order.
        for n in range(12):
            mine = [h["prompt"] for h in hist if h["prompt"] in
                    {p for (m, _), p in sent.items() if m == n}]
            self.assertEqual(mine, [p for (m, _), p in sent.items() if m == n])

    def test_restart_keeps_sessions_and_versions(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-restart-")
        self.addCleanup(lambda: __import__("shutil").rmtree(data_dir, ignore_errors=True))
        server = start_server(self, data_dir=data_dir)
        before = new_session_with_image(server, "rs")
        server.close_stdin()
        self.assertEqual(server.wait_exit(timeout=5), 0)
        again = start_server(self, data_dir=data_dir)
        after = structured(again.call_tool("get_image", {"session_id": "rs", "inline": "none"}))
        self.assertEqual((after["version"], after["sha256"]), (2, before["sha256"]))
        self.assertEqual(sha256_file(after["path"]), before["sha256"])

    def test_many_versions_and_many_sessions_stay_ordered(self):
        server = start_server(self)
        new_session_with_image(server, "long", size=8)
        ids = []
        for i in range(150):
            rid = server.next_id()
            ids.append(rid)
            server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                         "params": {"name": "edit_image",
                                    "arguments": {"session_id": "long", "prompt": "invert",
                                                  "inline": "none"}}})
        for rid in ids:
            ok_result(server.wait_for(lambda m, r=rid: m.get("id") == r, timeout=120))
        hist = structured(server.call_tool("get_image", {"session_id": "long",
                                                          "history_limit": 100}))["history"]
        self.assertEqual([h["version"] for h in hist][-100:], list(range(53, 153)))
        for i in range(200):
            new_session_with_image(server, f"many-{i:03d}", size=4)
        seen, cursor = [], None
        while True:
            params = {"cursor": cursor} if cursor else {}
            page = server.request("resources/list", params)["result"]
            seen += [r["uri"] for r in page["resources"] if "/versions/" not in r["uri"]]
            cursor = page.get("nextCursor")
            if not cursor:
                break
        sessions = [u.rsplit("/", 1)[1] for u in seen]
        self.assertEqual(len(sessions), len(set(sessions)))
        self.assertEqual(sessions[:200], [f"many-{i:03d}" for i in reversed(range(200))])
        self.assertIn("long", sessions)


if __name__ == "__main__":
    unittest.main()
