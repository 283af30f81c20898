"""What agents get back from sessions, against the real binary: an `image` import and
the edit made from it are one operation (a failed edit saves neither); retention is stated where
agents read it and a revert to a deleted version is a clear error; results stay small however
long the session and its prompts are (history in pages, prompts cut, nothing large sent twice);
tool failures are logged at the default level.
"""
import concurrent.futures
import json
import os
import shutil
import tempfile
import unittest

from docs_support import assert_listed, names_of_tests
from fake_gemini_support import FakeGeminiTestCase
from mcp_harness import ServerProcess
from tools_support import error_text, pngio, small_png_b64, structured

CALL_TIMEOUT = 60
LONG_PROMPT = "rotate 0, " * 9_600  # 96 KB of a valid local instruction that is cheap to apply


def start(test, *args, data_dir=None, cwd=None, protocol=None):
    server = ServerProcess(args=["--backend", "local", *args], data_dir=data_dir, cwd=cwd)
    test.addCleanup(server.__exit__, None, None, None)
    if protocol:
        server.initialize(version=protocol)
    else:
        server.initialize()
    return server


def response_bytes(resp):
    return len(json.dumps(resp, separators=(",", ":")).encode())


def history(server, session_id, **extra):
    resp = server.call_tool("get_image", {"session_id": session_id, "inline": "none", **extra})
    return structured(resp), resp


