"""Running an experiment's runs: one process per run, locally or on a Dask cluster, resumable.

::

    from ibfabric.experiment import Experiment
    from ibfabric.sweep import Sweep

    sweep = Sweep(Experiment.from_file("loads.toml"), "results/loads")
    report = sweep.run(jobs=2)                  # or dask="local", dask="tcp://scheduler:8786"
    print(report.done, report.failed, report.skipped)

Layout of the output directory::

    OUT/runs/<run_id>/run.json        the run's identity and outcome (status ok, deadlock or failed; error)
    OUT/runs/<run_id>/summary.json    the result set (absent for a failed run), see ibfabric.results
    OUT/runs/<run_id>/scalars.csv
    OUT/runs/<run_id>/results.sca
    OUT/runs/<run_id>/manifest.json   each file's SHA-256, written last

A run's directory is written in a temporary directory and renamed into
place, so it is complete or absent: a sweep killed at any moment (even with
``kill -9``) and started again runs exactly the runs that have no directory.
A run's id hashes its full configuration, so the same run is never run
twice, even from two experiment files.  A run that fails (a deadlock, a bad
parameter, a crash of its process) is recorded with its error and does not
stop the sweep; ``retry_failed=True`` runs the failed ones again.

The result files are made where the run ran and written by the process
that drives the sweep, so a Dask cluster needs no shared file system for
results (topology *files* must exist at the same path on the workers;
generated and shipped topologies need nothing).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

from ibfabric.checks import IbfabricWarning
from ibfabric.errors import ConfigError, DeadlockError, IbfabricError
from ibfabric.versions import changed, versions

__all__ = ["Sweep", "SweepReport", "execute", "Outcome"]

#: Modules a fresh run process needs: imported once by the fork server, not per run.
PRELOAD = ["ibfabric.sweep", "ibfabric.simulation", "ibfabric.results", "ibfabric.experiment"]


@attrs.frozen
class Outcome:
    """What one run produced: its record (``run.json``) and its result files."""

    run_id: str
    record: dict
    files: dict

    @property
    def status(self) -> str:
        """The record's ``status``: ``ok``, ``deadlock`` or ``failed``."""
        return self.record["status"]


def execute(spec) -> Outcome:
    """Run *spec* (a :class:`~ibfabric.runspec.RunSpec`) in this process and return its outcome.

    Never raises for a failure of the run itself: a user error, a deadlock or
    an internal error becomes the record's ``status`` and ``error``.
    """
    t0 = time.perf_counter()
    record: dict[str, Any] = {
        "run_id": spec.run_id,
        "experiment": spec.experiment,
        "status": "ok",
        "error": None,
        "vars": dict(spec.vars),
        "repetition": spec.repetition,
        "seed": spec.seed,
        "config": spec.config(),
        "versions": versions(),
    }
    files: dict[str, str] = {}
    with warnings.catch_warnings():  # they are in the run's summary.json ('warnings')
        warnings.simplefilter("ignore", IbfabricWarning)
        return _execute(spec, record, files, t0)


def _execute(spec, record: dict, files: dict, t0: float) -> Outcome:
    from ibfabric.results import result_files, to_json

    try:
        sim = spec.simulation()
        try:
            summary = sim.run(spec.time)
        except DeadlockError as exc:
            summary = sim.summary()
            record["status"], record["error"] = "deadlock", f"deadlock: {exc}"
        if (summary.get("workload") or {}).get("error"):  # a schedule that waits forever
            record["status"], record["error"] = "failed", summary["workload"]["error"]
        files = result_files(sim, summary, {
            "run_id": spec.run_id, "configname": spec.experiment, "iterationvars": spec.iterationvars,
            "repetition": spec.repetition, "vars": dict(spec.vars)})
    except IbfabricError as exc:
        record["status"], record["error"] = "failed", str(exc)
    except Exception as exc:  # an internal error: recorded with its type, the sweep goes on
        record["status"], record["error"] = "failed", f"internal error: {type(exc).__name__}: {exc}"
    record["wall_s"] = time.perf_counter() - t0
    files["run.json"] = to_json(record) + "\n"
    return Outcome(spec.run_id, record, files)


def _execute_in_child(spec) -> Outcome:
    return execute(spec)


def _die_with(sweep_pid: int) -> None:
    """Initialiser of a run process: end it when the sweep that started it is gone, however it died.

    A run process is forked from the fork server, not from the sweep, and holds pipes that keep the
    fork server (and through it the resource tracker) alive: if the sweep is killed with SIGKILL,
    a process blocked on one of them would wait forever.  On Linux the process gets SIGKILL when its
    parent, the fork server, dies (``prctl(PR_SET_PDEATHSIG)``); everywhere a daemon thread looks
    four times a second whether the sweep still runs and ends the process when it does not.  With
    every run process gone, the fork server reads the end of its last pipe and exits, and then the
    resource tracker does too.
    """
    import threading

    _parent_death_signal()
    server = os.getppid()

    def watch() -> None:
        while os.getppid() == server and _alive(sweep_pid):
            time.sleep(0.25)
        os._exit(1)

    threading.Thread(target=watch, name="ibfabric-sweep-lifeline", daemon=True).start()


