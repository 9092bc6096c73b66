"""Kim et al. 2007 (issue 32): why Multipath+LFU deadlocks on kim2007_15 without dropping.

Two kinds of evidence, printed, never typed in:

  python experiments/kim2007_mpcycle.py tables
      The multipath tables' channel dependencies over every LID of each
      destination's range (the named paths at base + 2P + 1 and the default
      route), against those of the one LID ``routes --check`` walks without
      ``--every-lid``; then, for each triangle of the switch graph and each
      direction around it, the named paths that make each of its three turns
      (a -> b -> c: in on link ab, out on bc), with one example each; last,
      the same switch-level dependencies with all the fabric's cycles as
      path bits (the paper's nine, which a DLID cannot carry: LMC <= 7).
  python experiments/kim2007_mpcycle.py held [--check] [LOAD [SCHEME [EXPERIMENT]]]
      Runs one run of an experiment (default kim2007_paper_mpdeadlock_cut,
      load 0.6, mp+lfu/source) to its deadlock, and lists the packets held in
      each buffer of the watchdog's cycle: SLID, DLID, SL/VL, the path P its
      DLID names, the switches of its table route (the LFT walked on its
      DLID from its source), and whether the buffer lies on that route; then
      the dependencies those packets make (the channel they came in on ->
      the channel their route takes next), which close the cycle.  An
      adaptive packet (SLID's low bit set) is checked against every named
      path it is still on (``Packet.paths``): they must agree on the hops it
      took; its next channels are its options.  Each
      buffer's occupancy is printed beside its capacity (input buffers:
      credits held; output buffers: credits free) and the downstream
      port's credits; ``--check`` runs with the simulator's credit
      invariant checked at every transmission (``Simulation(check=True)``).

The switch graph and tables are those of the experiment (LMC 7, the
multipath engine's default options: 6 path bits).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def multipath_tables(topology: str = "kim2007_15"):
    from ibfabric.plugins import PluginSet
    from ibfabric.topologies import load_fabric

    fabric, _ = load_fabric(str(ROOT / "topologies" / f"{topology}.ned")).with_lmc(7)
    return PluginSet.load().routing_engines["multipath"](fabric, {}, np.random.default_rng(0))


def route(tables, slid: int, dlid: int) -> list[tuple[int, int, int]]:
    """``(switch node, in port, out port)`` of each switch on the route from *slid*'s port to *dlid* (the LFT)."""
    g = tables.fabric
    exp = tables.expanded()
    e = int(g.lid_owner[slid])
    node, port = int(g.ep_node[e]), int(g.ep_port[e])
    hops = []
    nxt, inp = int(g.peer_node[node, port]), int(g.peer_port[node, port])
    while g.is_switch[nxt] and len(hops) <= len(g.switches):
        out = int(exp[g.switch_row[nxt], dlid])
        hops.append((nxt, inp, out))
        if out == 0:
            break
        nxt, inp = int(g.peer_node[nxt, out]), int(g.peer_port[nxt, out])
    return hops


def named(tables, dlid: int) -> str:
    """'P=37' for a named path's DLID (base + 2P + 1), 'default' for the default route's."""
    g = tables.fabric
    off = dlid - int(g.ep_lid[int(g.lid_owner[dlid])])
    return f"P={(off - 1) // 2}" if off % 2 else "default"