class ImportAndEditAreOneOperation(unittest.TestCase):
    def test_a_failed_edit_of_an_outside_image_saves_nothing(self):
        work = os.path.join(self.server_dir(), "work")
        os.makedirs(work)
        with open(os.path.join(work, "small.png"), "wb") as f:
            f.write(pngio.solid_png(8, 8, (1, 2, 3)))
        server = start(self, cwd=work)
        for _ in range(3):
            text = error_text(server.call_tool("edit_image", {
                "session_id": "pop", "prompt": "make it pop", "image": {"path": "small.png"}},
                timeout=CALL_TIMEOUT))
            self.assertIn("does not understand", text)
            self.assertNotIn("saved as version", text)
        # Before: three imports were committed (history [1 import, 2 import, 3 import]).
        self.assertIn("unknown session 'pop'",
                      error_text(server.call_tool("get_image", {"session_id": "pop"})))

    def test_an_existing_session_is_unchanged_by_a_failed_import_edit(self):
        server = start(self)
        first = structured(server.call_tool("edit_image", {
            "session_id": "keep", "prompt": "invert", "inline": "none",
            "image": {"data": small_png_b64(16), "mime_type": "image/png"}}))
        self.assertEqual(first["version"], 2)
        error_text(server.call_tool("edit_image", {
            "session_id": "keep", "prompt": "sparkle", "inline": "none",
            "image": {"data": small_png_b64(16, (9, 9, 9)), "mime_type": "image/png"}}))
        sc, _ = history(server, "keep")
        self.assertEqual(sc["version"], 2)
        self.assertEqual([h["operation"] for h in sc["history"]], ["import", "edit"])

    def test_the_import_and_the_edit_are_committed_together_with_the_edit_made_from_it(self):
        server = start(self)
        structured(server.call_tool("generate_image", {"session_id": "pair", "prompt": "solid red",
                                                       "inline": "none"}))
        sc = structured(server.call_tool("edit_image", {
            "session_id": "pair", "prompt": "invert", "inline": "none",
            "image": {"data": small_png_b64(16), "mime_type": "image/png"}}))
        self.assertEqual(sc["version"], 3)
        self.assertEqual(sc["parent_version"], 2)
        hist, _ = history(server, "pair")
        self.assertEqual([(h["version"], h["operation"], h.get("parent_version"))
                          for h in hist["history"]],
                         [(1, "generate", None), (2, "import", None), (3, "edit", 2)])

    def test_many_import_edits_in_flight_on_one_session_commit_in_pairs_in_order(self):
        server = start(self)
        n = 12
        ids = []
        for i in range(n):  # sent back to back, without waiting: they queue on the session
            rid = f"pair-{i}"
            ids.append(rid)
            prompt = "invert" if i % 3 else "make it pop"  # every third one fails
            server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
                "name": "edit_image", "arguments": {
                    "session_id": "busy", "prompt": prompt, "inline": "none",
                    "image": {"data": small_png_b64(16, (i, i, i)), "mime_type": "image/png"}}}})
        results = {}
        for rid in ids:
            results[rid] = server.wait_for(lambda m, r=rid: m.get("id") == r, CALL_TIMEOUT)
        ok = [rid for rid in ids if not results[rid]["result"].get("isError")]
        self.assertEqual(len(ok), n - (n + 2) // 3)
        hist, _ = history(server, "busy", history_limit=100)
        ops = [(h["operation"], h.get("parent_version")) for h in hist["history"]]
        expected = []
        for k in range(len(ok)):
            expected += [("import", None), ("edit", 2 * k + 1)]
        self.assertEqual(ops, expected)
        for k, rid in enumerate(ok):  # in arrival order
            self.assertEqual(results[rid]["result"]["structuredContent"]["version"], 2 * k + 2)

    def server_dir(self):
        d = tempfile.mkdtemp(prefix="imgmcp-import-")
        self.addCleanup(shutil.rmtree, d, True)
        return d


class ImportEditWithAFailingModel(FakeGeminiTestCase):
    """With Gemini, any instruction is valid: the edit fails at the backend, after the image was
    decoded and the turn taken, and still nothing is saved."""

    def test_a_backend_failure_saves_neither_the_image_nor_the_edit(self):
        server = self.start_imgmcp()
        self.fake.script({"status": 403, "message": "Permission denied: consumer blocked"})
        text = error_text(server.call_tool("edit_image", {
            "session_id": "g", "prompt": "make it pop", "inline": "none",
            "image": {"data": small_png_b64(16), "mime_type": "image/png"}}, timeout=CALL_TIMEOUT))
        self.assertIn("403", text)
        self.assertIn("nothing was saved", text)
        self.assertIn("unknown session 'g'",
                      error_text(server.call_tool("get_image", {"session_id": "g"})))
        # The same call succeeds once the model answers (the fake edits with the local
        # vocabulary): versions 1 (import) and 2 (edit).
        sc = structured(server.call_tool("edit_image", {
            "session_id": "g", "prompt": "invert", "inline": "none",
            "image": {"data": small_png_b64(16), "mime_type": "image/png"}}, timeout=CALL_TIMEOUT))
        self.assertEqual((sc["version"], sc["parent_version"]), (2, 1))


class Retention(unittest.TestCase):
    def make_three(self, server, session_id="r"):
        structured(server.call_tool("generate_image", {"session_id": session_id,
                                                       "prompt": "solid red", "inline": "none"}))
        for _ in range(2):
            structured(server.call_tool("edit_image", {"session_id": session_id,
                                                       "prompt": "invert", "inline": "none"}))

    def test_a_revert_to_a_version_retention_deleted_is_a_clear_error(self):
        server = start(self, "--max-versions", "3")
        self.make_three(server)
        sc = structured(server.call_tool("reset_session", {"session_id": "r", "to_version": 1}))
        self.assertEqual((sc["version"], sc["parent_version"]), (4, 1))  # 1 is now deleted
        text = error_text(server.call_tool("reset_session", {"session_id": "r", "to_version": 1}))
        self.assertIn("version 1 of session 'r' no longer exists", text)
        self.assertIn("keeps the last 3 versions", text)
        self.assertIn("2 to 4", text)
        self.assertIn("nothing changed", text)
        hist, _ = history(server, "r")
        self.assertEqual([h["version"] for h in hist["history"]], [2, 3, 4])
        # A version never made is told apart from a deleted one.
        text = error_text(server.call_tool("reset_session", {"session_id": "r", "to_version": 9}))
        self.assertIn("newest ever made is 4", text)

    def test_descriptions_and_annotations_say_what_is_kept_and_deleted(self):
        server = start(self, "--max-versions", "3", "--idle-days", "30")
        tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
        for name in ("generate_image", "edit_image", "get_image", "reset_session"):
            self.assertIn("keeps the last 3 versions", tools[name]["description"], name)
            self.assertIn("unused for 30 days is deleted", tools[name]["description"], name)
        reset = tools["reset_session"]
        self.assertIn("delete every image", reset["description"])
        self.assertNotIn("nothing is deleted", reset["description"])
        self.assertIs(reset["annotations"]["idempotentHint"], False)
        self.assertIs(reset["annotations"]["destructiveHint"], True)
        for name in ("generate_image", "edit_image"):  # a new version can delete the oldest
            self.assertIs(tools[name]["annotations"]["destructiveHint"], True, name)
        self.assertIs(tools["get_image"]["annotations"]["readOnlyHint"], True)

    def test_keeping_every_version_is_stated_and_is_not_destructive(self):
        server = start(self, "--max-versions", "0")
        tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
        self.assertIn("keeps every version", tools["edit_image"]["description"])
        self.assertIs(tools["edit_image"]["annotations"]["destructiveHint"], False)

    def test_to_version_null_is_refused_instead_of_clearing(self):
        server = start(self)
        self.make_three(server)
        text = error_text(server.call_tool("reset_session", {"session_id": "r",
                                                             "to_version": None}))
        self.assertIn("to_version", text)
        self.assertIn("null", text)
        hist, _ = history(server, "r")
        self.assertEqual(hist["version"], 3)  # before: the whole session was cleared


class SmallResults(unittest.TestCase):
    """A 60-version session with 96 KB prompts: results stay far below Claude Code's 1 MiB."""

    VERSIONS = 60

    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(args=["--backend", "local"])
        cls.server.initialize()
        structured(cls.server.call_tool("edit_image", {
            "session_id": "long", "prompt": LONG_PROMPT, "inline": "none",
            "image": {"data": small_png_b64(16), "mime_type": "image/png"}}, timeout=CALL_TIMEOUT))
        rids = []
        for i in range(cls.VERSIONS - 3):
            rid = f"long-{i}"
            rids.append(rid)
            cls.server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
                "name": "edit_image", "arguments": {"session_id": "long", "prompt": LONG_PROMPT,
                                                    "inline": "none"}}})
        for rid in rids:
            resp = cls.server.wait_for(lambda m, r=rid: m.get("id") == r, CALL_TIMEOUT)
            assert not resp["result"].get("isError"), resp
        structured(cls.server.call_tool("reset_session", {"session_id": "long", "to_version": 5}))

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)

    def test_get_image_is_small_and_sends_the_history_once(self):
        sc, resp = history(self.server, "long")
        self.assertLess(response_bytes(resp), 64 << 10)  # was 1.18 MB for 120 versions
        self.assertEqual(len(sc["history"]), 20)
        self.assertEqual(sc["history_total"], self.VERSIONS)
        self.assertEqual(sc["history"][-1]["version"], self.VERSIONS)
        text = resp["result"]["content"][0]["text"]
        self.assertNotIn('"history": [', text)
        self.assertIn("history_before=", text)
        self.assertEqual(sc["prompt"][:20], "revert to version 5")
        for entry in sc["history"][:-1]:
            self.assertTrue(entry["prompt_truncated"])
            self.assertEqual(entry["prompt_bytes"], len(LONG_PROMPT))
            self.assertLessEqual(len(entry["prompt"].encode()), 130)

    def test_history_entries_name_their_parent_and_sha256(self):
        sc, _ = history(self.server, "long")
        last = sc["history"][-1]
        self.assertEqual((last["operation"], last["parent_version"]), ("revert", 5))
        for entry in sc["history"][:-1]:
            self.assertEqual(entry["parent_version"], entry["version"] - 1)
            self.assertRegex(entry["sha256"], r"^[0-9a-f]{64}$")

    def test_paging_back_covers_every_version_once(self):
        seen = []
        before = None
        pages = 0
        while True:
            args = {"history_limit": 25}
            if before is not None:
                args["history_before"] = before
            sc, resp = history(self.server, "long", **args)
            self.assertLess(response_bytes(resp), 64 << 10)
            seen = [h["version"] for h in sc["history"]] + seen
            pages += 1
            before = sc.get("history_more_before")
            if before is None:
                break
        self.assertEqual(seen, list(range(1, self.VERSIONS + 1)))
        self.assertEqual(pages, 3)

    def test_an_edit_result_does_not_echo_a_long_prompt(self):
        resp = self.server.call_tool("edit_image", {
            "session_id": "long-echo", "prompt": LONG_PROMPT, "inline": "none",
            "image": {"data": small_png_b64(16), "mime_type": "image/png"}}, timeout=CALL_TIMEOUT)
        sc = structured(resp)
        self.assertTrue(sc["prompt_truncated"])
        self.assertLess(response_bytes(resp), 8 << 10)  # the 96 KB prompt came back twice before

    def test_the_manifest_resource_has_the_whole_prompts(self):
        contents = self.server.request("resources/read", {"uri": "imgmcp://sessions/long"})
        manifest = json.loads(contents["result"]["contents"][0]["text"])
        self.assertEqual(manifest["versions"][1]["prompt"], LONG_PROMPT)


