"""``ibfabric run``: simulate a topology under synthetic traffic and print the results.

Four levels set parameters, strongest first: ``--set PATH=VALUE``; the
options given (``--routing``, ``--load``, ``--traffic``...); the named
configuration of ``--config`` (:mod:`ibfabric.configs`), which like the
options beats the topology file; and the defaults of :data:`DEFAULTS`, which apply only where
the file assigns nothing (``**.load = 0.5`` in the file runs at 0.5, not at
the default 0.1; see ``defaults`` of :class:`~ibfabric.simulation.Simulation`).
Durations need a unit (``--time 10`` is an error: 10 what?).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ibfabric.cli import add_huge_pages
from ibfabric.cli import qos as qos_cli
from ibfabric.cli import topo as topo_cli
from ibfabric.checks import MAX_LOAD
from ibfabric.errors import ConfigError, DeadlockError

#: The embedded default scenario: what ``ibfabric run`` simulates with no arguments.
DEFAULTS = {
    "topology": "irregular16",
    "routing": "updn",
    "traffic": "uniform",
    "load": 0.1,
    "packet_size": 256,
    "time": "200us",
    "warmup": "10us",
    "seed": 1,
}

#: the run limit of a workload when --time is not given: the run stops when the workload completes
WORKLOAD_LIMIT = "1s"


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "run",
        help="simulate a topology and print latency, throughput and packet counts",
        description=(
            "Simulate TOPOLOGY (a .ned file or an ibnetdiscover dump; default: the shipped "
            f"'{DEFAULTS['topology']}' fabric) under synthetic traffic."
        ),
    )
    p.add_argument("topology", nargs="?", default=None, metavar="TOPOLOGY")
    p.add_argument("--network", help="network to build when the file declares several")
    topo_cli.add_names_option(p)
    p.add_argument("--routing", metavar="NAME", help="routing engine of the subnet manager")
    p.add_argument("--arbiter", metavar="NAME", help="VL arbiter of every port")
    p.add_argument("--dropper", metavar="NAME", help="packet dropper of every switch")
    p.add_argument("--traffic", metavar="NAME", default=None,
                   help=f"traffic pattern of every HCA (default {DEFAULTS['traffic']}; 'none' for no traffic;"
                        " 'cbr' for QoS connections)")
    p.add_argument("--load", type=float, metavar="X",
                   help=f"offered load per host, fraction of its link rate, at most {MAX_LOAD:g} (default"
                        f" {DEFAULTS['load']} where the topology file sets none)")
    p.add_argument("--packet-size", type=int, metavar="BYTES", help=f"wire size of generated packets (default {DEFAULTS['packet_size']})")
    p.add_argument("--arrival", choices=("poisson", "constant"), help="arrival process (default poisson)")
    p.add_argument("--time", metavar="DURATION", default=None, help=f"simulated time, e.g. 1ms (default {DEFAULTS['time']})")
    p.add_argument("--warmup", metavar="DURATION", default=None, help=f"start of the measurement window (default {DEFAULTS['warmup']})")
    p.add_argument("--seed", type=int, default=DEFAULTS["seed"], metavar="N", help=f"the run's seed (default {DEFAULTS['seed']})")
    p.add_argument("--config", metavar="NAME", help="a named model configuration (ibfabric configs lists them), or"
                        " FILE.toml:NAME for one of your own; the options given and --set override it")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="PATH=VALUE",
                   help="override a parameter by wildcard path, e.g. '**.routingDelay=100ns' (repeatable; first"
                        " match wins); a bare KEY=VALUE is a routing-engine option, e.g. 'root=1'")
    p.add_argument("--out", metavar="DIR", help="write summary.json, scalars.csv and results.sca into DIR")
    p.add_argument("--scenario", metavar="FILE", help="a TOML file of [[events]]: link/node failures, restores,"
                        " traffic changes (docs/scenarios.md)")
    p.add_argument("--check", action="store_true", help="verify the credit invariant at every transmission (slow)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    w = p.add_argument_group("application workloads (docs/workloads.md)")
    w.add_argument("--workload", metavar="SPEC",
                   help="run a workload until it completes (--time is then the limit, default"
                        f" {WORKLOAD_LIMIT}): a GOAL file (FILE.goal) or NAME[:size=64KiB,reps=1,ranks=P,...] of a"
                        " registered one (ibfabric plugins lists them); no background traffic unless --traffic")
    w.add_argument("--placement", default="linear", metavar="HOW",
                   help="ranks on hosts: linear, random (from --seed) or file:PATH (default linear)")
    w.add_argument("--workload-sl", type=int, default=0, metavar="SL",
                   help="SL of the workload's messages where the routing gives paths none (default 0)")
    w.add_argument("--ideal", action="store_true",
                   help="also run the workload on an ideal crossbar of the same link rate: its time and the slowdown")
    w.add_argument("--write-goal", metavar="FILE", help="write the workload's schedule as GOAL text to FILE")
    add_huge_pages(p)
    qos_cli.add_run_options(p)
    return p


def parse_sets(items: list[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        path, sep, value = item.partition("=")
        if not sep or not path.strip() or not value.strip():
            raise ConfigError(f"--set '{item}': expected PATH=VALUE, e.g. '**.routingDelay=100ns'")
        out.append((path.strip(), value.strip()))
    return out


def check_routing_option(key: str, value: str) -> None:
    """A bare ``--set KEY=VALUE`` is a routing-engine option: refuse one that looks like a module
    parameter (its key is a parameter's name, or its value has a unit), which lacks its ``**.``."""
    from ibfabric.configs import known_parameters
    from ibfabric.units import UnitError, parse_quantity

    try:
        unit = parse_quantity(value)[1]
    except UnitError:
        unit = None
    if key in known_parameters() or unit is not None:
        raise ConfigError(f"--set {key}={value}: a module parameter is set by path: did you mean"
                          f" '**.{key}={value}'? (a bare KEY=VALUE is a routing-engine option, e.g. 'root=1')")


def scenario(args) -> tuple[Any, list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]], float, float]:
    """(topology, strict overrides, convenience overrides, defaults, time, warmup in ns) for *args*.

    The convenience overrides are the options given (they beat the topology
    file); the defaults are :data:`DEFAULTS` for the options not given (the
    file's assignments beat them).
    """
    topology = args.topology or DEFAULTS["topology"]
    sets = parse_sets(args.sets)
    # A bare KEY (no '.', no '*': not a parameter path) is an option of the routing
    # engine, as with `ibfabric routes`: `--routing file --set path=lfts.dump`.
    options = [f"{k}={v}" for k, v in sets if "." not in k and "*" not in k]
    for k, v in sets:
        if "." not in k and "*" not in k:
            check_routing_option(k, v)
    sets = [(k, v) for k, v in sets if "." in k or "*" in k]
    if options:
        sets.append(("**.routingOptions", '"' + " ".join(options).replace('"', '\\"') + '"'))
    soft: list[tuple[str, str]] = []  # options given
    weak: list[tuple[str, str]] = []  # defaults of options not given

    def option(pattern: str, value, default=None) -> None:
        if value is not None:
            soft.append((pattern, value))
        elif default is not None:
            weak.append((pattern, default))

    workload = getattr(args, "workload", None) is not None
    option("**.routing", args.routing, DEFAULTS["routing"] if args.topology is None else None)
    option("**.arbiter", args.arbiter)
    option("**.dropper", args.dropper)
    if args.traffic == "cbr":
        soft.extend(qos_cli.run_overrides(args))
    else:
        option("**.traffic", '""' if args.traffic == "none" else args.traffic,
               '""' if workload else DEFAULTS["traffic"])
    pattern_traffic = args.traffic not in ("none", "cbr") and not (workload and args.traffic is None)  # the default load goes with the default traffic
    option("**.load", None if args.load is None else repr(args.load), str(DEFAULTS["load"]) if pattern_traffic else None)
    option("**.packetSize", None if args.packet_size is None else f"{args.packet_size}B", f"{DEFAULTS['packet_size']}B")
    option("**.arrival", args.arrival)
    if getattr(args, "config", None) is not None:  # below the options given, above the topology file; '' is an error
        from ibfabric.configs import overrides

        soft.extend(overrides(args.config).items())
    duration = _duration(args.time or (WORKLOAD_LIMIT if workload else DEFAULTS["time"]), "--time")
    warmup = _duration(args.warmup or ("0us" if workload else DEFAULTS["warmup"]), "--warmup")
    if duration <= warmup:
        raise ConfigError(
            f"--time must be after --warmup (got --time {args.time or DEFAULTS['time']},"
            f" --warmup {args.warmup or DEFAULTS['warmup']}): the measurement window [warmup, time] would be empty"
        )
    return topology, sets, soft, weak, duration, warmup


