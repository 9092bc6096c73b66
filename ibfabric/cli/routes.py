"""``ibfabric routes``: compute forwarding tables with a routing engine, write and check them."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from ibfabric.errors import ConfigError
from ibfabric.wording import counted

__all__ = ["add_parser", "run", "parse_sets", "tables_json"]


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "routes",
        help="compute forwarding tables with a routing engine, write or check them",
        description=(
            "Compute the forwarding tables of TOPOLOGY (a .ned file or an ibnetdiscover dump) with a "
            "routing-engine plugin and write them in OpenSM's opensm-lfts.dump format or as JSON."
        ),
    )
    p.add_argument("topology", metavar="TOPOLOGY")
    p.add_argument("--routing", default="minhop", metavar="NAME", help="routing engine (default minhop)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="routing option, e.g. --set root=1 --set father=lowest-port (repeatable)")
    p.add_argument("--lmc", type=int, default=0, metavar="N",
                   help="LMC of the CA ports, as the subnet manager's lmc (default 0): each gets 2^N aligned LIDs; "
                   "LIDs of the topology that do not allow it (a dump's, given with LMC 0) are reassigned, with a "
                   "warning, as OpenSM does")
    p.add_argument("--seed", type=int, default=1, metavar="N", help="seed of the engine's random choices (default 1)")
    p.add_argument("--network", help="network to route when the file declares several")
    p.add_argument("-o", "--output", metavar="FILE", help="write the tables to FILE (default: standard output)")
    p.add_argument("--format", choices=("opensm", "json"), default="opensm", help="table format (default opensm)")
    p.add_argument("--stats", action="store_true",
                   help="print the share of (switch, destination) pairs by number of routing options (the distinct "
                   "ports of a destination's LID range; Martinez et al. 2003, Table 2)")
    p.add_argument("--mfts", metavar="FILE",
                   help="multicast forwarding tables of this fabric in OpenSM's opensm-mfts.dump format, checked "
                   "with --check (every member reached exactly once, no loops)")
    p.add_argument("--groups", metavar="TEXT",
                   help="multicast groups, as the subnet manager's multicastGroups parameter (default: the "
                   "topology's), e.g. 'video: h1 h2 h3 senders=h1; audio@0xC010: 0..3'; see docs/multicast.md")
    p.add_argument("--multicast-routing", metavar="NAME",
                   help="multicast routing engine building the groups' tables (default: the topology's "
                   "multicastRouting, source-based)")
    p.add_argument("--multicast-set", dest="multicast_sets", action="append", default=[], metavar="KEY=VALUE",
                   help="multicast routing option, e.g. --multicast-set root=sw3 (repeatable; default: the "
                   "topology's multicastOptions)")
    p.add_argument("--mfts-out", metavar="FILE",
                   help="write the groups' multicast forwarding tables to FILE in OpenSM's opensm-mfts.dump format")
    p.add_argument("--check", action="store_true",
                   help="print a route report instead of the tables (with --output, both); exit 1 on "
                   "unreachable pairs, loops or a channel-dependency cycle")
    p.add_argument("--every-lid", action="store_true",
                   help="with --check: walk every LID of each destination's LMC range, not only the one a source "
                   "sends to (sources that choose a LID per packet: the multipath engine's named paths); the "
                   "dependencies are then the union over all those routes, without VLs")
    p.add_argument("--compare", nargs="+", metavar="ENGINE",
                   help="route the fabric with each ENGINE (options from --set apply to all) and print one table: "
                   "hops, CA-to-CA routes per switch link (all, up, down), worst link under uniform traffic and "
                   "shift permutations, SLs/VLs, deadlock freedom per VL, computation time")
    return p


def parse_sets(items: list[str]) -> dict[str, str]:
    """``['root=1', 'father=lowest-port']`` -> ``{'root': '1', 'father': 'lowest-port'}``."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set '{item}': expected KEY=VALUE, e.g. 'root=1'")
        out[key.strip()] = value.strip()
    return out


def tables_json(tables) -> dict:
    """``{"engine", "switches": [{"lid", "name", "default_port", "entries": {lid: port}}]}``: explicit entries only.

    Names are node names without the network's name (``sw1`` for ``fig1.sw1``).
    """
    from ibfabric.components.routing.opensm import short_names

    g = tables.fabric
    names = short_names(g)
    switches = []
    for r, node in enumerate(g.switches.tolist()):
        row = tables.lft[r]
        lids = np.flatnonzero(row != 255)
        dp = int(tables.default_port[r])
        switches.append({
            "lid": g.lid_of(node),
            "name": names[node],
            "default_port": dp if dp >= 0 else None,
            "entries": {str(int(lid)): int(row[lid]) for lid in lids},
        })  # fmt: skip
    return {"engine": tables.engine, "switches": switches}