class OlderClientsGetTheHistoryInText(unittest.TestCase):
    def test_a_2025_03_26_client_reads_the_history_in_the_text_block(self):
        server = start(self, protocol="2025-03-26")
        structured(server.call_tool("generate_image", {"session_id": "old", "prompt": "solid red",
                                                       "inline": "none"}))
        _, resp = history(server, "old")
        # The text block: a summary line, then the structured content as JSON, history included.
        summary, _, copy = resp["result"]["content"][0]["text"].partition("\n")
        self.assertIn("Session 'old' version 1", summary)
        in_text = json.loads(copy)
        self.assertEqual([h["version"] for h in in_text["history"]], [1])
        self.assertEqual(in_text["history"][0]["prompt"], "solid red")


class FailuresAreLogged(unittest.TestCase):
    def test_tool_failures_reach_stderr_at_the_default_level(self):
        server = start(self, "--cache-mb", "0")  # so the image is read from its file
        error_text(server.call_tool("edit_image", {"session_id": "nope", "prompt": "invert"}))
        error_text(server.call_tool("get_image", {"session_id": "bad id"}))  # a parse error
        sc = structured(server.call_tool("generate_image", {"session_id": "gone",
                                                            "prompt": "solid red",
                                                            "inline": "none"}))
        os.remove(sc["path"])  # the stored file disappears: data loss, not the caller's doing
        error_text(server.call_tool("get_image", {"session_id": "gone", "inline": "full"}))
        server.close_stdin()
        server.wait_exit(timeout=30)
        log = server.stderr
        self.assertRegex(log, r"info \[tools\] edit_image failed \(.*\): session 'nope'")
        self.assertRegex(log, r"info \[tools\] get_image failed .*session_id")
        self.assertRegex(log, r"warning \[tools\] .*failed \(data_loss\)")


class CatalogueDocs(unittest.TestCase):
    def test_the_docs_list_every_test_here(self):
        assert_listed(self, names_of_tests(
            ImportAndEditAreOneOperation, ImportEditWithAFailingModel, Retention, SmallResults,
            OlderClientsGetTheHistoryInText, FailuresAreLogged))


if __name__ == "__main__":
    unittest.main()