def _duration(text: str, option: str) -> float:
    """A duration option in ns; a bare number is an error asking for a unit (:func:`ibfabric.units.parse_duration`)."""
    from ibfabric.units import UnitError, parse_duration

    try:
        return parse_duration(text, numbers=False)
    except UnitError as exc:
        raise ConfigError(f"{option} {text}: {exc}") from None


def run(args) -> int:
    from ibfabric.simulation import Simulation
    from ibfabric.results import write_results

    cbr = qos_cli.check_run_options(args)
    if args.load is not None and not 0 < args.load <= MAX_LOAD:
        raise ConfigError(f"--load must be in (0, {MAX_LOAD:g}] (got {args.load:g}): 1 is the link's data rate,"
                          " more is overload")
    if args.packet_size is not None and args.packet_size < 1:
        raise ConfigError(f"--packet-size must be >= 1 (got {args.packet_size})")
    topology, sets, soft, weak, duration, warmup = scenario(args)
    if args.scenario:
        from ibfabric.scenario import load_scenario

        events = load_scenario(args.scenario)
    if args.out:
        check_out_dir(args.out)
    sim = Simulation(
        topology, overrides=sets, optional_overrides=soft, defaults=weak, network=args.network, seed=args.seed,
        warmup=warmup, check=args.check, names=args.names,
    )
    if not sim.ib_nodes:  # nothing would be sent: a table of zeros would look like a result
        from ibfabric.topologies import no_ib_nodes

        raise no_ib_nodes(sim.network)
    if args.scenario:
        sim.apply_events(events)
    if cbr:
        qos_cli.setup_run(sim, args)
    if getattr(args, "workload", None) is not None:
        start_workload(sim, args)
    deadlock = None
    try:
        summary = sim.run(duration, progress=not args.no_progress and sys.stderr.isatty())
    except DeadlockError as exc:
        deadlock = exc
        summary = sim.summary()
    if args.out:
        write_results(sim, summary, args.out)
    if args.json:
        from ibfabric.results import to_json

        print(to_json(summary))
    else:
        print_summary(summary)
        if "qos" in summary:
            qos_cli.print_qos(summary["qos"])
        if "workload" in summary:
            print_workload(summary["workload"])
        if args.out:
            print(f"results written to {args.out}/summary.json")
    if deadlock is not None:
        raise deadlock
    error = (summary.get("workload") or {}).get("error")
    if error:
        raise ConfigError(error)
    return 0


