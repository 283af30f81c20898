"""What calls cost, with the real imgmcp binary against tests/fake_gemini (README.md, "What it
costs"): every version carries the cost of the call that made it, the tokens the backend reported
priced with the model table's prices (read here from gemini_client/models.json); get_image adds
what the session has paid for, which a restart and a reset keep; max_cost_usd and estimate_only
act before any request; and budgets per day and per session let exactly as many of eight calls in
flight run as they have room for, refusing the others before any request, naming the budget.
On SQLite here; test_cost_replicas.py runs the budgets across two PostgreSQL replicas."""
import json
import os
import shutil
import tempfile
import unittest

from fake_gemini_support import MODEL, FakeGeminiTestCase
from tools_support import error_text, structured

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gemini_client",
                     "models.json")
TIMEOUT = 60


def prices_of(model):
    with open(TABLE, encoding="utf-8") as f:
        rows = {row["id"]: row for row in json.load(f)["models"]}
    return rows[model]


def priced(usage, row, grounding_queries=0):
    """usageMetadata priced with a model table row: prompt tokens by modality, the answer's text
    and image, thoughts, and each search query."""
    p = row["prices_usd_per_million_tokens"]

    def by_modality(key, kind):
        return sum(d["tokenCount"] for d in usage.get(key, []) if d["modality"] == kind)
    prompt_image = by_modality("promptTokensDetails", "IMAGE")
    prompt_text = usage["promptTokenCount"] - prompt_image
    answer_text = by_modality("candidatesTokensDetails", "TEXT")
    answer_image = usage.get("candidatesTokenCount", 0) - answer_text
    return (prompt_text * p["input_text"] + prompt_image * p["input_image"]
            + answer_image * p["output_image"] + answer_text * p["output_text"]
            + usage.get("thoughtsTokenCount", 0) * p["thoughts"]) / 1e6 \
        + grounding_queries * row["usd_per_grounded_query"]


class CostTestCase(FakeGeminiTestCase):
    def setUp(self):
        super().setUp()
        self.data_dir = tempfile.mkdtemp(prefix="imgmcp-cost-")
        self.addCleanup(shutil.rmtree, self.data_dir, True)

    def start(self, *extra):
        return self.start_imgmcp(extra_args=list(extra), data_dir=self.data_dir)

    def call(self, server, tool, **arguments):
        return server.call_tool(tool, {"inline": "none", **arguments}, timeout=TIMEOUT)

    def paid(self, server, session):
        return structured(self.call(server, "get_image", session_id=session,
                                    include_history=False))["session_cost_usd"]


class EveryVersionCarriesItsCost(CostTestCase):
    def test_cost_is_the_reported_tokens_times_the_table_prices(self):
        server = self.start()
        row = prices_of(MODEL)
        made = structured(self.call(server, "generate_image", session_id="c",
                                    prompt="a lighthouse at dusk", thinking="high"))
        cost = made["cost"]
        self.assertEqual(cost["priced_model"], MODEL)
        usage = made["usage"]
        self.assertAlmostEqual(cost["usd"], priced(usage, row), places=12)
        self.assertGreater(cost["usd"], 0)
        self.assertEqual(cost["output_image_tokens"], row["output_image_tokens"]["1K"])
        self.assertEqual(cost["input_tokens"], usage["promptTokenCount"])
        self.assertEqual(cost["thoughts_tokens"], usage["thoughtsTokenCount"])
        resp = self.call(server, "edit_image", session_id="c", prompt="invert")
        self.assertIn("cost ≈ $", resp["result"]["content"][0]["text"])
        edit = structured(resp)
        # The edit sent the image: its prompt tokens include an image, priced as one.
        self.assertAlmostEqual(edit["cost"]["usd"], priced(edit["usage"], row), places=12)
        total = cost["usd"] + edit["cost"]["usd"]
        self.assertAlmostEqual(self.paid(server, "c"), total, places=12)
        # Reverted and cleared versions stay paid for, and so does everything after a restart.
        structured(server.call_tool("reset_session", {"session_id": "c", "to_version": 1}))
        structured(server.call_tool("reset_session", {"session_id": "c"}))
        server.__exit__(None, None, None)
        server = self.start()
        self.assertAlmostEqual(self.paid(server, "c"), total, places=12)

    def test_the_local_backend_costs_nothing(self):
        server = self.start_imgmcp(backend="local", data_dir=self.data_dir)
        made = structured(self.call(server, "generate_image", session_id="l",
                                    prompt="solid teal"))
        self.assertEqual(made["cost"]["usd"], 0)
        self.assertEqual(self.paid(server, "l"), 0)

    def test_search_queries_are_priced_per_query(self):
        model = "gemini-nano-banana-2.1"
        server = self.start("--model", model)
        made = structured(self.call(server, "generate_image", session_id="g", search=True,
                                    prompt="today's weather in Lisbon as a poster"))
        self.assertGreaterEqual(made["cost"]["grounding_queries"], 1)
        self.assertAlmostEqual(made["cost"]["usd"],
                               priced(made["usage"], prices_of(model),
                                      made["cost"]["grounding_queries"]), places=12)


