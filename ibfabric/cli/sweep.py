"""``ibfabric sweep``: run every point of an experiment file, resumably, locally or on Dask."""

from __future__ import annotations

import sys
from pathlib import Path

from ibfabric.cli import add_huge_pages
from ibfabric.errors import ConfigError


def add_parser(sub):
    p = sub.add_parser(
        "sweep",
        help="run every point of an experiment file (resumable; local processes or a Dask cluster)",
        description=(
            "Run every run of EXPERIMENT (a TOML experiment file: topology, parameters, iteration variables,"
            " repetitions), one process per run. Results go to OUT/runs/<run id>/; runs already there are"
            " skipped, so a sweep that stopped resumes where it was. Collect them with 'ibfabric results OUT'."
        ),
    )
    p.add_argument("experiment", metavar="EXPERIMENT")
    add_common(p)
    p.add_argument("--dry-run", action="store_true",
                   help="list the runs (and which are done) without running, then count them: to do, done, and the"
                   " other results in OUT/runs (saturation probes, runs of an earlier version of the file)")
    return p


def add_common(p) -> None:
    p.add_argument("--out", metavar="DIR", help="output directory (default: results/<experiment name>)")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="runs at a time (default 1)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run on a dask.distributed cluster: a scheduler address (tcp://host:8786) or 'local'"
                        " for a LocalCluster of --jobs workers")
    p.add_argument("--retry-failed", action="store_true", help="run failed runs again")
    p.add_argument("--reuse-stale", action="store_true",
                   help="keep finished runs made with other versions of ibfabric or its plugins (by default they"
                        " run again)")
    p.add_argument("--no-progress", action="store_true", help="print one line per run instead of a progress bar")
    add_huge_pages(p)  # (the runs' local processes inherit it; a remote Dask cluster's workers do not)


def out_dir(args, experiment) -> Path:
    return Path(args.out) if args.out else Path("results") / experiment.name


def run(args) -> int:
    from ibfabric.experiment import Experiment
    from ibfabric.sweep import Sweep

    exp = Experiment.from_file(args.experiment)
    sweep = Sweep(exp, out_dir(args, exp))
    specs = exp.runs()
    exp.check(specs)  # every run builds (not simulated), or nothing runs: one located line
    if args.dry_run:
        dry_run(sweep, specs, args.retry_failed, args.reuse_stale)
        return 0
    report = run_with_progress(sweep, specs, args)
    print(report_line(report, sweep), file=sys.stderr)
    for rid, err in report.errors:
        print(f"  {rid}: {err}", file=sys.stderr)
    return 1 if report.failed else 0


def report_line(report, sweep) -> str:
    """The line a sweep ends with: what ran, what was there, what was stale."""
    from ibfabric.wording import counted

    stale = ""
    if report.stale:
        stale = f", {report.stale} of them stale (made with other versions)"
    kept = ""
    if report.kept_stale:
        kept = f" ({report.kept_stale} made with other versions, kept: --reuse-stale)"
    return (f"{counted(report.total, 'run')}: {report.done} run now ({report.failed} failed, {report.deadlocked}"
            f" deadlocked{stale}), {report.skipped} already done{kept}; {report.wall_s:.1f} s; results in {sweep.out}")


def dry_run(sweep, specs, retry_failed: bool, reuse_stale: bool) -> None:
    """List every run and its status (stdout), then one line of counts (stderr, as a sweep's own)."""
    from ibfabric.wording import counted

    statuses: dict[str, str] = {}
    todo = failed = stale = 0
    for spec in specs:
        if spec.run_id in statuses:
            continue
        status, why = sweep.status(spec.run_id)
        statuses[spec.run_id] = status
        if status == "to run" or (retry_failed and status == "failed") or (why is not None and not reuse_stale):
            todo += 1
        failed += status == "failed"
        if why is not None:
            stale += 1
            status = f"{status}, stale: {why}" + ("; kept (--reuse-stale)" if reuse_stale else "; to run again")
        print(f"{spec.run_id} rep {spec.repetition} {spec.iterationvars or '-'}: {status}")
    sys.stdout.flush()
    others = [p.name for p in (sweep.runs_dir.iterdir() if sweep.runs_dir.is_dir() else ())
              if not p.name.startswith(".") and p.name not in statuses and (p / "run.json").is_file()]
    done = len(statuses) - todo
    failures = f" ({failed} failed{', to retry' if retry_failed else ''})" if failed else ""
    stales = f", {stale} made with other versions" if stale else ""
    line = f"{counted(len(statuses), 'run')}: {todo} to do, {done} done{failures}{stales}"
    if others:
        line += (f"; {sweep.runs_dir} also holds {counted(len(others), 'other run')} (saturation probes, or runs of"
                 f" an earlier version of the file)")
    print(line, file=sys.stderr)


def run_with_progress(sweep, specs, args):
    """Run *specs* with a rich progress bar on a terminal, one plain line per run otherwise."""
    from ibfabric.sweep import plain_progress

    if args.jobs < 1:
        raise ConfigError(f"--jobs must be at least 1 (got {args.jobs})")
    if args.no_progress or not sys.stderr.isatty():
        return sweep.run(specs, jobs=args.jobs, dask=args.dask, retry_failed=args.retry_failed,
                         reuse_stale=args.reuse_stale, progress=plain_progress(sys.stderr))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = (TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TextColumn("failed {task.fields[failed]}"),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task("sweep", total=None, failed=0)

        def show(outcome, report):
            bar.update(task, total=report.total - report.skipped, completed=report.done, failed=report.failed)

        return sweep.run(specs, jobs=args.jobs, dask=args.dask, retry_failed=args.retry_failed,
                         reuse_stale=args.reuse_stale, progress=show)
