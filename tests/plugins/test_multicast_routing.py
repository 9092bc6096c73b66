"""Multicast routing engines: source-based trees along the unicast routes, shared trees, the plugin role."""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ibfabric
from ibfabric import hookimpl
from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.mfts import MulticastTables
from ibfabric.components.routing.mgroups import declare_groups, host_nodes
from ibfabric.components.routing.mtrees import check_groups, route_groups, source_tree
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError, PluginError
from ibfabric.plugins import PluginSet
from ibfabric.plugins.routing import minhop
from ibfabric.plugins.routing.multicast import center_switch, shared, source_based
from ibfabric.topologies.generators import irregular


@functools.lru_cache(maxsize=1)
def plugins() -> PluginSet:
    return PluginSet.load()


def tree_fabric() -> FabricGraph:
    """A tree of three switches (no cycle: every routing gives the same paths).

        a(3)          b(2) c(3)
          \\           \\  /
           s0 (1) --- (1) s1
            (2)
             |
            (1)
             s2 (2) --- d
    """
    nodes = [NodeSpec("s0", True, 3), NodeSpec("s1", True, 3), NodeSpec("s2", True, 2)]
    nodes += [NodeSpec(n, False, 1) for n in "abcd"]
    links = [Link(0, 1, 1, 1), Link(0, 2, 2, 1), Link(3, 1, 0, 3), Link(4, 1, 1, 2), Link(5, 1, 1, 3), Link(6, 1, 2, 2)]
    return FabricGraph(nodes, links).with_lids()


def masks(mft: MulticastTables, mlid: int) -> list[list[int]]:
    """The ports of *mlid* on every switch, in switch order."""
    return [mft.ports(int(sw), mlid) for sw in mft.fabric.switches]


def dag_fabric(lft: dict[str, dict[str, int]], extra_hop: bool = False) -> ForwardingTables:
    """A source s on switch A, members m1 on D and m2 on E behind D, and two ways from A to D
    (through B, and through C); with *extra_hop*, the way through B is one switch longer (B - F - D).
    *lft* gives, per switch, the port towards each member: the unicast tables are drawn by hand.

        s - A (1) - B (2) ...... (1) D (3) - E (2) - m2
            A (2) - C (2) ------ (2) D (4) - m1
    """
    names = ["A", "B", "C", "D", "E"] + (["F"] if extra_hop else [])
    ports = {"A": 3, "B": 2, "C": 2, "D": 4, "E": 2, "F": 2}
    nodes = [NodeSpec(n, True, ports[n], lid=i + 1, guid=i + 1) for i, n in enumerate(names)]
    k = len(nodes)
    nodes += [NodeSpec(n, False, 1, lid=k + 1 + i, guid=100 + i) for i, n in enumerate(["s", "m1", "m2"])]
    at = {n: i for i, n in enumerate(names + ["s", "m1", "m2"])}
    links = [Link(at["A"], 1, at["B"], 1), Link(at["A"], 2, at["C"], 1), Link(at["C"], 2, at["D"], 2),
             Link(at["D"], 3, at["E"], 1), Link(at["s"], 1, at["A"], 3), Link(at["m1"], 1, at["D"], 4),
             Link(at["m2"], 1, at["E"], 2)]
    links += [Link(at["B"], 2, at["F"], 1), Link(at["F"], 2, at["D"], 1)] if extra_hop else [Link(at["B"], 2, at["D"], 1)]
    g = FabricGraph(nodes, links)
    table = np.full((len(names), g.max_lid + 1), NO_PORT, dtype=np.uint8)
    for sw, row in lft.items():
        table[names.index(sw), names.index(sw) + 1] = 0
        for member, port in row.items():
            table[names.index(sw), g.lid_of(at[member])] = port
    return ForwardingTables(g, table, engine="by hand")


def unicast_path(t: ForwardingTables, src: int, dst: int) -> list[tuple[int, int]]:
    """(switch node, output port) of every hop of the unicast route, walked one lookup at a time."""
    g = t.fabric
    sw, _ = g.attachment(src)
    lid = t.dlid(src, dst)
    hops = []
    while True:
        p = t.port(sw, lid)
        hops.append((sw, p))
        nxt = int(g.peer_node[sw, p])
        if not g.is_switch[nxt]:
            return hops
        sw = nxt
        assert len(hops) <= len(g.switches)