class CapsAndEstimates(CostTestCase):
    def test_estimate_only_calls_nothing_and_commits_nothing(self):
        server = self.start()
        before = len(self.fake.requests())
        resp = self.call(server, "generate_image", session_id="e", prompt="a red kite",
                         image_size="1K", estimate_only=True)
        est = structured(resp)
        self.assertTrue(est["estimate_only"])
        self.assertEqual(est["version"], 0)
        row = prices_of(MODEL)
        # The worst case holds at least the output image at its size's price.
        self.assertGreaterEqual(est["estimate"]["usd"],
                                row["output_image_tokens"]["1K"]
                                * row["prices_usd_per_million_tokens"]["output_image"] / 1e6)
        self.assertIn("Estimate only", resp["result"]["content"][0]["text"])
        self.assertEqual(len(self.fake.requests()), before)
        # The estimate bounds what the call then costs.
        made = structured(self.call(server, "generate_image", session_id="e", prompt="a red kite"))
        self.assertLessEqual(made["cost"]["usd"], est["estimate"]["usd"])
        self.assertEqual(made["version"], 1)

    def test_max_cost_usd_refuses_before_any_request(self):
        server = self.start()
        est = structured(self.call(server, "generate_image", session_id="m", prompt="a kite",
                                   estimate_only=True))["estimate"]["usd"]
        before = len(self.fake.requests())
        resp = self.call(server, "generate_image", session_id="m", prompt="a kite",
                         max_cost_usd=est / 2)
        message = error_text(resp)
        self.assertIn("max_cost_usd", message)
        self.assertIn("Nothing was sent", message)
        self.assertEqual(len(self.fake.requests()), before)
        resp = self.call(server, "generate_image", session_id="m", prompt="a kite",
                         max_cost_usd=-1)
        self.assertIn("'max_cost_usd' must be a number above 0", error_text(resp))
        made = structured(self.call(server, "generate_image", session_id="m", prompt="a kite",
                                    max_cost_usd=est))
        self.assertEqual(made["version"], 1)


class Budgets(CostTestCase):
    """Eight calls in flight against a budget with room for three of their estimates."""

    def estimate(self):
        server = self.start()
        est = structured(self.call(server, "generate_image", session_id="x", prompt="a kite",
                                   estimate_only=True))["estimate"]["usd"]
        server.__exit__(None, None, None)
        return est

    def run_eight(self, flag, sessions):
        budget = 3.5 * self.estimate()
        server = self.start(flag, repr(budget))
        self.fake.script(*([{"hold": "g"}] * 8))
        rids = []
        for session in sessions:
            rid = server.next_id()
            server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                         "params": {"name": "generate_image",
                                    "arguments": {"session_id": session, "prompt": "a kite",
                                                  "inline": "none"}}})
            rids.append(rid)
        # The refusals come back while the three admitted calls are held at the fake's gate.
        answers = {}
        for _ in range(5):
            msg = server.wait_for(lambda m: m.get("id") in rids and m["id"] not in answers,
                                  timeout=TIMEOUT)
            answers[msg["id"]] = msg
        self.fake.release("g")
        for rid in rids:
            if rid not in answers:
                answers[rid] = server.wait_for(lambda m, r=rid: m.get("id") == r, timeout=TIMEOUT)
        refused = [a for a in answers.values() if a["result"].get("isError")]
        made = [a for a in answers.values() if not a["result"].get("isError")]
        self.assertEqual((len(made), len(refused)), (3, 5), [error_text(a) for a in refused])
        for answer in refused:
            self.assertIn(flag, error_text(answer))
            self.assertIn("Nothing was sent", error_text(answer))
        self.assertEqual(len(self.fake.requests()), 3)
        return server

    def test_a_session_budget_runs_three_of_eight(self):
        server = self.run_eight("--budget-usd-per-session", ["b"] * 8)
        # Another session has a budget of its own.
        structured(self.call(server, "generate_image", session_id="other", prompt="a kite"))

    def test_a_daily_budget_runs_three_of_eight_sessions(self):
        server = self.run_eight("--budget-usd-per-day", [f"d{i}" for i in range(8)])
        # The three cost less than their estimates: later calls run until the day's spend leaves
        # no room for one more estimate.
        for i in range(5):
            resp = self.call(server, "generate_image", session_id=f"late{i}", prompt="a kite")
            if resp["result"].get("isError"):
                break
        self.assertIn("It resets at", error_text(resp))
        self.assertLess(i, 4)

    def test_a_budget_flag_takes_dollars_only(self):
        code, stderr = self.start_failing(["--budget-usd-per-day", "ten"])
        self.assertNotEqual(code, 0)
        self.assertIn("--budget-usd-per-day", stderr)
        self.assertIn("US dollars", stderr)

    def start_failing(self, args):
        from mcp_harness import ServerProcess
        server = ServerProcess(args=["--backend", "gemini", *args], env=self.gemini_env())
        self.addCleanup(server.__exit__, None, None, None)
        code = server.proc.wait(timeout=TIMEOUT)
        server.__exit__(None, None, None)
        return code, server.stderr


if __name__ == "__main__":
    unittest.main()
