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
                if re.match(r"\| [PRCT]\d", line)]
        cells = {(r[0].strip(), r[2].strip()): r for r in rows}
        for row in rows:
            self.assertNotIn("FAILED", row[3], row)
            self.assertNotIn("pending", row[3], row)
        for server in ("imgmcp",) + PEERS:
            for row_id in ("P1", "P2", "P3", "P4"):
                self.assertIn((row_id, server), cells, f"{row_id} has no row for {server}")
        for row_id in ("P1-floor", "P1-fake", "P2-fake", "P5", "P6", "R1", "C1", "P7", "P8", "P9",
                       "T1"):
            self.assertTrue([k for k in cells if k[0] == row_id], f"no {row_id} row")
        self.assertIn(("P6", "text2image-mcp-remote@2.4.0"), cells)
        self.assertIn("CPU per call", cells[("P6", "imgmcp")][6])
        self.assertTrue([r for r in rows if r[0].strip() == "P6" and "--metrics off" in r[1]
                         and "metrics on ÷ off" in r[6]], "no P6 row with metrics off")
        for target in ("P1 ≥ 20×", "P1 ≤ 3× the floor", "P2 ≥ 5×", "P3 ≤ 1/20", "P4 idle ≤ 1/8",
                       "P5 wall ≤ 1.3×", "P6 ≥ 10×"):
            self.assertIn("- " + target, report)
        # The same table went to stdout.
        self.assertIn("| P1 |", proc.stdout)


if __name__ == "__main__":
    unittest.main()