def tree_depths(mft: MulticastTables, mlid: int, src: int) -> dict[int, int]:
    """Switch hops from the source's switch to each member's switch along the masks (breadth-first)."""
    g = mft.fabric
    sw, port = g.attachment(src)
    depth, frontier, out = 0, [(sw, port)], {}
    while frontier:
        nxt = []
        for x, inp in frontier:
            for p in mft.ports(x, mlid):
                if p == inp:
                    continue
                y = int(g.peer_node[x, p])
                if g.is_switch[y]:
                    nxt.append((y, int(g.peer_port[x, p])))
                else:
                    out[g.endpoint_of(y)] = depth
        frontier, depth = nxt, depth + 1
    return out


class TestSourceTree:
    def test_hand_drawn_tree(self):
        g = tree_fabric()
        mft = source_based(minhop.compute(g), declare_groups("g: a b c d", g))
        (grp,) = mft.groups
        assert grp.sender_mlids == (0xC000, 0xC001, 0xC002, 0xC003) and mft.engine == "source-based"
        assert masks(mft, 0xC000) == [[1, 2], [2, 3], [2]]  # from a: s0 to s1 and s2, s1 to b and c, s2 to d
        assert masks(mft, 0xC001) == [[2, 3], [1, 3], [2]]  # from b: s1 to s0 and c, s0 to a and s2
        assert masks(mft, 0xC002) == [[2, 3], [1, 2], [2]]  # from c
        assert masks(mft, 0xC003) == [[1, 3], [2, 3], [1]]  # from d: s2 up to s0, then everywhere
        assert check_groups(mft) == []
        mft = source_based(minhop.compute(g), declare_groups("g: b d senders=a", g))
        assert mft.groups[0].sender_mlids == (0xC000,) and masks(mft, 0xC000) == [[1, 2], [2], [2]]

    def test_on_a_tree_it_is_the_union_of_the_unicast_paths(self):
        g = tree_fabric()
        t = minhop.compute(g)
        eps = [g.endpoint_of(g.index(n)) for n in "abcd"]
        for src in eps:
            union = {hop for dst in eps if dst != src for hop in unicast_path(t, src, dst)}
            m = source_tree(t, src, eps)
            assert {(int(g.switches[r]), int(p)) for r, p in zip(*np.nonzero(m))} == union

    def test_paths_that_meet_again_keep_the_first_one(self):
        # to m1 through B, to m2 through C: both reach D in two hops; m1 (the lower endpoint) wins D
        t = dag_fabric({"A": {"m1": 1, "m2": 2}, "B": {"m1": 2}, "C": {"m2": 2}, "D": {"m1": 4, "m2": 3}, "E": {"m2": 2}})
        g = t.fabric
        union = MulticastTables(g)  # what merely overlaying both unicast paths gives: D gets two copies
        for sw, ports in {0: [1, 2], 1: [2], 2: [2], 3: [3, 4], 4: [2]}.items():
            union.set(sw, 0xC000, ports)
        union.groups = source_based(t, declare_groups("g: m1 m2 senders=s", g)).groups
        assert check_groups(union) == ["group 'g' (MLID 0xC000) from s: packets reach D twice (a loop or two paths)"]
        for text in ("g: m1 m2 senders=s", "g: m2 m1 senders=s"):  # the declaration order does not matter
            mft = source_based(t, declare_groups(text, g))
            assert masks(mft, 0xC000) == [[1], [2], [], [3, 4], [2]]  # A, B, C (pruned), D, E
            assert check_groups(mft) == []

    def test_ties_go_to_the_lower_endpoint_whatever_the_path(self):
        t = dag_fabric({"A": {"m1": 2, "m2": 1}, "B": {"m2": 2}, "C": {"m1": 2}, "D": {"m1": 4, "m2": 3}, "E": {"m2": 2}})
        mft = source_based(t, declare_groups("g: m1 m2 senders=s", t.fabric))
        assert masks(mft, 0xC000) == [[2], [], [2], [3, 4], [2]]  # now through C, m1's way

    def test_the_path_that_reaches_a_switch_first_wins(self):
        # m1's route reaches D in three hops (A - B - F - D), m2's in two (A - C - D): D hangs under C,
        # and m1 is reached sooner than by its unicast route
        t = dag_fabric({"A": {"m1": 1, "m2": 2}, "B": {"m1": 2}, "F": {"m1": 2}, "C": {"m2": 2}, "D": {"m1": 4, "m2": 3},
                        "E": {"m2": 2}}, extra_hop=True)
        g = t.fabric
        mft = source_based(t, declare_groups("g: m1 m2 senders=s", g))
        assert masks(mft, 0xC000) == [[2], [], [2], [3, 4], [2], []]  # A, B, C, D, E, F
        s, m1 = g.endpoint_of(g.index("s")), g.endpoint_of(g.index("m1"))
        assert tree_depths(mft, 0xC000, s)[m1] == 2 < len(unicast_path(t, s, m1)) - 1

    @pytest.mark.parametrize("lft, message", [
        ({"A": {"m1": 1, "m2": 2}, "B": {"m1": 2}, "D": {"m1": 4}}, r"from s do not deliver to m2: C has no entry for LID 8"),
        ({"A": {"m1": 1, "m2": 2}, "B": {"m1": 2}, "C": {"m2": 1}, "D": {"m1": 4}}, r"from s do not deliver to m2: they loop"),
        ({"A": {"m1": 3, "m2": 2}}, r"from s do not deliver to m1: A sends LID 7 to port 3, which leads to s"),
    ])
    def test_routes_that_do_not_deliver(self, lft, message):
        t = dag_fabric(lft)
        with pytest.raises(ConfigError, match=rf"^group 'g': the unicast routes {message}"):
            source_based(t, declare_groups("g: m1 m2 senders=s", t.fabric))


