"""A throwaway PostgreSQL cluster for tests and scripts/cluster.

initdb in a fresh temp dir, pg_ctl start with its unix socket in that dir and TCP on 127.0.0.1 at
a port drawn below the kernel's ephemeral range, drawn again when postgres reports it in use
(tests/support/ports.py: PostgreSQL cannot listen on port 0 and report the port). Run as root
(CI), the server runs as the `postgres` user, which owns the directory.
The cluster is stopped and the directory removed on every path:

  python3 pg_cluster.py serve [--fsync on|off]
      prints one JSON line ({"url", "admin_url", "port", "socket_dir", "data_dir", "bindir",
      "run_as"}) once the server accepts connections, then keeps it up until its stdin closes —
      the parent exited, however it exited — or SIGTERM/SIGINT arrives; then stops it (immediate
      mode) and removes the directory.

From Python, PgCluster runs exactly that as a child process (so a test killed with SIGKILL still
leaves nothing behind) and adds helpers: url(db), create_database(name), restart(mode), stop().
Standard library only.
"""
import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import AddressInUse, on_a_free_port  # noqa: E402  (tests/support)

SUPERUSER = "imgmcp"
DATABASE = "imgmcp"


def find_bindir():
    override = os.environ.get("IMGMCP_PG_BINDIR")
    if override:
        return override
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if not found:
        raise RuntimeError("PostgreSQL server binaries not found (Debian package postgresql; "
                           "or set IMGMCP_PG_BINDIR)")
    return os.path.dirname(found[-1])


def world_traversable(path):
    path = os.path.abspath(path)
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


class _Server:
    """Owns one cluster directory and its postmaster (used by `serve`)."""

    def __init__(self, fsync=True):
        self.bindir = find_bindir()
        self.run_as = None
        base = tempfile.gettempdir()
        if os.geteuid() == 0:
            self.run_as = pwd.getpwnam("postgres")
            if not world_traversable(base):
                base = "/tmp"  # the postgres user must reach the directory
        self.root = tempfile.mkdtemp(prefix="imgmcp-pg-", dir=base)
        self.data_dir = os.path.join(self.root, "data")
        self.socket_dir = os.path.join(self.root, "sock")
        self.log = os.path.join(self.root, "postgres.log")
        self.port = None
        self.fsync = fsync
        os.mkdir(self.socket_dir, 0o700)
        if self.run_as:
            for p in (self.root, self.socket_dir):
                os.chown(p, self.run_as.pw_uid, self.run_as.pw_gid)
            os.chmod(self.root, 0o711)  # the test (root) keeps reaching the socket and the log

    def _demote(self):
        if self.run_as:
            os.setgid(self.run_as.pw_gid)
            os.setuid(self.run_as.pw_uid)

    def run(self, *args, check=True, timeout=120):
        env = dict(os.environ, LC_ALL="C.UTF-8", PGTZ="UTC")
        env.pop("PGDATA", None)
        return subprocess.run([os.path.join(self.bindir, args[0]), *args[1:]], env=env,
                              preexec_fn=self._demote, check=check, timeout=timeout,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=self.root)

    def start(self):
        self.run("initdb", "-D", self.data_dir, "-U", SUPERUSER, "--auth=trust",
                 "--encoding=UTF8", "--no-instructions")
        with open(os.path.join(self.data_dir, "postgresql.conf"), "a") as conf:
            conf.write("\n# imgmcp tests\nlisten_addresses = '127.0.0.1'\n"
                       f"unix_socket_directories = '{self.socket_dir}'\n"
                       "max_connections = 300\nshared_buffers = 32MB\n"
                       # Stores must ask for durable commits themselves (tested).
                       "synchronous_commit = off\n"
                       f"fsync = {'on' if self.fsync else 'off'}\n"
                       "log_min_messages = warning\nlog_line_prefix = '%m [%p] '\n")
        self.port = on_a_free_port(self._start_on)
        self.run("createdb", "-h", self.socket_dir, "-p", str(self.port), "-U", SUPERUSER,
                 DATABASE)

    def _start_on(self, port):
        r = self.run("pg_ctl", "start", "-w", "-t", "60", "-D", self.data_dir, "-l", self.log,
                     "-o", f"-p {port}", check=False)
        if r.returncode == 0:
            return port
        said = r.stderr.decode(errors="replace") + self.log_tail()
        if "could not bind" in said or "already in use" in said:
            raise AddressInUse(said)
        raise RuntimeError("pg_ctl start failed:\n" + said)

    def log_tail(self, n=4000):
        try:
            with open(self.log, "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def info(self):
        return {"url": f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{DATABASE}",
                "admin_url": f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres",
                "port": self.port, "socket_dir": self.socket_dir, "data_dir": self.data_dir,
                "bindir": self.bindir, "log": self.log,
                "run_as": self.run_as.pw_name if self.run_as else None}

    def destroy(self):
        try:
            if os.path.exists(os.path.join(self.data_dir, "postmaster.pid")):
                self.run("pg_ctl", "stop", "-w", "-t", "60", "-m", "immediate", "-D",
                         self.data_dir, check=False)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def serve(fsync=True):
    server = _Server(fsync=fsync)
    done = threading.Event()

    def stop(*_):
        done.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGHUP, stop)
    try:
        server.start()
        sys.stdout.write(json.dumps(server.info()) + "\n")
        sys.stdout.flush()

        def watch_stdin():
            try:
                while sys.stdin.buffer.read(65536):
                    pass
            except OSError:
                pass
            done.set()

        threading.Thread(target=watch_stdin, daemon=True).start()
        while not done.wait(3600):
            pass
    except Exception as e:  # reported to the parent, which reads no JSON line
        sys.stderr.write(f"pg_cluster: {e}\n")
        return 1
    finally:
        server.destroy()
    return 0


