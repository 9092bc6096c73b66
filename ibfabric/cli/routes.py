"""``ibfabric routes``: compute forwarding tables with a routing engine, write and check them."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from ibfabric.errors import ConfigError

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
    p.add_argument("--lmc", type=int, default=0, metavar="N", help="LMC given to CA ports without a LID (default 0)")
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
    p.add_argument("--check", action="store_true",
                   help="print a route report instead of the tables (with --output, both); exit 1 on "
                   "unreachable pairs, loops or a channel-dependency cycle")
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
    from ibfabric.components.opensm import short_names

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


def compute_tables(args):
    """Load the topology (checked as every command checks it: :func:`ibfabric.topologies.load_fabric`),
    assign LIDs and run the engine; returns the tables."""
    from ibfabric.plugins import PluginSet
    from ibfabric.topologies import load_fabric

    options = parse_sets(args.sets)
    if not 0 <= args.lmc <= 7:
        raise ConfigError(f"'lmc' must be between 0 and 7 (got {args.lmc})")
    if args.seed < 0:
        raise ConfigError(f"--seed must be a non-negative integer (got {args.seed})")
    kw = {"network": args.network} if args.network else {}
    fabric = load_fabric(args.topology, **kw).with_lids(lmc=args.lmc)
    plugins = PluginSet.load()
    engine = plugins.routing_engines[args.routing]
    return engine(fabric, options, np.random.default_rng(args.seed))


def run(args) -> int:
    from ibfabric.components.opensm import write_lfts

    tables = compute_tables(args)
    if args.mfts:
        from ibfabric.components.mfts import read_mfts

        tables.mft = read_mfts(args.mfts, tables.fabric)
    if args.format == "json":
        text = json.dumps(tables_json(tables), indent=1) + "\n"
    else:
        text = write_lfts(tables)
    if args.output:
        from ibfabric.results import write_atomic

        write_atomic(args.output, text)
    elif not args.check and not args.stats:
        sys.stdout.write(text)
    if args.stats:
        from ibfabric.plugins.routing.fa import option_counts

        shares = option_counts(tables)
        print("routing options:      " + (", ".join(f"{k}: {100 * v:.2f}%" for k, v in shares.items()) or "none")
              + " of (switch, destination) pairs")
    if not args.check:
        return 0
    from ibfabric.components.routecheck import check_routes

    report = check_routes(tables)
    print(report.summary(tables.fabric))
    ok = report.ok
    if tables.info.get("escape_engine"):
        from ibfabric.plugins.routing.fa import non_minimal_options

        bad = non_minimal_options(tables)
        print("escape sub-network:   the routes above (entry d of every LID range; Duato's condition needs it acyclic)")
        print(f"adaptive options:     {'all minimal' if not bad else f'{len(bad)} not minimal, e.g. {bad[0]}'}")
        ok = ok and not bad
    if args.mfts:
        from ibfabric.components.mfts import check_multicast

        problems = check_multicast(tables.mft)
        print(f"multicast: {len(tables.mft.mlids)} MLIDs, {'no problems' if not problems else f'{len(problems)} problems'}")
        for line in problems[:20]:
            print(f"  {line}")
        if len(problems) > 20:
            print(f"  ... and {len(problems) - 20} more")
        ok = ok and not problems
    return 0 if ok else 1
