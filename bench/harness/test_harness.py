"""The benchmark harness itself, in CI: `run.py --quick` against the built imgmcp, fake_gemini
and the pinned npm peers must fill every row of the table and print every target line. It checks
that the harness works, never a number (benchmarks report; they do not fail on a figure).

Needs bench/node_modules (scripts/test runs `npm ci` in bench/): skipped without it, a failure
in CI (tests/support/skips.py)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(BENCH, "..", "tests", "support"))
from skips import require  # noqa: E402  (tests/support)

PEERS = ("text2image-mcp@2.4.0", "nano-banana-mcp@1.0.3", "mcp-image@0.14.0")


class QuickRun(unittest.TestCase):
    def test_every_row_is_filled_and_every_target_is_reported(self):
        require(os.path.isdir(os.path.join(BENCH, "node_modules", "text2image-mcp")),
                "bench/node_modules is not installed (npm ci in bench/)")
        out_dir = tempfile.mkdtemp(prefix="imgmcp-bench-test-")
        out = os.path.join(out_dir, "RESULTS.md")
        proc = subprocess.run(
            [sys.executable, os.path.join(HERE, "run.py"), "--quick",
             "--imgmcp", os.environ["IMGMCP_BIN"], "--fake-gemini", os.environ["FAKE_GEMINI_BIN"],
             "--chain-bench", os.environ.get("CHAIN_BENCH_BIN", ""), "--out", out],
            capture_output=True, text=True, timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        with open(out) as f:
            report = f.read()
        rows = [line.split("|")[1:-1] for line in report.splitlines()
                if re.match(r"\| [PRCTM]\d", line)]
        cells = {(r[0].strip(), r[2].strip()): r for r in rows}
        for row in rows:
            self.assertNotIn("FAILED", row[3], row)
            self.assertNotIn("pending", row[3], row)
        for server in ("imgmcp",) + PEERS:
            for row_id in ("P1", "P2", "P3", "P4"):
                self.assertIn((row_id, server), cells, f"{row_id} has no row for {server}")
        for row_id in ("P1-floor", "P1-fake", "P2-fake", "P5", "P6", "R1", "C1", "P7", "P8", "P9",
                       "T1", "M1", "M2", "M3", "M4"):
            self.assertTrue([k for k in cells if k[0] == row_id], f"no {row_id} row")
        self.assertIn(("P6", "text2image-mcp-remote@2.4.0"), cells)
        self.assertIn("CPU per call", cells[("P6", "imgmcp")][6])
        self.assertTrue([r for r in rows if r[0].strip() == "P6" and "--metrics off" in r[1]
                         and "metrics on ÷ off" in r[6]], "no P6 row with metrics off")
        self.assertTrue([r for r in rows if r[0].strip() == "P6" and "OAuth" in r[1]
                         and "OAuth ÷ none" in r[6]], "no P6 row with OAuth")
        self.assertIn("- P6 with OAuth", report)
        for target in ("P1 ≥ 20×", "P1 ≤ 3× the floor", "P2 ≥ 5×", "P3 ≤ 1/20", "P4 idle ≤ 1/8",
                       "P5 wall ≤ 1.3×", "P6 ≥ 10×"):
            self.assertIn("- " + target, report)
        for target in ("M2 (imgmcp, --max-inflight-mb 64)", "M3 (imgmcp, 4.3 MB imports)",
                       "M4 (imgmcp, 4.3 MB import tasks)", "M4 (imgmcp) a task row"):
            self.assertIn("- " + target, report)
        # The same table went to stdout.
        self.assertIn("| P1 |", proc.stdout)


class Merge(unittest.TestCase):
    """--only … --merge replaces just those rows and target lines, and says where they are from."""

    BEFORE = ("# imgmcp benchmarks\n\nOne run of everything.\n\n"
              "| row | what | server | result | imgmcp/peer | imgmcp/floor | notes |\n"
              "|---|---|---|---|---|---|---|\n| P1 | a | imgmcp | 1 | — | — | |\n"
              "| M2 | b | imgmcp | old | — | — | |\n| P9 | c | imgmcp | 9 | — | — | |\n\n"
              "Targets, as measured in this run:\n\n- P1 ≥ 20×: kept\n- M2 (imgmcp) old\n")
    LATER = ("# imgmcp benchmarks\n\nOne run of M2, M3.\n\n"
             "| row | what | server | result | imgmcp/peer | imgmcp/floor | notes |\n"
             "|---|---|---|---|---|---|---|\n| M2 | b | imgmcp | new | — | — | |\n"
             "| M3 | d | imgmcp | new | — | — | |\n\n"
             "Targets, as measured in this run:\n\n- M2 (imgmcp) new\n- M3 (imgmcp) new\n")

    def test_only_the_rows_run_again_are_replaced(self):
        sys.path.insert(0, HERE)
        from run import merged_results
        path = os.path.join(tempfile.mkdtemp(prefix="imgmcp-bench-merge-"), "RESULTS.md")
        with open(path, "w") as f:
            f.write(self.BEFORE)
        merged = merged_results(path, self.LATER, {"M2", "M3"}, "Rows M2, M3: a later run.")
        lines = merged.splitlines()
        self.assertEqual(lines[:5], ["# imgmcp benchmarks", "", "One run of everything.", "",
                                     "Rows M2, M3: a later run."])
        rows = [ln.split("|")[1].strip() + ":" + ln.split("|")[4].strip() for ln in lines
                if ln.startswith("| ") and not ln.startswith("| row")]
        self.assertEqual(rows, ["P1:1", "M2:new", "M3:new", "P9:9"])
        self.assertEqual([ln for ln in lines if ln.startswith("- ")],
                         ["- P1 ≥ 20×: kept", "- M2 (imgmcp) new", "- M3 (imgmcp) new"])
        # Merged again: one note, still the newest rows.
        with open(path, "w") as f:
            f.write(merged)
        again = merged_results(path, self.LATER.replace("new", "newer"), {"M2", "M3"},
                               "Rows M2, M3: a later run again.")
        self.assertEqual(again.count("Rows M2, M3:"), 1)
        self.assertIn("| M3 | d | imgmcp | newer |", again)
        self.assertNotIn("| M2 | b | imgmcp | new |", again)

    def test_a_new_row_goes_after_the_rows_of_its_letter(self):
        sys.path.insert(0, HERE)
        from run import merged_results
        path = os.path.join(tempfile.mkdtemp(prefix="imgmcp-bench-merge-"), "RESULTS.md")
        with open(path, "w") as f:
            f.write(self.BEFORE)
        later = self.LATER.replace("| M3 |", "| M4 |").replace("- M3 ", "- M4 ")
        merged = merged_results(path, later, {"M4"}, "Rows M4: a later run.")
        rows = [ln.split("|")[1].strip() + ":" + ln.split("|")[4].strip()
                for ln in merged.splitlines() if ln.startswith("| ") and not ln.startswith("| row")]
        self.assertEqual(rows, ["P1:1", "M2:old", "M4:new", "P9:9"])
        self.assertTrue(merged.endswith("- M2 (imgmcp) old\n- M4 (imgmcp) new\n"), merged)


if __name__ == "__main__":
    unittest.main()
