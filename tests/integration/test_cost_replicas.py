"""Budgets and the spend ledger across PostgreSQL replicas (README.md, "What it costs"): two real
imgmcp replicas on one database, their backend the Gemini fake, which holds every call at a gate.

- Eight calls at once, four through each replica, against a budget with room for three
  estimates — --budget-usd-per-day and --budget-usd-per-user-day with each call on a session
  of its own, and
  --budget-usd-per-session with all eight on one session: exactly three reach the fake (held
  there while the others are refused before any request, naming the budget), and the three
  complete, each costing the tokens the fake reported times the model table's prices.
- What a session paid for, committed through one replica, is read through the other
  (session_cost_usd), and each replica's /metrics counts the spend, tokens and refusals of the
  calls it answered (imgmcp_spend_usd_total, imgmcp_tokens_total,
  imgmcp_budget_refusals_total) — together, the eight calls.
"""
import itertools
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gemini_support import MODEL, TEST_KEY, FakeGemini  # noqa: E402
from replica_support import (ModernClient, Replica, pg_cluster, sample,  # noqa: E402
                             scrape_metrics, structured)
from test_cost import prices_of, priced  # noqa: E402

WAIT = 60.0
CLUSTER = pg_cluster.SharedCluster()
setUpModule, tearDownModule = CLUSTER.start, CLUSTER.close
_db_names = itertools.count(1)


def metric_sum(samples, name):
    return sum(v for (n, _), v in samples.items() if n == name)


class BudgetAcrossReplicas(unittest.TestCase):
    def setUp(self):
        self.fake = FakeGemini()
        self.addCleanup(self.fake.close)
        self.env = {"GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": self.fake.base_url}
        self.url = CLUSTER.create_database(f"cost{next(_db_names)}")

    def replica(self, *args, name):
        r = Replica(self.url, *args, env=self.env, name=name, backend="gemini")
        self.addCleanup(r.close)
        return r

    def test_a_daily_budget_across_two_replicas_runs_three_of_eight(self):
        self.run_eight("--budget-usd-per-day", [f"s{i}" for i in range(8)], "per_day")

    def test_a_session_budget_across_two_replicas_runs_three_of_eight(self):
        self.run_eight("--budget-usd-per-session", ["one"] * 8, "per_session")

    def test_a_persons_daily_budget_across_two_replicas_runs_three_of_eight(self):
        # Without OAuth everyone is the one local person: all eight calls are theirs.
        self.run_eight("--budget-usd-per-user-day", [f"u{i}" for i in range(8)], "per_user_day")

    def run_eight(self, flag, sessions, label):
        probe = self.replica(name="probe")
        estimate = structured(ModernClient(probe.port).call_tool(
            "generate_image", {"session_id": "probe", "prompt": "a kite", "inline": "none",
                               "estimate_only": True}))["estimate"]["usd"]
        probe.close()
        budget = [flag, repr(3.5 * estimate)]
        a, b = self.replica(*budget, name="a"), self.replica(*budget, name="b")
        self.fake.script(*([{"hold": "g"}] * 8))
        answers = {}
        answered = threading.Condition()

        def call(i):
            port = (a if i % 2 == 0 else b).port
            answer = ModernClient(port, timeout=WAIT).call_tool(
                "generate_image", {"session_id": sessions[i], "prompt": "a kite",
                                   "inline": "none"})
            with answered:
                answers[i] = answer
                answered.notify_all()

        threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        # One session's calls take turns: one of its three is at the gate at a time.
        self.fake.wait(held=3 if len(set(sessions)) > 1 else 1, timeout=WAIT)
        # The five refused answer while the three admitted calls are held at the gate.
        with answered:
            self.assertTrue(answered.wait_for(lambda: len(answers) >= 5, WAIT), answers)
        self.fake.release("g")
        for t in threads:
            t.join(WAIT)
        self.assertEqual(len(answers), 8)
        made = {i: r["result"]["structuredContent"] for i, r in answers.items()
                if not r["result"].get("isError")}
        refused = [r["result"]["content"][0]["text"] for r in answers.values()
                   if r["result"].get("isError")]
        self.assertEqual((len(made), len(refused)), (3, 5), refused)
        for text in refused:
            self.assertIn(flag, text)
            self.assertIn("Nothing was sent", text)
        self.assertEqual(len(self.fake.requests()), 3)
        row = prices_of(MODEL)
        for result in made.values():
            self.assertAlmostEqual(result["cost"]["usd"], priced(result["usage"], row),
                                   places=12)

        # What a session paid for, read through each replica: every call of it, whichever
        # replica made it.
        for session in set(sessions[i] for i in made):
            paid = sum(made[i]["cost"]["usd"] for i in made if sessions[i] == session)
            for r in (a, b):
                got = structured(ModernClient(r.port).call_tool(
                    "get_image", {"session_id": session, "inline": "none",
                                  "include_history": False}))
                self.assertAlmostEqual(got["session_cost_usd"], paid, places=12)

        # /metrics of both replicas: the spend, the tokens and the refusals of the eight calls.
        samples = [scrape_metrics(r.port) for r in (a, b)]
        spent = sum(sample(s, "imgmcp_spend_usd_total", model=MODEL) for s in samples)
        self.assertAlmostEqual(spent, sum(m["cost"]["usd"] for m in made.values()), places=9)
        image_tokens = sum(sample(s, "imgmcp_tokens_total", model=MODEL, kind="output_image")
                           for s in samples)
        self.assertEqual(image_tokens, sum(m["cost"]["output_image_tokens"]
                                           for m in made.values()))
        refusals = sum(sample(s, "imgmcp_budget_refusals_total", budget=label)
                       for s in samples)
        self.assertEqual(refusals, 5)


if __name__ == "__main__":
    unittest.main()
