"""``ibfabric topo generate KIND``: write generated topologies as .ned (or ibsim net files)."""

from __future__ import annotations

import argparse
import sys

from ibfabric.errors import ConfigError, did_you_mean

__all__ = ["add_arguments", "run", "build"]


def _dims(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected dimensions such as 4x4 (got {text!r})") from None
    return dims


def add_arguments(subparsers) -> argparse.ArgumentParser:
    """Mount ``generate`` on the ``topo`` command's subparsers."""
    from ibfabric.topologies.generators import KINDS

    p = subparsers.add_parser("generate", help=f"generate a topology ({', '.join(KINDS)})",
                              description="Write a generated topology as a .ned network (or an ibsim net file).")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")

    def common(k: argparse.ArgumentParser) -> None:
        k.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: standard output)")
        k.add_argument("--name", help="network name (default: from the kind and sizes)")
        k.add_argument("--format", choices=("ned", "ibsim"), default="ned", help="output format (default ned)")
        k.add_argument("--width", default="4x", help="link width (default 4x)")
        k.add_argument("--speed", default="QDR", help="link speed (default QDR)")
        k.add_argument("--routing", default="updn", metavar="NAME",
                       help="the subnet manager's routing engine written into the .ned (default updn, deadlock-free on "
                       "every generated kind; minhop is not, even on fat trees)")
        k.set_defaults(_topo=run)

    k = kinds.add_parser("irregular", help="random irregular fabric, as the papers generate them")
    k.add_argument("--switches", type=int, required=True, metavar="N")
    k.add_argument("--links-per-switch", type=int, default=4, metavar="L", help="most switch-switch links per switch (default 4)")
    k.add_argument("--hosts-per-switch", type=int, default=4, metavar="H", help="hosts per switch (default 4)")
    k.add_argument("--ports", type=int, metavar="P", help="ports per switch (default L + H)")
    k.add_argument("--links", type=int, metavar="N", help="switch-switch links (default: as many as L allows)")
    k.add_argument("--seed", type=int, default=1, metavar="N", help="seed (default 1)")
    common(k)
    k = kinds.add_parser("fattree", help="k-ary n-tree")
    k.add_argument("-k", type=int, required=True, metavar="K", help="arity (switches have 2K ports)")
    k.add_argument("-n", type=int, required=True, metavar="N", help="levels (K**N hosts)")
    common(k)
    for name, helptext in (("mesh", "mesh of switches"), ("torus", "torus of switches")):
        k = kinds.add_parser(name, help=helptext)
        k.add_argument("--dims", type=_dims, default=(4, 4), metavar="AxB[xC]", help="dimensions (default 4x4)")
        k.add_argument("--hosts-per-switch", type=int, default=1, metavar="H")
        common(k)
    k = kinds.add_parser("hypercube", help="binary hypercube")
    k.add_argument("--dim", type=int, required=True, metavar="D", help="dimension (2**D switches)")
    k.add_argument("--hosts-per-switch", type=int, default=1, metavar="H")
    common(k)
    k = kinds.add_parser("kim2007", help="a fabric with the properties Kim et al. 2007 state (five-port switches, one host "
                         "each, no bridge, every switch on one or two of Algorithm 2's independent cycles)")
    k.add_argument("--switches", type=int, required=True, metavar="N")
    k.add_argument("--cycles", type=int, required=True, metavar="C", help="independent cycles (the paper: 9 for 15 switches)")
    k.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the draws (default 0; the shipped "
                   "kim2007_15 and kim2007_30 are seed 2007)")
    k.add_argument("--tries", type=int, default=1000, metavar="N", help="most draws before giving up (default 1000)")
    common(k)
    k.set_defaults(width="1x", speed="SDR")  # the paper's links (Table 1), not the other kinds' 4x QDR
    p.set_defaults(_topo=run, kind=None)
    return p


def build(args):
    """``(fabric, default name)`` for parsed arguments."""
    from ibfabric.topologies import generators as gen

    if getattr(args, "kind", None) is None:
        raise ConfigError(f"topo generate needs a KIND ({', '.join(gen.KINDS)})")
    link = {"width": args.width, "speed": args.speed}
    try:
        if args.kind == "irregular":
            f = gen.irregular(args.switches, links_per_switch=args.links_per_switch, hosts_per_switch=args.hosts_per_switch,
                              num_ports=args.ports, links=args.links, seed=args.seed, **link)
            return f, f"irregular{args.switches}_s{args.seed}"
        if args.kind == "fattree":
            return gen.fat_tree(args.k, args.n, **link), f"fattree_{args.k}ary_{args.n}tree"
        if args.kind in ("mesh", "torus"):
            fn = gen.mesh if args.kind == "mesh" else gen.torus
            return fn(args.dims, hosts_per_switch=args.hosts_per_switch, **link), f"{args.kind}{'x'.join(map(str, args.dims))}"
        if args.kind == "hypercube":
            return gen.hypercube(args.dim, hosts_per_switch=args.hosts_per_switch, **link), f"hypercube{args.dim}"
        if args.kind == "kim2007":
            f = gen.kim2007_paper(args.switches, args.cycles, seed=args.seed, tries=args.tries, **link)
            return f, f"kim2007_{args.switches}_s{args.seed}"
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    raise ConfigError(f"unknown topology kind '{args.kind}'{did_you_mean(args.kind, gen.KINDS)} (valid: {', '.join(gen.KINDS)})")


def run(args) -> int:
    from ibfabric.topologies.generators import to_ibsim, to_ned

    fabric, default = build(args)
    routing = getattr(args, "routing", "updn")
    text = to_ned(fabric, name=args.name or default, routing=routing) if args.format == "ned" else to_ibsim(fabric)
    if args.output:
        from ibfabric.results import write_atomic

        write_atomic(args.output, text)
        from ibfabric.wording import counted

        print(f"wrote {args.output}: {counted(len(fabric.switches), 'switch', 'switches')},"
              f" {counted(len(fabric.cas), 'host')}, {counted(len(fabric.links), 'link')}")
    else:
        sys.stdout.write(text)
    return 0