def tables_report() -> None:
    from ibfabric.components.routing.opensm import short_names
    from ibfabric.components.routing.routecheck import check_routes, route_walk

    t0 = time.perf_counter()
    t = multipath_tables()
    g = t.fabric
    names = short_names(g)
    print(f"multipath on kim2007_15, LMC 7: {t.info['bits']} path bits, cycles {t.info['cycles']}")
    for every in (False, True):
        r = check_routes(t, every_lid=every)
        what = "every LID of each range" if every else "one LID per pair (routes --check)"
        cyc = " -> ".join(r.cycle) + f" -> {r.cycle[0]}" if r.cycle else "acyclic"
        print(f"  {what}: {r.pairs} routes, {r.cdg_edges} dependencies: {cyc}")
    # every turn (in on a -> b, out on b -> c) and the routes (source LID, DLID) that make it
    lids = {}
    w = route_walk(t, every_lid=True)
    for s, d, dl, st in zip(w["src"], w["dst"], w["dlid"], w["status"]):
        if st != 0 or g.is_switch[int(g.ep_node[s])] or g.is_switch[int(g.ep_node[d])]:
            continue  # routes between hosts: what the traffic sends
        slid = int(g.ep_lid[s])
        sw = [n for n, _, _ in route(t, slid, int(dl))]
        for a, b, c in zip(sw, sw[1:], sw[2:]):
            lids.setdefault((a, b, c), []).append((slid, int(dl)))
    import networkx as nx

    sg = nx.Graph((a, b) for a, b, _ in lids)
    tri = sorted({tuple(sorted(c)) for c in nx.simple_cycles(sg, length_bound=3)})
    print("triangles of the switch graph, each direction: the routes between hosts that turn at each corner")
    for a, b, c in tri:
        for order in ((a, b, c), (a, c, b)):
            turns = [(order[i], order[(i + 1) % 3], order[(i + 2) % 3]) for i in range(3)]
            made = [lids.get(x, []) for x in turns]
            label = " -> ".join(names[v] for v in order + (order[0],))
            verdict = "CYCLE (all three turns)" if all(made) else "no cycle"
            print(f"  {label}: {verdict}")
            for (x, y, z), rs in zip(turns, made):
                kinds = sorted({named(t, dl) == "default" for _, dl in rs})
                by = "none" if not rs else ("default route and named paths" if kinds == [False, True] else
                                             "default route only" if kinds == [True] else "named paths only")
                eg = ""
                if rs:
                    slid, dl = rs[0]
                    src, dst = names[int(g.ep_node[int(g.lid_owner[slid])])], names[int(g.ep_node[int(g.lid_owner[dl])])]
                    hops = " ".join(names[n] for n, _, _ in route(t, slid, dl))
                    eg = f"; e.g. {src} -> {dst} DLID {dl} ({named(t, dl)}): {hops}"
                print(f"    turn {names[x]} -> {names[y]} -> {names[z]}: {len(rs)} routes, {by}{eg}")
    all_bits(g, names)
    print(f"({time.perf_counter() - t0:.1f} s)")


def all_bits(g, names) -> None:
    """Every named path of every switch pair with all cycles as path bits (no LMC limit), walked hop by hop;
    the cycle of the switch-level channel dependency graph (a channel: a directed switch-to-switch link)."""
    import networkx as nx

    from ibfabric.plugins.routing.multipath import path_next_hops
    from ibfabric.plugins.routing.pathbits import find_cycles

    G = nx.Graph()
    G.add_nodes_from(range(len(g.switches)))
    for r, node in enumerate(g.switches.tolist()):
        for peer in g.peer_node[node].tolist():
            if peer >= 0 and g.is_switch[peer] and peer != node:
                G.add_edge(r, int(g.switch_row[peer]))
    cycles = find_cycles(G)
    nxt = path_next_hops(G, cycles)
    S, P = nxt.shape[0], nxt.shape[2]
    cdg = nx.DiGraph()
    for t in range(S):
        for p in range(P):
            for s in range(S):
                walk = [s]
                while walk[-1] != t and len(walk) <= S:
                    walk.append(int(nxt[walk[-1], t, p]))
                for a, b, c in zip(walk, walk[1:], walk[2:]):
                    cdg.add_edge((a, b), (b, c))
    row = [names[int(n)] for n in g.switches.tolist()]
    try:
        cyc = nx.find_cycle(cdg)
        text = " -> ".join(f"{row[a]}-{row[b]}" for (a, b), _ in cyc)
    except nx.NetworkXNoCycle:
        text = "acyclic"
    print(f"all {len(cycles)} cycles as path bits ({P} names per destination): {cdg.number_of_edges()} switch-level "
          f"dependencies, {text}")
    closed = []
    for tri in sorted(tuple(sorted(c)) for c in nx.simple_cycles(G, length_bound=3)):
        for a, b, c in (tri, (tri[0], tri[2], tri[1])):
            if all(cdg.has_edge((x, y), (y, z)) for x, y, z in ((a, b, c), (b, c, a), (c, a, b))):
                closed.append(" -> ".join(row[v] for v in (a, b, c, a)))
    print(f"  triangles whose three turns all occur (per direction): {', '.join(closed) or 'none'}")


