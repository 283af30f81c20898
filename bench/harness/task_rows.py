"""T1: MCP Tasks (the io.modelcontextprotocol/tasks extension, mcp/task_runner.h) over
HTTP with MCP 2026-07-28 stateless requests, each on its own connection, the local backend.

- A task round trip: edit_image from a client that declares the extension (create, then tasks/get
  until the task is completed, whose result is the committed version) against the same edit from
  a client that does not (answered directly), alternating in one run on one process. Polled two
  ways: the next tasks/get as soon as the previous one answers (the protocol's own cost), and
  after the task's pollIntervalMs as a conforming client does (what a user waits).
- tasks/get latency of a finished task read from the store (its result rebuilt on every read):
  SQLite (a new process on the data dir of the one that ran it) and PostgreSQL (a second replica
  on the throwaway cluster P7-P9 use).
"""
import itertools
import os
import shutil
import statistics
import tempfile
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TASKS = "io.modelcontextprotocol/tasks"


def _support():
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))
    import replica_support  # noqa: E402  (Replica, ModernClient, pg_cluster)
    return replica_support


def _tasks_client_class(rs):
    class TasksClient(rs.ModernClient):
        """A modern client that declares the tasks extension in every request."""

        def _meta(self):
            meta = super()._meta()
            meta["io.modelcontextprotocol/clientCapabilities"] = {"extensions": {TASKS: {}}}
            return meta

        def _headers(self, method=None, params=None):
            h = super()._headers(method, params)
            if params and "taskId" in params:
                h["Mcp-Name"] = params["taskId"]
            return h

    return TasksClient


def _result(response, what):
    if "result" not in response:
        raise RuntimeError(f"{what}: {str(response)[:300]}")
    result = response["result"]
    if result.get("isError"):
        raise RuntimeError(f"{what}: {str(result)[:300]}")
    return result


def _pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def task_round_trip(tasks, session_id, prompt, honour_interval):
    """One edit as a task: (ms from the create request to the completed tasks/get, polls)."""
    t0 = time.perf_counter()
    created = _result(tasks.call_tool("edit_image", {"session_id": session_id, "prompt": prompt,
                                                      "inline": "none"}), "create")
    if created.get("resultType") != "task":
        raise RuntimeError(f"the edit was not answered with a task: {str(created)[:300]}")
    task, polls = created, 0
    while task["status"] not in ("completed", "failed", "cancelled"):
        if honour_interval:
            time.sleep(task.get("pollIntervalMs", 0) / 1000)
        task = _result(tasks.call("tasks/get", {"taskId": created["taskId"]}), "tasks/get")
        polls += 1
    ms = (time.perf_counter() - t0) * 1000
    result = task.get("result", {})
    if task["status"] != "completed" or result.get("isError") or "structuredContent" not in result:
        raise RuntimeError(f"task ended {task['status']}: {str(result or task)[-300:]}")
    return ms, polls


def measure_round_trips(rs, n, interval_n, tag):
    """Direct edits and task edits alternating on one session of one SQLite process."""
    server = None
    try:
        server = rs.Replica("sqlite", name=f"{tag}-t1")  # default log level: it reads the port
        plain = rs.ModernClient(server.port)
        tasks = _tasks_client_class(rs)(server.port)
        session = f"{tag}-rt"
        _result(plain.call_tool("generate_image", {"session_id": session, "prompt": "a square",
                                                   "inline": "none"}), "generate")
        direct, tight, tight_polls, paced, paced_polls = [], [], [], [], []
        # Every edit draws one small square (the local backend's edit; replica_support.py).
        prompts = (rs.draw_prompt(i) for i in itertools.count())
        task_round_trip(tasks, session, next(prompts), False)  # warm-up
        for _ in range(n):
            t0 = time.perf_counter()
            _result(plain.call_tool("edit_image", {"session_id": session, "prompt": next(prompts),
                                                   "inline": "none"}), "direct edit")
            direct.append((time.perf_counter() - t0) * 1000)
            ms, polls = task_round_trip(tasks, session, next(prompts), False)
            tight.append(ms)
            tight_polls.append(polls)
        for _ in range(interval_n):
            ms, polls = task_round_trip(tasks, session, next(prompts), True)
            paced.append(ms)
            paced_polls.append(polls)
        return {"direct": statistics.median(direct), "tight": statistics.median(tight),
                "tight_polls": statistics.median(tight_polls),
                "paced": statistics.median(paced), "paced_polls": statistics.median(paced_polls),
                "n": n, "interval_n": interval_n}
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}
    finally:
        if server is not None:
            server.close()


def _finished_task(tasks, session_id):
    """Creates a generate_image task and polls it to completed; returns its id."""
    created = _result(tasks.call_tool("generate_image", {
        "session_id": session_id, "prompt": "a square", "inline": "none"}), "create")
    task = created
    while task["status"] != "completed":
        if task["status"] in ("failed", "cancelled"):
            raise RuntimeError(f"task ended {task['status']}")
        task = _result(tasks.call("tasks/get", {"taskId": created["taskId"]}), "tasks/get")
    return created["taskId"]