def fabric_with_lmc(args):
    """The topology's fabric (:func:`ibfabric.topologies.load_fabric`) with every LID the subnet
    manager would give it with LMC ``--lmc`` (:meth:`~ibfabric.components.routing.fabric.FabricGraph.with_lmc`);
    LIDs it had to move are named in a warning."""
    import warnings

    from ibfabric.checks import IbfabricWarning
    from ibfabric.components.routing.fabric import moved_lids_message
    from ibfabric.topologies import load_fabric

    kw = {"network": args.network} if args.network else {}
    fabric, moved = load_fabric(args.topology, **kw).with_lmc(args.lmc)
    if moved:
        warnings.warn(f"--lmc {args.lmc}: {moved_lids_message(fabric, moved, args.lmc)}", IbfabricWarning,
                      stacklevel=2)
    return fabric


def compute_tables(args):
    """Load the topology (checked as every command checks it: :func:`ibfabric.topologies.load_fabric`),
    assign LIDs and run the engine; returns the tables."""
    from ibfabric.plugins import PluginSet

    options = parse_sets(args.sets)
    if not 0 <= args.lmc <= 7:
        raise ConfigError(f"'lmc' must be between 0 and 7 (got {args.lmc})")
    if args.seed < 0:
        raise ConfigError(f"--seed must be a non-negative integer (got {args.seed})")
    fabric = fabric_with_lmc(args)
    plugins = PluginSet.load()
    engine = plugins.routing_engines[args.routing]
    tables = engine(fabric, options, np.random.default_rng(args.seed))
    route_multicast(args, tables, plugins)
    return tables


def route_multicast(args, tables, plugins) -> None:
    """Set ``tables.mft`` to the MFTs of the declared multicast groups (``--groups``, else the
    topology's subnet manager's ``multicastGroups``), if there are any."""
    from ibfabric.components.routing.mtrees import declaration_of, mentions_multicast, route_groups

    decl = declaration_of(None)  # the defaults; the network is elaborated again only if its files set them
    if mentions_multicast(args.topology):
        from ibfabric.topologies import load_network

        decl = declaration_of(load_network(args.topology, **({"network": args.network} if args.network else {})))
    text = getattr(args, "groups", None)
    owner = "--groups" if text is not None else decl["owner"]
    sets = parse_sets(getattr(args, "multicast_sets", None) or [])
    options = " ".join(f"{k}={v}" for k, v in sets.items()) if sets else decl["options"]
    mft = route_groups(tables, decl["groups"] if text is None else text,
                       getattr(args, "multicast_routing", None) or decl["routing"], options, plugins,
                       np.random.default_rng(args.seed), owner=owner)
    if mft is not None:
        tables.mft = mft


