"""Exactly-once writes with `idempotency_key` (docs/generation.md, "Exactly-once writes"), over
stdio against the real binary and the Gemini fake, whose request log proves when the backend was
called: a repeat returns the first call's version marked repeated without a backend call, also
while the first is still running and after a restart; a key reused with other arguments, and a
key of the wrong form, are errors naming idempotency_key; reset_session's repeats do nothing
again; a repeat writes no second copy."""
import os
import shutil
import tempfile
import unittest

from fake_gemini_support import FakeGeminiTestCase
from tools_support import error_text, ok_result, structured

ALLOWED = "1 to 128 characters from A-Z a-z 0-9 . _ : -"


def without_repeated(content):
    return {k: v for k, v in content.items() if k != "repeated"}


class Idempotency(FakeGeminiTestCase):
    def backend_calls(self):
        return len(self.fake.requests())

    def send(self, server, tool, arguments, token=None):
        rid = server.next_id()
        params = {"name": tool, "arguments": arguments}
        if token:
            params["_meta"] = {"progressToken": token}
        server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
        return rid

    def test_a_repeat_returns_the_first_result_without_calling_the_backend(self):
        server = self.start_imgmcp()
        args = {"session_id": "s1", "prompt": "a red square", "idempotency_key": "gen-1"}
        first = ok_result(server.call_tool("generate_image", args))
        self.assertEqual(first["structuredContent"]["version"], 1)
        self.assertNotIn("repeated", first["structuredContent"])
        # inline and save_to are presentation: a retry may change them.
        again = ok_result(server.call_tool("generate_image", {**args, "inline": "none"}))
        self.assertIs(again["structuredContent"]["repeated"], True)
        self.assertEqual(without_repeated(again["structuredContent"]), first["structuredContent"])
        self.assertIn("Repeat of an earlier generate_image call with idempotency_key 'gen-1'",
                      again["content"][0]["text"])
        self.assertFalse([c for c in again["content"] if c["type"] == "image"])
        self.assertEqual(self.backend_calls(), 1)

        edit = {"session_id": "s1", "prompt": "invert", "idempotency_key": "edit-1",
                "inline": "none"}
        edited = structured(server.call_tool("edit_image", edit))
        repeat = structured(server.call_tool("edit_image", edit))
        self.assertEqual((edited["version"], repeat["version"]), (2, 2))
        self.assertEqual(repeat["sha256"], edited["sha256"])
        self.assertEqual(self.backend_calls(), 2)
        # A new key is a new call.
        third = structured(server.call_tool("edit_image", {**edit, "idempotency_key": "edit-2"}))
        self.assertEqual(third["version"], 3)
        self.assertEqual(self.backend_calls(), 3)

    def test_a_keyed_generate_without_a_session_finds_its_session_again(self):
        server = self.start_imgmcp()
        args = {"prompt": "a green circle", "idempotency_key": "new-session-0001",
                "inline": "none"}
        first = structured(server.call_tool("generate_image", args))
        again = structured(server.call_tool("generate_image", args))
        self.assertEqual(again["session_id"], first["session_id"])
        self.assertEqual((first["version"], again["version"]), (1, 1))
        self.assertIs(again["repeated"], True)
        self.assertEqual(self.backend_calls(), 1)

    def test_a_repeat_writes_no_second_copy(self):
        out = tempfile.mkdtemp(prefix="imgmcp-out-")
        self.addCleanup(shutil.rmtree, out, True)
        server = self.start_imgmcp(extra_args=["--allow-write", out])
        target = os.path.join(out, "hero.png")
        args = {"session_id": "s7", "prompt": "a hero", "idempotency_key": "save-1",
                "inline": "none", "save_to": target}
        first = structured(server.call_tool("generate_image", args))
        self.assertEqual(first["saved_to"], target)
        # The file is there now (no overwrite): the repeat neither checks nor writes it again.
        again = ok_result(server.call_tool("generate_image", args))
        self.assertEqual(again["structuredContent"]["version"], 1)
        self.assertNotIn("saved_to", again["structuredContent"])
        self.assertIn("No copy was written by this repeat", again["content"][0]["text"])
        self.assertEqual(self.backend_calls(), 1)

    def test_the_same_key_with_other_arguments_is_an_error(self):
        server = self.start_imgmcp()
        args = {"session_id": "s2", "prompt": "a red square", "idempotency_key": "k",
                "inline": "none"}
        structured(server.call_tool("generate_image", args))
        text = error_text(server.call_tool("generate_image", {**args, "prompt": "a blue square"}))
        self.assertIn("idempotency_key 'k' was already used in session 's2'", text)
        self.assertEqual(self.backend_calls(), 1)
        current = structured(server.call_tool("get_image", {"session_id": "s2", "inline": "none"}))
        self.assertEqual(current["version"], 1)

    def test_keys_of_the_wrong_form_are_refused_at_the_edge(self):
        server = self.start_imgmcp()
        for bad in ("", "a b", "k/1", "x" * 129, "ключ"):
            text = error_text(server.call_tool("generate_image", {
                "session_id": "s3", "prompt": "p", "idempotency_key": bad}))
            self.assertIn("'idempotency_key' is", text)
            self.assertIn(ALLOWED, text)
        self.assertEqual(self.backend_calls(), 0)

    def test_a_repeat_sent_while_the_first_runs_waits_for_it(self):
        server = self.start_imgmcp()
        self.fake.script({"hold": "first"})
        args = {"session_id": "s4", "prompt": "a slow square", "idempotency_key": "slow-1",
                "inline": "none"}
        first_id = self.send(server, "generate_image", args)
        self.fake.wait(held=1)
        repeat_id = self.send(server, "generate_image", args, token="rep")
        server.wait_for(lambda m: m.get("method") == "notifications/progress"
                        and m["params"].get("progressToken") == "rep"
                        and "queued behind" in m["params"].get("message", ""))
        self.fake.release("first")
        first = structured(server.wait_for(lambda m: m.get("id") == first_id))
        repeat = structured(server.wait_for(lambda m: m.get("id") == repeat_id))
        self.assertEqual((first["version"], repeat["version"]), (1, 1))
        self.assertNotIn("repeated", first)
        self.assertIs(repeat["repeated"], True)
        self.assertEqual(self.backend_calls(), 1)

    def test_reset_session_repeats_do_nothing_again(self):
        server = self.start_imgmcp()
        for prompt in ("one", "two"):
            structured(server.call_tool("generate_image", {"session_id": "s5", "prompt": prompt,
                                                           "inline": "none"}))
        clear = {"session_id": "s5", "idempotency_key": "reset-1"}
        cleared = structured(server.call_tool("reset_session", clear))
        self.assertEqual((cleared["cleared"], cleared["next_version"]), (True, 3))
        structured(server.call_tool("generate_image", {"session_id": "s5", "prompt": "three",
                                                       "inline": "none"}))
        again = structured(server.call_tool("reset_session", clear))
        self.assertEqual((again["cleared"], again["next_version"], again["repeated"]),
                         (True, 3, True))
        current = structured(server.call_tool("get_image", {"session_id": "s5", "inline": "none"}))
        self.assertEqual(current["version"], 3)  # not cleared a second time

        revert = {"session_id": "s5", "to_version": 3, "idempotency_key": "revert-1"}
        reverted = structured(server.call_tool("reset_session", revert))
        repeat = structured(server.call_tool("reset_session", revert))
        self.assertEqual((reverted["version"], repeat["version"]), (4, 4))
        history = structured(server.call_tool("get_image", {"session_id": "s5",
                                                            "inline": "none"}))["history"]
        self.assertEqual([h["version"] for h in history], [3, 4])
        text = error_text(server.call_tool("reset_session", {**revert, "to_version": 4}))
        self.assertIn("idempotency_key 'revert-1'", text)

    def test_a_key_outlives_a_restart(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-test-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        args = {"session_id": "s6", "prompt": "a durable square", "idempotency_key": "durable-1",
                "inline": "none"}
        server = self.start_imgmcp(data_dir=data_dir)
        first = structured(server.call_tool("generate_image", args))
        server.close_stdin()
        self.assertEqual(server.wait_exit(), 0)
        server = self.start_imgmcp(data_dir=data_dir)
        again = structured(server.call_tool("generate_image", args))
        self.assertEqual(without_repeated(again), first)
        self.assertEqual(self.backend_calls(), 1)


if __name__ == "__main__":
    unittest.main()