class TestShared:
    def test_hand_drawn_tree(self):
        g = tree_fabric()
        mft = shared(minhop.compute(g), declare_groups("g: a b c d", g))
        (grp,) = mft.groups
        assert grp.sender_mlids == (0xC000,) * 4 and mft.mlids == [0xC000] and mft.engine == "shared"
        assert masks(mft, 0xC000) == [[1, 2, 3], [1, 2, 3], [1, 2]]  # tree links at both ends, and the hosts
        assert check_groups(mft) == []

    def test_the_centre_and_a_sender_that_is_not_a_member(self):
        g = tree_fabric()
        b, c, d = (g.endpoint_of(g.index(n)) for n in "bcd")
        assert center_switch(g, [b, c, d]) == g.index("s1")  # 0 + 0 + 2 hops, against 3 from s0
        mft = shared(minhop.compute(g), declare_groups("g: b c senders=d", g))
        assert masks(mft, 0xC000) == [[1, 2], [1, 2, 3], [1]]  # d's switch stays in the tree, d's port not
        assert check_groups(mft) == []

    def test_root_option(self):
        g = tree_fabric()
        mft = shared(minhop.compute(g), declare_groups("g: b c", g), {"root": "s2"})
        assert masks(mft, 0xC000) == [[1, 2], [1, 2, 3], [1]]
        with pytest.raises(ConfigError, match=r"root 'a' is a, which is not a switch"):
            shared(minhop.compute(g), declare_groups("g: b c", g), {"root": "a"})
        with pytest.raises(ConfigError, match=r"unknown option 'rot'; did you mean 'root'\? \(valid: root\)"):
            shared(minhop.compute(g), declare_groups("g: b c", g), {"rot": "s2"})


