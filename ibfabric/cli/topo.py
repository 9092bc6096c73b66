"""``ibfabric topo``: show, convert and generate topologies."""

from __future__ import annotations

import argparse
import importlib

from ibfabric.topologies.ibnetdiscover import NAMINGS


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("topo", help="show, convert or generate topologies",
                       description="Inspect and convert topology files (.ned or ibnetdiscover output).")
    tsub = p.add_subparsers(dest="topo_command", metavar="SUBCOMMAND")
    show = tsub.add_parser("show", help="summarise a topology")
    show.add_argument("file", metavar="FILE")
    show.add_argument("--network", help="network to show when the file declares several")
    add_names_option(show)
    show.set_defaults(_topo=_show)
    conv = tsub.add_parser("convert", help="write a topology (e.g. an ibnetdiscover dump) as .ned")
    conv.add_argument("file", metavar="FILE")
    conv.add_argument("-o", "--output", required=True, metavar="OUT.ned")
    conv.add_argument("--network", help="network to convert when the file declares several")
    add_names_option(conv)
    conv.set_defaults(_topo=_convert)
    try:
        gen = importlib.import_module("ibfabric.cli.generate")
    except ModuleNotFoundError as exc:
        if exc.name != "ibfabric.cli.generate":
            raise
    else:
        gen.add_arguments(tsub)
    p.set_defaults(_topo=None)
    return p


def add_names_option(p) -> None:
    """``--names desc|guid|lid`` (``ibfabric topo show``, ``topo convert`` and ``run``)."""
    p.add_argument("--names", choices=NAMINGS, default=None,
                   help="how to name the nodes of an ibnetdiscover dump: by node description with a short GUID"
                        " suffix where several share one (desc, the default), sw_/ca_<GUID> (guid) or"
                        " sw_/ca_lid<LID> (lid)")


def run(args) -> int:
    if args._topo is None:
        print("usage: ibfabric topo {show,convert,generate} ...")
        return 2
    return int(args._topo(args) or 0)


def _show(args) -> int:
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    from ibfabric.topologies import load_fabric

    fabric = load_fabric(args.file, network=args.network, names=args.names)
    sw = fabric.switches
    ca = fabric.cas
    sw_links = sum(1 for ln in fabric.links if fabric.is_switch[ln.a] and fabric.is_switch[ln.b])
    speeds = Counter(f"{ln.width}{ln.speed}" for ln in fabric.links)
    # hop statistics by breadth-first search with bounded memory, never a switches x switches matrix
    connected, diameter, exact = fabric.switch_diameter()
    lids = int((fabric.ep_lid > 0).sum())
    ports_used = [len(fabric.ports(int(s))) for s in sw]
    t = Table(title=f"{fabric.name} ({args.file})", show_header=False)
    t.add_column("what")
    t.add_column("value", justify="right")
    t.add_row("switches", str(len(sw)))
    t.add_row("channel adapters", str(len(ca)))
    t.add_row("links", f"{len(fabric.links)} ({sw_links} switch-switch)")
    t.add_row("link types", ", ".join(f"{k} x{v}" for k, v in sorted(speeds.items())) or "-")
    t.add_row("switch ports used", f"{min(ports_used)}..{max(ports_used)}" if ports_used else "-")
    t.add_row("LIDs given", f"{lids} of {len(fabric.ep_lid)} endpoints")
    t.add_row("node names", _examples(fabric, sw) + "; " + _examples(fabric, ca) if len(fabric.nodes) else "-")
    t.add_row("connected", "yes" if connected else "no")
    if diameter is None:
        t.add_row("diameter (switch hops)", "-")
    elif exact:
        t.add_row("diameter (switch hops)", str(diameter))
    else:
        t.add_row("diameter (switch hops)", f">= {diameter} (lower bound: the exact value is too costly here)")
    Console(width=100).print(t)
    return 0


def _examples(fabric, idx, k: int = 3) -> str:
    """The first *k* names of the nodes *idx* (without the network's prefix), and how many more there are."""
    names = [fabric.nodes[int(i)].name.rsplit(".", 1)[-1] for i in idx[:k]]
    more = len(idx) - len(names)
    return ", ".join(names) + (f" (+{more:,})" if more > 0 else "") if names else "-"


def _convert(args) -> int:
    from ibfabric.ned_like import write_ned
    from ibfabric.results import write_atomic
    from ibfabric.topologies import load_network

    net = load_network(args.file, network=args.network, names=args.names)
    text = write_ned(net)
    write_atomic(args.output, text)
    print(f"wrote {args.output}: network {net.name}, {len(net.simple_modules())} modules")
    return 0
