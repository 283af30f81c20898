"""Chain edits in flight, with the real imgmcp binary against tests/fake_gemini.

Many `context: "chain"` edits are sent without waiting, on one session and across sessions. Each
one must replay exactly the turns committed before it in its own session (the walk reads the
session's stored versions while other sessions commit), with every signature intact (the fake
verifies each one), and the versions must follow the order the calls arrived in. Labelled
concurrency: CI also runs it against the ThreadSanitizer build."""
import unittest

from fake_gemini_support import FakeGeminiTestCase
from tools_support import structured

# The one model with image_size 512 (the smallest images, the fastest turns): retired, so the
# server runs with --allow-retired, as for an endpoint that still serves it.
FLASH = "gemini-3.1-flash-image"


class ChainEditsInFlight(FakeGeminiTestCase):
    def start(self):
        return self.start_imgmcp(extra_args=["--model", FLASH, "--allow-retired"])

    def send(self, server, tool, arguments):
        rid = server.next_id()
        server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                     "params": {"name": tool, "arguments": {"inline": "none",
                                                            "image_size": "512", **arguments}}})
        return rid

    def answer(self, server, rid):
        return structured(server.wait_for(lambda m: m.get("id") == rid, timeout=120))

    def requests_by_instruction(self):
        """The fake's log, keyed by each request's last user text (every prompt is unique)."""
        by_text = {}
        for entry in self.fake.requests():
            self.assertEqual(entry["response_status"], 200, entry.get("signature_problem"))
            self.assertIsNone(entry.get("signature_problem"))
            by_text[" ".join(entry["turns"][-1]["texts"])] = entry
        return by_text

    def check_replay(self, entry, prompts_before, prompt):
        """The request replayed the turns of `prompts_before` (oldest first), then `prompt`."""
        turns = entry["turns"]
        self.assertEqual([t["role"] for t in turns], ["user", "model"] * len(prompts_before)
                         + ["user"], prompt)
        users = [" ".join(t["texts"]) for t in turns if t["role"] == "user"]
        self.assertEqual(users, prompts_before + [prompt])
        self.assertEqual([t["signatures"] for t in turns if t["role"] == "model"],
                         [2] * len(prompts_before), prompt)

    def test_chain_edits_in_flight_on_one_session_replay_the_turns_before_each(self):
        server = self.start()
        first = "solid red"
        self.answer(server, self.send(server, "generate_image",
                                      {"session_id": "one", "prompt": first}))
        prompts = [f"draw dot #{(i * 40) % 256:02x}80{(255 - i * 20) % 256:02x} at {i * 30},{i * 20}"
                   for i in range(12)]
        rids = [self.send(server, "edit_image", {"session_id": "one", "prompt": p,
                                                 "context": "chain"}) for p in prompts]
        results = [self.answer(server, rid) for rid in rids]
        self.assertEqual([r["version"] for r in results], list(range(2, 14)))
        made_by = [first] + prompts  # version n was made by made_by[n - 1]
        log = self.requests_by_instruction()
        self.assertEqual(len(log), 13)
        for r, prompt in zip(results, prompts):
            v = r["version"]
            replayed = list(range(max(1, v - 4), v))  # --chain-turns 4
            self.assertEqual(r["params"]["replayed_versions"], replayed, prompt)
            self.assertEqual(r["parent_version"], v - 1)
            self.check_replay(log[prompt], [made_by[n - 1] for n in replayed], prompt)

    def test_chain_edits_in_flight_across_sessions_stay_in_their_own_chains(self):
        server = self.start()
        sessions = [f"s{i}" for i in range(8)]
        gen = {s: f"solid {c}" for s, c in zip(sessions, ["red", "green", "blue", "teal", "navy",
                                                            "orange", "purple", "gray"])}
        gen_rids = [self.send(server, "generate_image", {"session_id": s, "prompt": gen[s]})
                    for s in sessions]
        sent = []  # (session, prompt, request id), all in flight at once
        for round_ in range(3):
            for i, s in enumerate(sessions):
                prompt = f"draw dot #{i * 30:02x}{round_ * 80:02x}40 at {i * 20 + round_},{round_ * 9}"
                sent.append((s, prompt, self.send(server, "edit_image", {
                    "session_id": s, "prompt": prompt, "context": "chain"})))
        for rid in gen_rids:
            self.assertEqual(self.answer(server, rid)["version"], 1)
        results = [(s, prompt, self.answer(server, rid)) for s, prompt, rid in sent]
        log = self.requests_by_instruction()
        self.assertEqual(len(log), 8 + 24)
        made_by = {s: [gen[s]] for s in sessions}
        for s, prompt, r in results:  # in sending order: each session's edits in its order
            self.assertEqual(r["session_id"], s)
            self.assertEqual(r["version"], len(made_by[s]) + 1, prompt)
            self.assertEqual(r["params"]["replayed_versions"],
                             list(range(1, len(made_by[s]) + 1)), prompt)
            self.check_replay(log[prompt], list(made_by[s]), prompt)
            made_by[s].append(prompt)


if __name__ == "__main__":
    unittest.main()