def _parent_death_signal() -> None:
    """Ask Linux to send this process SIGKILL when its parent dies (nothing elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _alive(pid: int) -> bool:
    """Whether process *pid* exists and is not a zombie (dead, waiting for its parent to reap it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (macOS): the signal check above is all there is
    return state not in (b"Z", b"X")


@attrs.define
class SweepReport:
    """Counts of one :meth:`Sweep.run`: runs done now (by status), skipped (already there), runs found stale
    (made with other versions: :func:`ibfabric.versions.changed`), and the wall time."""

    total: int = 0
    skipped: int = 0
    done: int = 0
    failed: int = 0
    deadlocked: int = 0
    stale: int = 0  # finished runs made with other versions, run again
    kept_stale: int = 0  # the same, kept (reuse_stale=True): among the skipped
    wall_s: float = 0.0
    errors: list = attrs.field(factory=list)  # (run_id, error)


class Sweep:
    """The runs of an experiment and the output directory that holds their results.

    Parameters
    ----------
    experiment : Experiment
    out_dir : path
        Created if missing; runs already in it are not run again.
    """

    def __init__(self, experiment, out_dir: str | os.PathLike):
        self.experiment = experiment
        self.out = Path(out_dir)
        self.runs_dir = self.out / "runs"

    # ------------------------------------------------------------ the store

    def record(self, run_id: str) -> dict | None:
        """The ``run.json`` of a finished run (None if it has not run)."""
        try:
            return json.loads((self.runs_dir / run_id / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def summary(self, run_id: str) -> dict | None:
        """The ``summary.json`` of a finished run (None if it has none)."""
        try:
            return json.loads((self.runs_dir / run_id / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def status(self, run_id: str) -> tuple[str, str | None]:
        """``(status, why stale)`` of a run: ``'to run'`` or its record's status, and, for a finished
        run made with other versions of ibfabric or its plugins, what differs (else None)."""
        rec = self.record(run_id)
        if rec is None:
            return "to run", None
        return rec.get("status", "failed"), changed(rec.get("versions"))

    def pending(self, specs: Iterable, retry_failed: bool = False, reuse_stale: bool = False) -> list:
        """The runs among *specs* still to run, each once, in order: those without a record, failed ones
        with *retry_failed*, and stale ones (made with other versions) unless *reuse_stale*."""
        return self._pending(specs, retry_failed, reuse_stale)[0]

    def _pending(self, specs: Iterable, retry_failed: bool, reuse_stale: bool) -> tuple[list, int, int]:
        """``(runs to run, how many of them are stale, stale runs kept)``."""
        out, seen, stale, kept = [], set(), 0, 0
        for spec in specs:
            rid = spec.run_id
            if rid in seen:
                continue
            seen.add(rid)
            status, why = self.status(rid)
            if status == "to run" or (retry_failed and status == "failed"):
                out.append(spec)
            elif why is not None and reuse_stale:
                kept += 1
            elif why is not None:
                out.append(spec)
                stale += 1
        return out, stale, kept

    def store(self, outcome: Outcome) -> None:
        """Write a run's directory, complete or not at all (it replaces a failed record)."""
        from ibfabric.results import write_result_set

        target = self.runs_dir / outcome.run_id
        if target.exists():  # a failed run retried: move the old record away, then replace it
            trash = self.runs_dir / f".old-{outcome.run_id}-{os.getpid()}"
            os.rename(target, trash)
            shutil.rmtree(trash, ignore_errors=True)
        write_result_set(target, outcome.files)

    def _prepare(self) -> None:
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{self.out}: cannot create the output directory ({exc.strerror})") from None
        if not os.access(self.runs_dir, os.W_OK | os.X_OK):
            raise ConfigError(f"{self.runs_dir}: not writable")
        for p in self.runs_dir.iterdir():  # left by a sweep that was killed while writing
            if p.name.startswith("."):
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)

    def _lock(self):
        import fcntl

        f = open(self.out / ".lock", "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise ConfigError(f"{self.out}: another sweep is writing into this directory") from None
        return f

    # ------------------------------------------------------------ running

    def run(
        self,
        specs: Iterable | None = None,
        *,
        jobs: int = 1,
        dask: str | None = None,
        retry_failed: bool = False,
        reuse_stale: bool = False,
        progress: Callable[[Outcome, SweepReport], None] | None = None,
    ) -> SweepReport:
        """Run what is missing of *specs* (default: every run of the experiment).

        A finished run made with other versions of ibfabric or its plugins is stale: it runs again,
        unless *reuse_stale* keeps it (counted in ``kept_stale``).

        ``jobs`` processes at a time (one process per run), or on a Dask
        cluster: ``dask='local'`` starts a ``LocalCluster`` of ``jobs``
        single-threaded worker processes, any other value is a scheduler
        address.  *progress* is called after each run.  Every run is checked first
        (:meth:`Experiment.check <ibfabric.experiment.Experiment.check>`): a run that would not
        build is an :class:`~ibfabric.runspec.ExperimentError` and nothing runs.
        """
        if jobs < 1:
            raise ConfigError(f"--jobs must be at least 1 (got {jobs})")
        specs = list(self.experiment.runs() if specs is None else specs)
        self.experiment.check(specs)  # every run builds, or nothing runs (ibfabric.runcheck)
        self._prepare()
        lock = self._lock()
        try:
            todo, stale, kept = self._pending(specs, retry_failed, reuse_stale)
            report = SweepReport(total=len({s.run_id for s in specs}), stale=stale, kept_stale=kept)
            report.skipped = report.total - len(todo)
            t0 = time.perf_counter()

            def finished(outcome: Outcome) -> None:
                self.store(outcome)
                report.done += 1
                if outcome.status == "failed":
                    report.failed += 1
                    report.errors.append((outcome.run_id, outcome.record["error"]))
                elif outcome.status == "deadlock":
                    report.deadlocked += 1
                if progress is not None:
                    progress(outcome, report)

            if todo:
                if dask:
                    _run_dask(todo, dask, jobs, finished)
                else:
                    _run_local(todo, jobs, finished)
            report.wall_s = time.perf_counter() - t0
            return report
        finally:
            lock.close()


def _crashed(spec, error: str) -> Outcome:
    from ibfabric.results import to_json

    record = {"run_id": spec.run_id, "experiment": spec.experiment, "status": "failed", "error": error,
              "vars": dict(spec.vars), "repetition": spec.repetition, "seed": spec.seed,
              "config": spec.config(), "versions": versions(), "wall_s": None}
    return Outcome(spec.run_id, record, {"run.json": to_json(record) + "\n"})


def _run_local(todo: list, jobs: int, finished: Callable[[Outcome], None]) -> None:
    """Every run in a fresh process forked from a server that has imported ibfabric once."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    queue = list(reversed(todo))
    while queue:
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, max_tasks_per_child=1,
                                   initializer=_die_with, initargs=(os.getpid(),))
        running: dict = {}
        broken = False
        try:
            while (queue or running) and not broken:
                while queue and len(running) < jobs:
                    spec = queue.pop()
                    running[pool.submit(_execute_in_child, spec)] = spec
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    spec = running.pop(fut)
                    try:
                        outcome = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        outcome = _crashed(spec, "its process died (killed, or out of memory)")
                    finished(outcome)
            if broken:  # the pool is gone with the runs that were in it: they are recorded as failed
                for spec in running.values():
                    finished(_crashed(spec, "its process died with another run's (killed, or out of memory)"))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _run_dask(todo: list, address: str, jobs: int, finished: Callable[[Outcome], None]) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError("--dask needs dask.distributed: pip install 'ibfabric[dask]'") from None
    cluster = None
    try:
        if address == "local":
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        else:
            try:
                client = Client(address, timeout="20s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise ConfigError(f"--dask {address}: cannot reach the scheduler ({exc})") from None
        with client:
            futures = {client.submit(execute, spec, key=f"ibfabric-run-{spec.run_id}", pure=False): spec
                       for spec in todo}
            for fut in as_completed(futures):
                spec = futures[fut]
                try:
                    outcome = fut.result()
                except Exception as exc:  # the worker died or the task could not run
                    outcome = _crashed(spec, f"dask: {type(exc).__name__}: {exc}")
                finished(outcome)
    finally:
        if cluster is not None:
            cluster.close()


def plain_progress(stream=sys.stdout) -> Callable[[Outcome, SweepReport], None]:
    """A progress callback printing one line per run (for logs and pipes)."""

    def show(outcome: Outcome, report: SweepReport) -> None:
        todo = report.total - report.skipped
        rec = outcome.record
        where = ", ".join(f"{k}={v}" for k, v in rec["vars"].items())
        extra = f": {rec['error']}" if rec["status"] != "ok" else ""
        wall = f" ({rec['wall_s']:.1f} s)" if rec.get("wall_s") is not None else ""
        print(f"[{report.done}/{todo}] {rec['status']} {outcome.run_id} {where} rep {rec['repetition']}{wall}{extra}",
              file=stream, flush=True)

    return show
