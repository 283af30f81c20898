"""Opening the PostgreSQL store at start-up, against a real PostgreSQL the tests start: a database
that is down or not created yet is waited for (tool calls say why meanwhile, and work once it is
up, without a restart); what no retry heals — a wrong password, an unknown role, a bad sslmode —
stops start-up with a message that names the server and never the password; a one-connection pool
with idle expiry opens; a password on the command line draws a warning.
"""
import itertools
import os
import subprocess
import unittest

import replica_support
from mcp_harness import ServerProcess
from replica_support import pg_cluster, structured
from tools_support import error_text

CLUSTER = pg_cluster.SharedCluster()
setUpModule, tearDownModule = CLUSTER.start, CLUSTER.close
_db_names = itertools.count(1)
PASSWORD = "s3cret-Pw-9"
OPENED = "the session store is open"


def new_database():
    return CLUSTER.create_database(f"startup{next(_db_names)}")


def start_fails(test, url, *args, env=None):
    """imgmcp with `url` as its store exits 1 before answering anything; its stderr."""
    r = subprocess.run([replica_support.binary_path(), "--backend", "local", "--store", url,
                        *args], input=b"", capture_output=True, timeout=60,
                       env={**os.environ, **(env or {})})
    stderr = r.stderr.decode(errors="replace")
    test.assertEqual(r.returncode, 1, stderr)
    test.assertNotIn(PASSWORD, stderr)
    test.assertEqual(r.stdout, b"")
    return stderr


class UnreachableAtStartTest(unittest.TestCase):
    def test_a_database_that_comes_up_later_is_used_without_a_restart(self):
        url = new_database()
        CLUSTER.stop_server()
        try:
            with ServerProcess(args=["--backend", "local", "--store", url]) as server:
                server.initialize()
                waiting = error_text(server.call_tool(
                    "generate_image", {"prompt": "solid red", "session_id": "later"}, timeout=60))
                self.assertIn("not open yet", waiting)
                self.assertIn("retrying", waiting)
                self.assertIn("PostgreSQL at 127.0.0.1:", waiting)
                CLUSTER.start_server()
                server.wait_for_stderr(OPENED, timeout=60)
                made = structured(server.call_tool(
                    "generate_image", {"prompt": "solid red", "session_id": "later"}))
                self.assertEqual(made["version"], 1)
                server.close_stdin()
                self.assertEqual(server.wait_exit(), 0)
        finally:
            try:
                CLUSTER.start_server()  # after a failure part-way; refused when it is up
            except subprocess.CalledProcessError:
                pass

    def test_a_database_created_later_is_used_without_a_restart(self):
        name = f"later{next(_db_names)}"
        url = CLUSTER.url(name)
        with ServerProcess(args=["--backend", "local", "--store", url]) as server:
            server.initialize()
            waiting = error_text(server.call_tool(
                "get_image", {"session_id": "s"}, timeout=60))
            self.assertIn(f'database "{name}" does not exist', waiting)
            CLUSTER.create_database(name)
            server.wait_for_stderr(OPENED, timeout=60)
            made = structured(server.call_tool("generate_image", {"prompt": "solid blue",
                                                                  "session_id": "s"}))
            self.assertEqual(made["version"], 1)


class WhatNoRetryHealsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A role that must give a password over TCP (the cluster trusts everyone else).
        CLUSTER.psql(f"CREATE ROLE pwuser LOGIN PASSWORD '{PASSWORD}'")
        CLUSTER.psql("CREATE DATABASE pwdb OWNER pwuser")
        hba = os.path.join(CLUSTER.data_dir, "pg_hba.conf")
        with open(hba) as f:
            rules = f.read()
        with open(hba, "w") as f:
            f.write("host all pwuser 127.0.0.1/32 scram-sha-256\n" + rules)
        CLUSTER.psql("SELECT pg_reload_conf()")

    def test_a_wrong_password_stops_start_up_and_is_never_printed(self):
        url = f"postgresql://pwuser:{PASSWORD}-wrong@127.0.0.1:{CLUSTER.port}/pwdb"
        stderr = start_fails(self, url, env={"PGPASSWORD": ""})
        self.assertIn("password authentication failed", stderr)
        self.assertIn(f"PostgreSQL at 127.0.0.1:{CLUSTER.port}/pwdb", stderr)

    def test_the_right_password_from_the_environment_opens(self):
        url = f"postgresql://pwuser:{PASSWORD}@127.0.0.1:{CLUSTER.port}/pwdb"
        with ServerProcess(args=["--backend", "local"], env={"IMGMCP_STORE": url}) as server:
            server.initialize()
            structured(server.call_tool("generate_image", {"prompt": "solid red",
                                                           "session_id": "pw"}))
            self.assertNotIn("command line", server.stderr)  # no warning: not in argv
        self.assertNotIn(PASSWORD, server.stderr)

    def test_an_unknown_role_stops_start_up(self):
        stderr = start_fails(self, f"postgresql://nosuchrole@127.0.0.1:{CLUSTER.port}/imgmcp")
        self.assertIn('role "nosuchrole" does not exist', stderr)

    def test_a_bad_sslmode_stops_start_up(self):
        stderr = start_fails(self, CLUSTER.url() + "?sslmode=sometimes")
        self.assertIn("sslmode", stderr)


class PasswordOnTheCommandLineTest(unittest.TestCase):
    def test_a_password_in_store_draws_a_warning_naming_the_safe_places(self):
        url = f"postgresql://imgmcp:{PASSWORD}@127.0.0.1:{CLUSTER.port}/imgmcp"
        with ServerProcess(args=["--backend", "local", "--store", url]) as server:
            server.initialize()
            server.wait_for_stderr("IMGMCP_STORE", timeout=30)
            self.assertIn("/proc/PID/cmdline", server.stderr)
            self.assertIn("~/.pgpass", server.stderr)
        self.assertNotIn(PASSWORD, server.stderr)


class SmallPoolWithExpiryTest(unittest.TestCase):
    def test_one_connection_and_idle_days_open_and_expire(self):
        url = new_database()
        with ServerProcess(args=["--backend", "local", "--store", url]) as first:
            first.initialize()
            structured(first.call_tool("generate_image", {"prompt": "solid red",
                                                          "session_id": "old"}))
        # The session was last used long ago.
        CLUSTER.psql("UPDATE imgmcp.sessions SET updated_ms = 0", database=url.rsplit("/", 1)[1])
        with ServerProcess(args=["--backend", "local", "--store", url, "--store-pool", "1",
                                 "--idle-days", "1"]) as second:
            second.initialize()
            made = structured(second.call_tool("generate_image", {"prompt": "solid blue",
                                                                  "session_id": "new"}))
            self.assertEqual(made["version"], 1)
            gone = error_text(second.call_tool("get_image", {"session_id": "old"}))
            self.assertIn("unknown session", gone)
            second.close_stdin()
            self.assertEqual(second.wait_exit(), 0)


if __name__ == "__main__":
    unittest.main()