def start_workload(sim, args) -> None:
    """Build the schedule of ``--workload`` and start it on *sim*, to stop the run when it completes."""
    from ibfabric.components.hca.goal import to_goal
    from ibfabric.components.hca.workload import Workload
    from ibfabric.plugins.workloads import schedule_from_spec

    schedule = schedule_from_spec(sim.plugins, args.workload, len(sim.hosts))
    if args.write_goal:
        from ibfabric.results import write_atomic

        write_atomic(args.write_goal, to_goal(schedule))
    Workload(sim, schedule, placement=args.placement, sl=args.workload_sl, stop=True, ideal=args.ideal)


def print_workload(w: dict[str, Any]) -> None:
    """The workload's figures under the summary table."""
    from rich.console import Console

    console = Console(width=100)
    if w["complete"]:
        n = w["messages"]
        line = (f"workload {w['name'] or ''}: {w['ranks']} ranks, {n:,} message{'' if n == 1 else 's'},"
                f" {w['bytes']:,} bytes, completed in {w['completion_ns'] / 1000:,.3f} us")
        if w.get("slowdown") is not None:
            line += f" ({w['slowdown']:.2f}x the ideal crossbar's {w['ideal_ns'] / 1000:,.3f} us)"
    else:
        line = (f"workload {w['name'] or ''}: {w['operations_done']:,} of {w['operations']:,} operations done,"
                " not complete")
    console.print(line, highlight=False, markup=False, soft_wrap=True)
    phases = w.get("phases") or []
    if len(phases) > 1:
        times = ", ".join(f"{p['time_ns'] / 1000:,.3f}" if p["time_ns"] is not None else "-" for p in phases)
        console.print(f"  per repetition (us): {times}", highlight=False, markup=False, soft_wrap=True)


