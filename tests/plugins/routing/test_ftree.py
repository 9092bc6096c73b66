"""The ftree engine: Zahavi's index routing on k-ary n-trees, quasi fat-trees, and clear refusals."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.routecheck import check_routes
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import ftree
from ibfabric.plugins.routing.metrics import walk_pairs
from ibfabric.topologies.generators import fat_tree, hypercube, irregular, mesh, torus


def without(g, names):
    """*g* without the named nodes (and their links)."""
    drop = {g.index(n) for n in names}
    keep = [i for i in range(len(g.nodes)) if i not in drop]
    new = {old: i for i, old in enumerate(keep)}
    links = [Link(new[ln.a], ln.port_a, new[ln.b], ln.port_b, ln.width, ln.speed, ln.rate)
             for ln in g.links if ln.a in new and ln.b in new]
    return FabricGraph([g.nodes[i] for i in keep], links)


def two_level(leaves, spines, hosts, links_per_pair):
    """Leaves with *hosts* each, every leaf joined to every spine by *links_per_pair* parallel links."""
    nodes = [NodeSpec(f"spine{i}", True, leaves * links_per_pair) for i in range(spines)]
    nodes += [NodeSpec(f"leaf{j}", True, hosts + spines * links_per_pair) for j in range(leaves)]
    links = [Link(i, j * links_per_pair + m + 1, spines + j, hosts + i * links_per_pair + m + 1)
             for j in range(leaves) for i in range(spines) for m in range(links_per_pair)]
    for j in range(leaves):
        for h in range(hosts):
            nodes.append(NodeSpec(f"h{j}_{h}", False, 1))
            links.append(Link(len(nodes) - 1, 1, spines + j, h + 1))
    return FabricGraph(nodes, links)


def up_port_destinations(t):
    """{level: sorted distinct numbers of CA destinations routed through one up port} over all switches."""
    g, level = t.fabric, t.info["level"]
    ca_lids = g.ep_lid[~g.is_switch[g.ep_node]]
    out = {}
    for r, sw in enumerate(g.switches):
        for p in g.ports(int(sw)):
            y = int(g.peer_node[sw, p])
            if g.is_switch[y] and level[g.switch_row[y]] > level[r]:
                out.setdefault(int(level[r]), set()).add(int((t.lft[r, ca_lids] == p).sum()))
    return {k: sorted(v) for k, v in out.items()}


def worst_shift(t):
    """Most flows of one shift permutation (CA i -> CA i + s, in ``ca_order``) on one directed link, over all s."""
    g = t.fabric
    order = t.info["ca_order"]
    n = len(order)
    width = g.peer_node.shape[1]
    shifts = np.arange(1, n)
    src = np.tile(order, len(shifts))
    dst = order[(np.tile(np.arange(n), len(shifts)) + np.repeat(shifts, n)) % n]
    hops, node, port, pair = walk_pairs(t, src, dst)
    assert (hops >= 0).all()
    per = np.bincount((pair // n) * (len(g.nodes) * width) + node * width + port)
    return int(per.max())


class TestFullTrees:
    @pytest.mark.parametrize("k", range(2, 9))
    @pytest.mark.parametrize("n", [2, 3])
    def test_every_up_port_of_a_level_carries_the_same_destinations(self, k, n):
        t = ftree.compute(fat_tree(k, n).with_lids(), {})
        counts = up_port_destinations(t)
        # a switch of level l routes up every destination outside its k**(l+1) hosts, spread over k ports
        assert counts == {lv: [(k**n - k ** (lv + 1)) // k] for lv in range(n - 1)}

    @pytest.mark.parametrize("k", range(2, 9))
    @pytest.mark.parametrize("n", [2, 3])
    def test_shift_permutations_use_every_link_at_most_once(self, k, n):
        t = ftree.compute(fat_tree(k, n).with_lids(), {})
        assert worst_shift(t) == 1

    @pytest.mark.parametrize("k, n", [(2, 2), (3, 3), (4, 3), (6, 2)])
    def test_minimal_deadlock_free_and_complete(self, k, n):
        g = fat_tree(k, n).with_lids()
        t = ftree.compute(g, {})
        r = check_routes(t)
        assert r.ok, r.summary(g)
        ca = ~g.is_switch[g.ep_node]
        hops, *_ = walk_pairs(t, np.repeat(np.flatnonzero(ca), ca.sum()), np.tile(np.flatnonzero(ca), ca.sum()))
        # CA to CA: 2 links to the common switch level and back
        assert hops.max() == 2 * n and (hops >= 0).all()
        # the routes to each CA converge on one top switch
        assert (t.info["root_of"][g.ep_lid[ca]] >= 0).all()

    def test_ca_order_is_the_generators_host_order_and_output_is_deterministic(self):
        g = fat_tree(4, 3).with_lids()
        a, b = ftree.compute(g, {}), ftree.compute(g, {})
        assert np.array_equal(a.info["ca_order"], np.flatnonzero(~g.is_switch[g.ep_node]))
        assert np.array_equal(a.lft, b.lft)

    def test_without_connect_roots_top_switches_do_not_reach_each_other(self):
        g = fat_tree(3, 3).with_lids()
        r = check_routes(ftree.compute(g, {"connect_roots": "false"}))
        bad = r.unreachable
        assert len(bad) and g.is_switch[g.ep_node[bad]].all()  # only switch-to-switch pairs
        assert not r.cycle


class TestQuasiFatTrees:
    def test_missing_hosts_are_routed_as_dummies(self):
        g = without(fat_tree(4, 3), ["h5", "h6", "h20"]).with_lids()
        t = ftree.compute(g, {})
        assert t.info["dummies"] == 3
        assert check_routes(t).ok

    @pytest.mark.parametrize("drop", [["s0_00"], ["s1_00"], ["s2_00", "h0", "h1", "h2", "h3"], ["s0_11", "s1_23"]])
    def test_missing_switches_still_deliver_deadlock_free(self, drop):
        g = without(fat_tree(4, 3), drop).with_lids()
        r = check_routes(ftree.compute(g, {}))
        assert r.ok, r.summary(g)

    @pytest.mark.parametrize("leaves, spines, hosts, par, worst", [(4, 2, 4, 2, 1), (8, 4, 8, 1, 2), (6, 2, 6, 1, 3)])
    def test_parallel_links_and_oversubscription(self, leaves, spines, hosts, par, worst):
        g = two_level(leaves, spines, hosts, par).with_lids()
        t = ftree.compute(g, {})
        assert check_routes(t).ok
        # every leaf up port carries the same number of destinations; a shift loads a link at most
        # hosts / up links times (the blocking factor)
        assert len(up_port_destinations(t)[0]) == 1
        assert worst_shift(t) == worst

    @settings(max_examples=12, deadline=None)
    @given(st.sampled_from([(2, 3), (3, 3), (4, 2), (3, 2)]), st.data())
    def test_random_damage_delivers_without_cycles(self, kn, data):
        k, n = kn
        g = fat_tree(k, n)
        hosts = [nd.name for nd in g.nodes if not nd.is_switch]
        cut = data.draw(st.lists(st.sampled_from(hosts), max_size=len(hosts) // 2, unique=True))
        tops = [nd.name for nd in g.nodes if nd.name.startswith("s0_")]
        cut += data.draw(st.lists(st.sampled_from(tops), max_size=len(tops) - 1, unique=True))
        g = without(g, cut).with_lids()
        r = check_routes(ftree.compute(g, {}))
        # every pair of CAs is delivered (a leaf left without hosts is a switch hanging below the
        # tree: other switches may have no up-then-down route to its LID, as in OpenSM)
        assert not r.cycle and not len(r.loops), r.summary(g)
        ca = ~g.is_switch[g.ep_node]
        assert not (ca[r.unreachable[:, 0]] & ca[r.unreachable[:, 1]]).any(), r.summary(g)


class TestRefusals:
    @pytest.mark.parametrize("fabric, reason", [
        (torus((4, 4)), "joins two switches with channel adapters"),
        (hypercube(3), "joins two switches with channel adapters"),
        (irregular(8, links_per_switch=3, hosts_per_switch=1, seed=1), "joins two switches with channel adapters"),
        (mesh((3,), hosts_per_switch=0), "no channel adapter"),
    ])  # fmt: skip
    def test_non_trees_get_one_line_naming_the_reason(self, fabric, reason):
        with pytest.raises(ConfigError, match="not a fat-tree") as exc:
            ftree.compute(fabric.with_lids(), {})
        assert reason in str(exc.value) and "\n" not in str(exc.value)

    def test_links_within_a_level_above_the_leaves(self):
        g = fat_tree(2, 3)
        links = g.links + [Link(g.index("s1_00"), 5, g.index("s1_11"), 5)]
        nodes = [NodeSpec(nd.name, nd.is_switch, 5 if nd.name in ("s1_00", "s1_11") else nd.num_ports) for nd in g.nodes]
        with pytest.raises(ConfigError, match="s1_00 port 5 - s1_11 joins two switches of level 1"):
            ftree.compute(FabricGraph(nodes, links).with_lids(), {})

    def test_lmc_and_unknown_options(self):
        with pytest.raises(ConfigError, match="LMC > 0"):
            ftree.compute(fat_tree(2, 2).with_lids(lmc=1), {})
        with pytest.raises(ConfigError, match="'connect_roots'.*true or false"):
            ftree.compute(fat_tree(2, 2).with_lids(), {"connect_roots": "maybe"})


@pytest.mark.parametrize("g", [fat_tree(4, 3), two_level(6, 2, 6, 1), without(fat_tree(4, 3), ["s1_00", "h5"])],
                         ids=["4-ary 3-tree", "two-level", "damaged"])
def test_past_64_up_ports_the_choices_are_the_same(g, monkeypatch):
    """Beyond 64 up ports a switch's candidates are not bit masks: the boolean-array branches of route()
    pick the same ports."""
    g = g.with_lids()
    with_bits = ftree.compute(g, {})
    monkeypatch.setattr(ftree, "_bits", lambda mask: None)
    without_bits = ftree.compute(g, {})
    assert np.array_equal(with_bits.lft, without_bits.lft)