def _read_latency(tasks, task_id, n):
    times = []
    for _ in range(n + 5):
        t0 = time.perf_counter()
        task = _result(tasks.call("tasks/get", {"taskId": task_id}), "tasks/get")
        times.append((time.perf_counter() - t0) * 1000)
        if task["status"] != "completed" or "result" not in task:
            raise RuntimeError(f"finished task read back as {str(task)[:200]}")
    times = times[5:]  # warm-up
    return {"p50": _pct(times, 50), "p95": _pct(times, 95), "n": n}


def measure_get_latency(rs, store, n, tag):
    """tasks/get of one finished task, n times, read from the store: on SQLite by a new process
    on the data dir of the one that ran it, on PostgreSQL by a second replica. (The process
    that ran a task answers from its own memory while it keeps the task.)"""
    from imgmcp_process import HttpProcess  # noqa: E402  (tests/support, on the path with rs)
    TasksClient = _tasks_client_class(rs)
    data_dir = tempfile.mkdtemp(prefix="imgmcp-bench-t1-") if store == "sqlite" else None
    servers = []

    def start(name):
        if store == "sqlite":
            servers.append(HttpProcess("--backend", "local", data_dir=data_dir, name=name))
        else:
            servers.append(rs.Replica(store, name=name))
        return servers[-1]

    try:
        runner = start(f"{tag}-run")
        task_id = _finished_task(TasksClient(runner.port), f"{tag}-get")
        if store == "sqlite":
            servers.remove(runner)
            runner.close()
        reader = start(f"{tag}-read")
        return _read_latency(TasksClient(reader.port), task_id, n)
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}
    finally:
        for server in servers:
            server.close()
        if data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)


def _ms(v):
    return f"{v:.1f} ms" if v < 100 else f"{v:.0f} ms"


def run_task_rows(args, want, rows, results, log):
    """T1 rows into `rows`; figures into `results` under ("T1", ...)."""
    if not want("T1"):
        return
    rs = _support()
    os.environ["IMGMCP_BIN"] = args.imgmcp
    n, interval_n, gets = (10, 3, 50) if args.quick else (40, 10, 300)
    what = "edit_image as a task (create + tasks/get polls + result) vs direct, local backend, HTTP"
    log("bench: T1 task round trip, SQLite")
    r = measure_round_trips(rs, n, interval_n, "t1")
    results[("T1", "round trip")] = r
    if "error" in r:
        rows.append(("T1", what, "imgmcp", "FAILED", "—", "—", r["error"][:300]))
    else:
        rows.append(("T1", what + ", next poll at once", "imgmcp",
                     f"median {_ms(r['tight'])} vs direct {_ms(r['direct'])} = "
                     f"{r['tight'] / r['direct']:.2f}×", "—", "—",
                     f"SQLite, 1 process, 2026-07-28; {r['n']} of each, alternating on one "
                     f"session; median {r['tight_polls']:.0f} tasks/get per task"))
        rows.append(("T1", what + ", polls at the task's pollIntervalMs", "imgmcp",
                     f"median {_ms(r['paced'])} vs direct {_ms(r['direct'])} = "
                     f"{r['paced'] / r['direct']:.1f}×", "—", "—",
                     f"as a conforming client waits (ext-tasks does); {r['interval_n']} tasks, "
                     f"median {r['paced_polls']:.0f} tasks/get per task"))
    log("bench: T1 tasks/get latency, SQLite and PostgreSQL")
    get_what = f"tasks/get of a finished task, read from the store ({gets} reads), HTTP"
    base = None
    pg = None
    try:
        for label, kind in (("SQLite; read by a new process on the data dir", "sqlite"),
                            ("PostgreSQL; created on one replica, read through another", "pg")):
            if kind == "pg":
                log("bench: starting PostgreSQL for T1")
                pg = rs.pg_cluster.PgCluster()
                store = pg.create_database("t1_get")
            else:
                store = "sqlite"
            g = measure_get_latency(rs, store, gets, f"t1-{kind}")
            results[("T1", label)] = g
            if "error" in g:
                rows.append(("T1", get_what, "imgmcp", "FAILED", "—", "—",
                             f"{label}: {g['error'][:300]}"))
                continue
            base = base or (g["p50"] if kind == "sqlite" else None)
            vs = "" if kind == "sqlite" or base is None else f" = {g['p50'] / base:.2f}× SQLite"
            rows.append(("T1", get_what, "imgmcp",
                         f"p50 {_ms(g['p50'])}{vs}, p95 {_ms(g['p95'])}", "—", "—", label))
    except Exception as e:  # noqa: BLE001  (PostgreSQL did not start)
        rows.append(("T1", get_what, "imgmcp", "FAILED", "—", "—", str(e)[:300]))
    finally:
        if pg is not None:
            pg.close()
