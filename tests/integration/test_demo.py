"""The README's first command runs demo/run_demo.py; it must pass its own checks and write the
report and contact sheet."""
import os
import re
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
        # The generation-parameters part ran on the Gemini fake (no key): 2K, and a chain whose
        # replayed signatures the fake verified.
        self.assertIn("on the Gemini fake", report)
        self.assertIn("- [x] the 2K 16:9 generation is 2688x1536 (about 4 MP)", report)
        self.assertIn("- [x] the chained edit replayed version 1's turn", report)
        self.assertIn("- [x] the fake verified every replayed signature", report)
        self.assertNotIn("- [ ]", report)
        sheet = pngio.decode_png(open(os.path.join(out, "contact_sheet.png"), "rb").read())
        width, height, _, _ = sheet
        # 7 columns of 192 px tiles and 8 px gaps; each row has a 24 px caption band.
        self.assertEqual((width, height), (7 * 200 + 8, 3 * (200 + 24) + 8))
        # Every tile is captioned "v<N> <operation>": white version digits, coloured operation.
        for n in range(21):
            x0, y0 = 8 + (n % 7) * 200, 8 + (n // 7) * 224 + 192
            band = [pngio.pixel(sheet, x, y) for y in range(y0, y0 + 24) for x in range(x0, x0 + 192)]
            self.assertIn((245, 245, 245), band, f"tile {n + 1} has its version written under it")
            colour = (169, 155, 255) if n == 0 else (122, 180, 255)  # generate, then edits
            self.assertIn(colour, band, f"tile {n + 1} has its operation written under it")

    def test_demo_over_http_prints_the_gallery_url(self):
        out = tempfile.mkdtemp(prefix="imgmcp-demo-test-")
        self.addCleanup(shutil.rmtree, out, True)
        env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "IMGMCP_AUTH_TOKEN")}
        run = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "demo", "run_demo.py"),
                              "--binary", os.environ["IMGMCP_BIN"], "--out", out,
                              "--http", "127.0.0.1:0", "--exit-when-done"],
                             env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        urls = re.findall(r"Gallery: (http://127\.0\.0\.1:\d+/gallery)", run.stdout)
        self.assertEqual(len(urls), 2, run.stdout)  # once at the start, once at the end
        self.assertEqual(urls[0], urls[1])
        report = open(os.path.join(out, "report.md")).read()
        self.assertIn("- [x] history is versions 1..21", report)
        self.assertIn("- [x] every one of the 20 squares is in the final image", report)
        self.assertNotIn("- [ ]", report)


if __name__ == "__main__":
    unittest.main()