def check_out_dir(path: str) -> None:
    """Fail before the simulation, not after it, when results could not be written to *path*."""
    import os
    from pathlib import Path

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {path}: exists and is not a directory")
    parent = out if out.exists() else next((p for p in out.parents if p.exists()), Path("."))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {path}: {parent} is not writable")


def _fmt(v, unit: str = "", digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}{unit}"
    return f"{v:,}{unit}"


def print_summary(s: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from ibfabric.wording import counted

    lat = s["latency_ns"]
    util = s["link_utilisation"]
    console = Console(width=100)
    console.print(
        f"[bold]{s['network']}[/bold]: {counted(s['hosts'], 'host')}, {counted(s['switches'], 'switch', 'switches')},"
        f" routing {s['routing']}, seed {s['seed']}"
    )
    t = Table(show_header=True, header_style="bold")
    t.add_column("metric")
    t.add_column("value", justify="right")
    rows = [
        ("offered load", _fmt(s["offered_load"], digits=3)),
        ("accepted load", _fmt(s["accepted_load"], digits=3)),
        ("latency mean", _fmt(lat["mean"], " ns")),
        ("latency p50", _fmt(lat["p50"], " ns")),
        ("latency p99", _fmt(lat["p99"], " ns")),
        ("latency max", _fmt(lat["max"], " ns")),
        ("packets injected", _fmt(s["packets_injected"])),
        ("packets delivered", _fmt(s["packets_delivered"])),
        ("packets dropped", _fmt(s["packets_dropped"])),
        *((f"  dropped: {why}", _fmt(n)) for why, n in s.get("drops_by_reason", {}).items() if n),
        ("packets in flight", _fmt(s["packets_in_flight"])),
        ("packets queued at source", _fmt(s["packets_queued_at_source"])),
        ("saturated", "yes" if s["saturated"] else "no"),
        ("link utilisation max", _fmt(util["max"], digits=3)),
        ("link utilisation mean", _fmt(util["mean"], digits=3)),
        ("simulated time", _fmt(s["sim_time_ns"] / 1000, " us")),
        ("events", _fmt(s["events"])),
        ("wall time", _fmt(s["wall_s"], " s", 2)),
    ]
    for key, label in (("by_sl", "SL {}"), ("by_class", "{}")):
        groups = s.get(key) or {}
        if len(groups) > 1:  # one row per group only where there is more than one
            for name, g in groups.items():
                what = label.format(name.replace("_", " "))
                rows.append((f"{what}: accepted / latency mean",
                             f"{_fmt(g['accepted_load'], digits=3)} / {_fmt(g['latency_ns']['mean'], ' ns')}"))
    cc = s.get("congestion_control")
    if cc:  # docs/congestion-control.md
        rows.append(("FECN marked / CNPs / BECNs", f"{_fmt(cc['fecn_marked'])} / {_fmt(cc['cnp_sent'])} /"
                                                   f" {_fmt(cc['becn_received'])}"))
        rows.append(("CCTI max / mean at end", f"{_fmt(cc['ccti_max'])} / {_fmt(cc['ccti_mean_at_end'], digits=1)}"))
    for role, g in ((s.get("flows") or {}).get("roles") or {}).items():
        rows.append((f"{role}s ({g['hosts']}): of link per host / latency mean",
                     f"{_fmt(g['per_host_of_link'], digits=3)} / {_fmt(g['latency_mean_ns'], ' ns')}"))
    hot = (s.get("flows") or {}).get("hot_spot")
    if hot:
        rows.append(("hot spot: of its link", _fmt(hot["of_link"], digits=3)))
    for r in rows:
        t.add_row(*r)
    console.print(t)
    for e in s.get("scenario") or ():  # failures, restores, traffic changes (ibfabric.scenario)
        lost = f" ({e['lost']:,} lost)" if e.get("lost") else ""
        console.print(f"{e['time_ns'] / 1000:>10,.3f} us  {e['action']:<13} {e['target']}: {e['result']}{lost}",
                      highlight=False, markup=False, soft_wrap=True)
    if s.get("assimilations") is not None:  # the dynamic subnet manager (docs/subnet-manager.md)
        from ibfabric.components.sm.report import timeline_lines

        for line in timeline_lines(s):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    # warnings (saturation, conservation...) went to stderr as the simulation gave them (ibfabric.checks)