class SharedCluster:
    """One PgCluster for a whole test module, started by its setUpModule and closed by its
    tearDownModule:

        CLUSTER = pg_cluster.SharedCluster()
        setUpModule, tearDownModule = CLUSTER.start, CLUSTER.close

    Its attributes are the running cluster's (CLUSTER.create_database(...)); before start() or
    after close() using one is an error."""

    def __init__(self):
        self._cluster = None

    def start(self):
        self._cluster = PgCluster()

    def close(self):
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def __getattr__(self, name):
        if self._cluster is None:
            raise RuntimeError("the module's PostgreSQL cluster is not running")
        return getattr(self._cluster, name)


class PgCluster:
    """A cluster owned by a `serve` child process (cleanup survives even SIGKILL of the caller)."""

    def __init__(self, fsync=True, timeout=180):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "serve", "--fsync",
             "on" if fsync else "off"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self._read_line(timeout)
        if not line:
            err = self.proc.stderr.read().decode(errors="replace")
            self.proc.wait(timeout=30)
            raise RuntimeError("the test PostgreSQL cluster did not start:\n" + err)
        self.info = json.loads(line)
        self.port = self.info["port"]
        self.socket_dir = self.info["socket_dir"]
        self.data_dir = self.info["data_dir"]
        self.bindir = self.info["bindir"]
        self.run_as = self.info["run_as"]

    def _read_line(self, timeout):
        out = []
        t = threading.Thread(target=lambda: out.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(timeout)
        return out[0].decode() if out else ""

    def url(self, database=DATABASE):
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _tool(self, *args, check=True, timeout=120):
        cmd = [os.path.join(self.bindir, args[0]), *args[1:]]
        if self.run_as and os.geteuid() == 0:
            user = pwd.getpwnam(self.run_as)

            def demote():
                os.setgid(user.pw_gid)
                os.setuid(user.pw_uid)
        else:
            demote = None
        return subprocess.run(cmd, check=check, timeout=timeout, preexec_fn=demote,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd="/")

    def psql(self, sql, database=DATABASE):
        """Runs sql; returns stdout (unaligned, tuples only)."""
        r = self._tool("psql", "-h", self.socket_dir, "-p", str(self.port), "-U", SUPERUSER,
                       "-d", database, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql)
        return r.stdout.decode()

    def create_database(self, name):
        self._tool("createdb", "-h", self.socket_dir, "-p", str(self.port), "-U", SUPERUSER, name)
        return self.url(name)

    def restart(self, mode="immediate"):
        """pg_ctl restart: the server goes away (immediate: like a crash) and comes back."""
        log = os.path.join(os.path.dirname(self.data_dir), "postgres.log")
        self._tool("pg_ctl", "restart", "-w", "-t", "60", "-m", mode, "-D", self.data_dir,
                   "-l", log, "-o", f"-p {self.port}")

    def stop_server(self, mode="immediate"):
        self._tool("pg_ctl", "stop", "-w", "-t", "60", "-m", mode, "-D", self.data_dir)

    def start_server(self):
        log = os.path.join(os.path.dirname(self.data_dir), "postgres.log")
        self._tool("pg_ctl", "start", "-w", "-t", "60", "-D", self.data_dir, "-l", log,
                   "-o", f"-p {self.port}")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        fsync = not ("--fsync" in sys.argv and sys.argv[sys.argv.index("--fsync") + 1] == "off")
        sys.exit(serve(fsync=fsync))
    sys.stderr.write(__doc__)
    sys.exit(2)
