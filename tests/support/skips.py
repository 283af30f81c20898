"""When a Python test cannot run here: the one rule (docs/design.md §7), standard library only.

A test that needs something this machine lacks calls one of these first (in the test, setUp or
setUpClass). Outside CI it is skipped, with a reason that names what is missing; in CI (CI=true
in the environment, as .ci/run has it) it fails instead, because CI runs scripts/setup and as
root, so there a missing tool or ability is a defect of the machine, never a reason to pass.

- require_tool(name, package): the path of `name` on PATH (shutil.which, nothing else).
- require(condition, reason): a condition of the machine (root, ptrace, a tmpfs mount, the build
  tree ctest names) that CI always meets.
- in_ci(): whether this run is CI.

A skipped test does not pass quietly: run_unittest.py exits 77 when any test of its module was
skipped, and every Python ctest entry has SKIP_RETURN_CODE 77, so ctest lists it as skipped.

Import it with tests/support on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
"""
import os
import shutil
import unittest


def in_ci():
    return os.environ.get("CI", "").lower() in ("true", "1")


def require(condition, reason):
    """Returns when `condition` holds; otherwise skips the test, or fails it in CI."""
    if condition:
        return
    if in_ci():
        raise AssertionError(f"{reason} — in CI (CI=true) this fails instead of skipping: "
                             "scripts/setup and root provide it there")
    raise unittest.SkipTest(reason)


def require_tool(name, package=None):
    """The path of the program `name` on PATH; a skip (a failure in CI) without it."""
    path = shutil.which(name)
    require(path is not None,
            f"{name} is not on PATH (Debian package {package or name}; scripts/setup installs it)")
    return path
