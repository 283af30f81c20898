"""The README's first command runs demo/run_demo.py; it must pass its own checks and write the
report and contact sheet."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "demo"))
import pngio  # noqa: E402


class Demo(unittest.TestCase):
    def test_demo_runs_offline_and_writes_report_and_contact_sheet(self):
        out = tempfile.mkdtemp(prefix="imgmcp-demo-test-")
        self.addCleanup(shutil.rmtree, out, True)
        env = {k: v for k, v in os.environ.items() if k != "GEMINI_API_KEY"}
        run = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "demo", "run_demo.py"),
                              "--binary", os.environ["IMGMCP_BIN"], "--out", out],
                             env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        report = open(os.path.join(out, "report.md")).read()
        self.assertIn("- [x] history is versions 1..21", report)
        self.assertIn("- [x] every one of the 20 squares is in the final image", report)
        self.assertNotIn("- [ ]", report)
        width, height, _, _ = pngio.decode_png(open(os.path.join(out, "contact_sheet.png"), "rb").read())
        self.assertEqual((width, height), (7 * 200 + 8, 3 * 200 + 8))


if __name__ == "__main__":
    unittest.main()