def run(args) -> int:
    from ibfabric.components.routing.opensm import write_lfts

    if getattr(args, "compare", None):
        return run_compare(args)
    tables = compute_tables(args)
    if args.mfts:
        from ibfabric.components.routing.mfts import read_mfts

        groups = tables.mft.groups  # a dump is checked against the declared groups, with the MLIDs the engine gives them
        tables.mft = read_mfts(args.mfts, tables.fabric)
        tables.mft.groups = groups
    if args.format == "json":
        text = json.dumps(tables_json(tables), indent=1) + "\n"
    else:
        text = write_lfts(tables)
    if args.output:
        from ibfabric.results import write_atomic

        write_atomic(args.output, text)
    elif not args.check and not args.stats:
        sys.stdout.write(text)
    if getattr(args, "mfts_out", None):
        from ibfabric.components.routing.mfts import write_mfts
        from ibfabric.results import write_atomic

        write_atomic(args.mfts_out, write_mfts(tables.mft))
    if args.stats:
        from ibfabric.plugins.routing.fa import option_counts

        shares = option_counts(tables)
        print("routing options:      " + (", ".join(f"{k}: {100 * v:.2f}%" for k, v in shares.items()) or "none")
              + " of (switch, destination) pairs")
    if not args.check:
        return 0
    from ibfabric.components.routing.routecheck import check_routes

    vl, num_vls = tables.vl_function()  # engines with virtual layers: one dependency graph per VL
    if args.every_lid:
        if vl is not None:
            raise ConfigError(f"--every-lid: routing engine '{args.routing}' assigns path SLs per (source, "
                              "destination), which a walk per LID cannot give")
    report = check_routes(tables, vl=vl, num_vls=num_vls, every_lid=args.every_lid)
    print(report.summary(tables.fabric))
    if tables.path_sl is not None:
        print(f"virtual layers:       {len(np.unique(tables.path_sl))} SLs on {num_vls} VLs (path SLs, SL-to-VL "
              f"{','.join(map(str, tables.sl2vl[:num_vls]))}); dependencies checked per VL")
    ok = report.ok
    if tables.info.get("escape_engine"):
        from ibfabric.plugins.routing.fa import non_minimal_options

        bad = non_minimal_options(tables)
        print("escape sub-network:   the routes above (entry d of every LID range; Duato's condition needs it acyclic)")
        print(f"adaptive options:     {'all minimal' if not bad else f'{len(bad)} not minimal, e.g. {bad[0]}'}")
        ok = ok and not bad
    if args.mfts or tables.mft.groups:
        from ibfabric.components.routing.mfts import check_multicast
        from ibfabric.components.routing.mtrees import check_groups

        groups = tables.mft.groups
        problems = check_groups(tables.mft) if groups else check_multicast(tables.mft)
        what = f"{counted(len(groups), 'group')} ({tables.mft.engine or 'from ' + args.mfts}), " if groups else ""
        print(f"multicast: {what}{counted(len(tables.mft.mlids), 'MLID')}, "
              f"{'no problems' if not problems else counted(len(problems), 'problem')}")
        for line in problems[:20]:
            print(f"  {line}")
        if len(problems) > 20:
            print(f"  ... and {len(problems) - 20} more")
        ok = ok and not problems
    return 0 if ok else 1


def run_compare(args) -> int:
    """``routes --compare``: every engine on one fabric, one row each (:mod:`ibfabric.plugins.routing.metrics`)."""
    from rich.console import Console
    from rich.table import Table

    from ibfabric.errors import IbfabricError
    from ibfabric.plugins import PluginSet
    from ibfabric.plugins.routing.metrics import engine_figures

    options = parse_sets(args.sets)
    if not 0 <= args.lmc <= 7:
        raise ConfigError(f"'lmc' must be between 0 and 7 (got {args.lmc})")
    fabric = fabric_with_lmc(args)
    plugins = PluginSet.load()
    engines = {name: plugins.routing_engines[name] for name in args.compare}  # unknown names fail before any work
    t = Table(show_header=True, header_style="bold", title=f"{args.topology}:"
              f" {counted(len(fabric.switches), 'switch', 'switches')}, {counted(int((~fabric.is_switch).sum()), 'CA')};"
              " routes and loads between CAs")
    heads = ("engine", "time s", "hops mean", "hops max", "routes/link max", "mean", "up max", "down max",
             "uniform worst", "shift worst", "shift mean", "SLs", "VLs", "deadlock-free")
    for h in heads:
        t.add_column(h, justify="left" if h == "engine" else "right")
    errors: list[str] = []
    for name, engine in engines.items():
        try:
            f = engine_figures(fabric, name, engine, options, np.random.default_rng(args.seed))
        except IbfabricError as exc:
            t.add_row(name, *["-"] * (len(heads) - 2), "failed (below)")
            errors.append(f"{name}: {exc}")
            continue
        free = "yes" if f.deadlock_free else "NO"
        if f.unreachable:
            free += f" ({counted(f.unreachable, 'pair')} unrouted)"
        t.add_row(name, f"{f.seconds:.3f}", f"{f.mean_hops:.3f}", str(f.max_hops), str(f.max_routes),
                  f"{f.mean_routes:.1f}", str(f.max_up) if f.max_up else "-", str(f.max_down) if f.max_down else "-",
                  f"{f.uniform_worst:.3f}", str(f.shift_worst), f"{f.shift_mean:.2f}", str(f.sls), str(f.vls), free)
    Console(width=200).print(t)
    print("hops: links per route, over the routes between CAs only ('routes --check' counts every ordered pair of"
          " endpoints, switches included, so its mean differs)")
    print("uniform worst: the busiest switch link's load when every CA sends at full rate to all others "
          "(1.0 = that link saturates exactly); up/down: links leading away from / towards the CAs")
    for line in errors:
        print(line)
    return 0
