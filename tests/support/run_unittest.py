"""Runs Python unittest modules as one ctest entry, from the folder that holds them:

    python3 tests/support/run_unittest.py MODULE...

as `python3 -m unittest -v MODULE...` would (the folder first on sys.path), then exits
  0   every test ran and passed;
  1   a test failed or erred, or none ran;
  77  none failed and at least one was skipped: the entries' SKIP_RETURN_CODE, so ctest shows
      the entry as skipped, never as passed (the skipped tests and their reasons are listed).
In CI a skip of a missing tool fails the test itself (skips.py), and scripts/test fails a stage
that skipped any entry (docs/design.md §7)."""
import os
import sys
import unittest

SKIPPED = 77


def main(modules):
    sys.path.insert(0, os.getcwd())
    run = unittest.main(module=None, argv=[sys.argv[0], "-v", *modules], exit=False)
    result = run.result
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        print(f"run_unittest: {len(result.skipped)} skipped "
              f"(exit {SKIPPED}: ctest lists the entry as skipped):", file=sys.stderr)
        for test, reason in result.skipped:
            print(f"  {test.id()}: {reason}", file=sys.stderr)
        return SKIPPED
    if result.testsRun == 0:
        print("run_unittest: no test ran", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