def held(load: float, scheme: str, experiment: str, check: bool = False) -> int:
    from ibfabric.components.routing.opensm import short_names
    from ibfabric.errors import DeadlockError
    from ibfabric.experiment import Experiment

    exp = Experiment.from_file(HERE / f"{experiment}.toml")
    spec = next(s for s in exp.runs() if dict(s.vars)["scheme"] == scheme and float(dict(s.vars)["load"]) == load)
    t0 = time.perf_counter()
    if check:
        from ibfabric.simulation import Simulation

        assert not spec.events and not spec.workload, "--check builds the simulation without events or workload"
        sim = Simulation(spec.topology_source(), overrides=list(spec.overrides), network=spec.network,
                         seed=spec.seed, warmup=spec.warmup, check=True)
    else:
        sim = spec.simulation()
    try:
        sim.run(spec.time)
    except DeadlockError as exc:
        dl = exc
    else:
        print(f"{experiment} load {load} {scheme}: no deadlock in {spec.time}")
        return 1
    wall = time.perf_counter() - t0
    t = sim.tables
    g = t.fabric
    names = short_names(g)
    print(f"{experiment} load {load} {scheme}: deadlock at {dl.time / 1e6:.2f} ms ({wall:.1f} s"
          f"{', credit invariant checked at every transmission' if check else ''})")
    cycle = [c.split(".", 1)[1] for c in dl.cycle]
    print("cycle: " + " -> ".join(cycle))
    bufs = {}
    for node in sim.ib_nodes:
        if not node.is_switch:
            continue
        short = node.path.split(".", 1)[1]
        for port, rx in node.rx.items():
            for buf in rx.bufs:
                fill = f"{buf.held()} of {buf.capacity} credits held"
                bufs[buf.name.split(".", 1)[1]] = ("in", short, port, buf.packets(), fill)
        for port, tx in node.tx.items():
            for vl, q in enumerate(tx.obuf or []):
                fill = (f"{tx.ofree[vl]} of {tx.ocap} credits free, {tx.credits[vl]} credits for the next switch's"
                        " input buffer")
                bufs[f"{short}.port[{port}] out VL{vl}"] = ("out", short, port, list(q), fill)
    deps: dict[tuple, int] = {}
    off_route = 0
    for name in cycle:
        kind, sw, port, pkts, fill = bufs[name]
        print(f"{name}: {len(pkts)} packets, {fill}")
        for i, p in enumerate(pkts):
            src = names[int(g.ep_node[int(g.lid_owner[p.slid])])]
            dst = names[int(g.ep_node[int(g.lid_owner[p.dlid])])]
            if p.slid & 1:  # adaptive: on every path still in p.paths, which agree on the hops taken so far
                base = int(g.ep_lid[int(g.lid_owner[p.dlid])])
                names_left = [P for P in range(t.info["bits"] and 1 << t.info["bits"]) if p.paths >> P & 1]
                routes = [route(t, p.slid & ~1, base + 2 * P + 1) for P in names_left]
                what = f"adaptive, on {len(names_left)} named paths"
            else:
                routes = [route(t, p.slid, p.dlid)]
                what = named(t, p.dlid)
            here = [[k for k, (n, ip, op) in enumerate(r) if names[n] == sw and (ip if kind == "in" else op) == port]
                    for r in routes]
            on = all(here) and len({tuple(r[:k[0] + (kind == "out")]) for r, k in zip(routes, here)}) == 1
            off_route += not on
            r, k = routes[0], (here[0] or [len(routes[0])])[0]
            hops = " ".join(f"{names[n]}:{ip}>{op}" for n, ip, op in r[:k + 1 if kind == "out" else k])
            outs = sorted({rr[kk[0]][2] for rr, kk in zip(routes, here) if kk})
            hops += (f" {sw}:{port}>{'|'.join(map(str, outs))}" if kind == "in" else "") + " ... " + \
                " ".join(f"{names[n]}" for n, _, _ in r[k + 1:])
            print(f"  {'head' if i == 0 else '    '} SLID {p.slid} ({src}) DLID {p.dlid} ({dst}, {what}) SL {p.sl} "
                  f"VL {p.vl} {p.credits} credits route {hops}: {'on it' if on else 'NOT ON ITS TABLE ROUTE'}")
            if on and kind == "in" and i == 0:
                prev = r[k - 1] if k else None
                c_in = f"{names[prev[0]]} port {prev[2]}" if prev else f"{src} port"
                c_out = f"{sw} port {'|'.join(map(str, outs))}"
                deps[(c_in, c_out)] = deps.get((c_in, c_out), 0) + 1
    print("dependencies of the input buffers' head packets (in on channel -> out on channel, a|b: any of the"
          " options; packets):")
    for (a, b), n in sorted(deps.items()):
        print(f"  {a} -> {b}: {n}")
    print(f"packets off their table route: {off_route}")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["tables"]:
        tables_report()
        return 0
    if argv[:1] == ["held"]:
        check = "--check" in argv
        argv = [a for a in argv if a != "--check"]
        load = float(argv[1]) if len(argv) > 1 else 0.6
        scheme = argv[2] if len(argv) > 2 else "mp+lfu/source"
        return held(load, scheme, argv[3] if len(argv) > 3 else "kim2007_paper_mpdeadlock_cut", check)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