class TestEveryMemberOnce:
    """On generated irregular fabrics, with any unicast routing and any groups, both engines reach
    every member exactly once from every sender, and source-based trees use only unicast hops."""

    @settings(max_examples=20, deadline=None, derandomize=True)
    @given(st.integers(3, 10), st.integers(2, 4), st.integers(1, 2), st.integers(0, 10_000),
           st.sampled_from(["minhop", "updn", "spf"]), st.data())
    def test_property(self, switches, links, hosts, seed, routing, data):
        g = irregular(switches, links_per_switch=links, hosts_per_switch=hosts, seed=seed).with_lids()
        n = len(host_nodes(g))
        host = st.integers(0, n - 1)
        groups = []
        for i in range(data.draw(st.integers(1, 3))):
            members = data.draw(st.lists(host, min_size=1, max_size=n, unique=True))
            senders = data.draw(st.none() | st.lists(host, min_size=1, max_size=4, unique=True))
            groups.append(f"g{i}: {' '.join(map(str, members))}" + (f" senders={','.join(map(str, senders))}" if senders else ""))
        t = plugins().routing_engines[routing](g, {}, np.random.default_rng(seed))
        for engine in ("shared", "source-based"):
            mft = route_groups(t, "; ".join(groups), engine, "", plugins())
            assert check_groups(mft) == [], (engine, groups)
        for grp in mft.groups:  # source-based: every tree edge is a unicast hop, no member farther than by unicast
            for src, mlid in zip(grp.sender_eps, grp.sender_mlids):
                paths = {dst: unicast_path(t, src, dst) for dst in grp.member_eps if dst != src}
                union = {hop for p in paths.values() for hop in p}
                mask = mft.masks.get(mlid, np.zeros((len(g.switches), mft.width), dtype=bool))
                edges = {(int(g.switches[r]), int(p)) for r, p in zip(*np.nonzero(mask))}
                assert edges <= union
                depth = tree_depths(mft, mlid, src)
                assert all(depth[dst] <= len(p) - 1 for dst, p in paths.items())


class TestPluginRole:
    def test_listed_with_the_other_roles(self, capsys):
        from ibfabric.cli import main

        assert {"shared", "source-based"} <= set(plugins().multicast_routing_engines.names())  # and others' plugins
        assert main(["plugins"]) == 0
        out = capsys.readouterr().out
        assert "multicast routing engines" in out and "source-based" in out and "(Kim et al. 2007)" in out

    NET = ("network t { submodules: s: Switch { numPorts = 3; } a: HCA; b: HCA; c: HCA; sm: SubnetManager {"
           " multicastGroups = \"g: a b c\"; } connections: a.port[1] <--> Link <--> s.port[1];"
           " b.port[1] <--> Link <--> s.port[2]; c.port[1] <--> Link <--> s.port[3]; }")

    def test_a_third_party_engine(self):
        class Flood:
            """Every port of every switch in one mask per group (right on a single switch)."""

            @hookimpl
            def ibfabric_register_multicast_routing(self, register):
                def compute(tables, groups, options, rng):
                    from ibfabric.components.routing.mgroups import assign_mlids

                    groups = assign_mlids(groups, per_sender=False)
                    mft = MulticastTables(tables.fabric, groups=groups)
                    for grp in groups:
                        for sw in tables.fabric.switches.tolist():
                            mft.set(sw, grp.mlid, tables.fabric.ports(sw))
                    return mft

                register("flood", compute)

        sim = ibfabric.Simulation(self.NET, overrides={"**.multicastRouting": "flood"}, plugins=[Flood()])
        assert sim.tables.mft.engine == "flood" and sim.tables.mft.switch_entries(0) == {0xC000: (1, 2, 3)}
        assert check_groups(sim.tables.mft) == []

    @pytest.mark.parametrize("result, message", [
        (lambda t, g: None, r"^t.sm: multicast routing engine 'bad' returned NoneType, not MulticastTables$"),
        (lambda t, g: MulticastTables(t.fabric), r"returned tables whose groups are not the ones it was given$"),
        (lambda t, g: MulticastTables(t.fabric, groups=g), r"gave group 'g' 0 sender MLIDs for 3 senders$"),
    ])
    def test_a_bad_engine_is_named(self, result, message):
        class Bad:
            @hookimpl
            def ibfabric_register_multicast_routing(self, register):
                register("bad", lambda tables, groups, options, rng: result(tables, groups))

        with pytest.raises(PluginError, match=message):
            ibfabric.Simulation(self.NET, overrides={"**.multicastRouting": "bad"}, plugins=[Bad()])

    def test_an_engine_that_raises_is_named(self):
        class Broken:
            @hookimpl
            def ibfabric_register_multicast_routing(self, register):
                def compute(tables, groups, options, rng):
                    return 1 / 0

                register("broken", compute)

        with pytest.raises(PluginError, match=r"^t.sm: multicast routing engine 'broken' \(plugin 'Broken-0'\) raised"
                                              r" ZeroDivisionError: division by zero$"):
            ibfabric.Simulation(self.NET, overrides={"**.multicastRouting": "broken"}, plugins=[Broken()])
