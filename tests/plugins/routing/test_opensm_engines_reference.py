"""ftree, sssp, dfsssp, lash, dnup and dor against OpenSM 3.3.23's tables (committed data; OpenSM is not needed).

topologies/data/opensm/engines/README.md says how the data was made (ibsim + opensm -o)
and what each engine agrees on.
"""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from test_opensm_reference import lid_hops

from ibfabric.components.routing.opensm import read_lfts, short_names, with_dump_identity
from ibfabric.components.routing.routecheck import check_routes
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import dnup, dor, ftree, lash, minhop, sssp
from ibfabric.plugins.routing._common import SwitchView
from ibfabric.plugins.routing._layers import Routes
from ibfabric.plugins.routing.metrics import walk_pairs
from ibfabric.topologies import generators

DATA = Path(__file__).resolve().parents[3] / "topologies" / "data" / "opensm" / "engines"
MANIFEST = json.loads((DATA / "manifest.json").read_text())


def runs(engine):
    return [(f, r) for f, spec in MANIFEST["fabrics"].items() for r, m in spec["runs"].items() if m["engine"] == engine]


def fabric_of(name):
    spec = MANIFEST["fabrics"][name]
    return getattr(generators, spec["generator"])(**spec["kwargs"])


def meta(name, run):
    return MANIFEST["fabrics"][name]["runs"][run]


def dump(name, run):
    return gzip.decompress((DATA / meta(name, run)["file"]).read_bytes()).decode()


def opensm(name, run):
    """The fabric with OpenSM's LIDs and ibsim's GUIDs, and OpenSM's tables on it."""
    text = dump(name, run)
    g = with_dump_identity(fabric_of(name), text)
    return g, read_lfts(f"{name}.{run}", g, text=text)


def ca_routes(tables):
    """Every CA-to-CA route, hop by hop: (links per pair, {(pair, switch, output port)})."""
    g = tables.fabric
    ca = np.flatnonzero(~g.is_switch[g.ep_node])
    src, dst = np.repeat(ca, len(ca)), np.tile(ca, len(ca))
    keep = src != dst
    hops, node, port, pair = walk_pairs(tables, src[keep], dst[keep])
    return hops, set(zip(pair.tolist(), node.tolist(), port.tolist()))


def owned(g):
    return np.flatnonzero(g.lid_owner >= 0)


def sl_table(g, path):
    """A (source LID, destination LID) table of OpenSM's (``.vls``, ``.sls``: see the README)."""
    lines = path.read_text().splitlines()
    lids = [int(v) for v in lines[0].split()[1:]]
    assert sorted(lids) == owned(g).tolist()
    table = np.zeros((g.max_lid + 1, g.max_lid + 1), dtype=np.int64)
    for line in lines[1:]:
        src, row = line.split(": ")
        assert len(row) == len(lids)
        table[int(src), lids] = [0 if c == "-" else int(c, 16) for c in row]
    return table


class TestData:
    @pytest.mark.parametrize("name", sorted(MANIFEST["fabrics"]))
    def test_net_file_is_this_generator_output(self, name):
        assert generators.to_ibsim(fabric_of(name)) == (DATA / f"{name}.net").read_text()

    def test_every_engine_is_covered(self):
        engines = {m["engine"] for spec in MANIFEST["fabrics"].values() for m in spec["runs"].values()}
        assert engines == {"ftree", "sssp", "dfsssp", "lash", "dnup", "dor"}


class TestFtree:
    @pytest.mark.parametrize("name, run", runs("ftree"))
    def test_same_routes_between_adapters_and_same_hops_everywhere(self, name, run):
        # OpenSM's --connect_roots is our connect_roots option (ours defaults to true, OpenSM to false).
        g, theirs = opensm(name, run)
        connect = "--connect_roots" in meta(name, run)["command"]
        ours = ftree.compute(g, {"connect_roots": str(connect).lower()})
        assert np.array_equal(lid_hops(ours), lid_hops(theirs))
        assert (lid_hops(theirs) < 0).any() != connect
        # every CA-to-CA route takes the same links, hop by hop
        h_ours, r_ours = ca_routes(ours)
        h_theirs, r_theirs = ca_routes(theirs)
        assert (h_theirs > 0).all() and np.array_equal(h_ours, h_theirs) and r_ours == r_theirs
        # switch LIDs: the same port everywhere
        sw_lids = g.ep_lid[np.flatnonzero(g.is_switch[g.ep_node])]
        assert np.array_equal(ours.expanded()[:, sw_lids], theirs.expanded()[:, sw_lids])
        # The entries that differ (on fattree4x3 only: 384 at level-1 switches) are a CA LID's
        # up port at a switch that is not a neighbour of the LID's top switch R(d): no CA-to-CA
        # route passes there, only routes that start at switches.  Among those equal up ports
        # OpenSM and ours break the tie differently; hop counts agree.
        exp_o, exp_t = ours.expanded(), theirs.expanded()
        for r, lid in np.argwhere(exp_o != exp_t):
            top = int(ours.info["root_of"][lid])
            assert top >= 0 and top not in g.peer_node[g.switches[r]]

    @pytest.mark.parametrize("name, run", runs("ftree"))
    def test_same_ca_order(self, name, run):
        # opensm-ftree-ca-order.dump: the order of the CAs in which shift permutations are congestion-free
        g, _ = opensm(name, run)
        text = (DATA / meta(name, run)["ca_order"]).read_text().split()
        theirs = [(int(lid, 16), desc) for lid, desc in zip(text[::2], text[1::2])]
        names = short_names(g)
        ours = [(int(g.ep_lid[e]), names[g.ep_node[e]]) for e in ftree.compute(g, {}).info["ca_order"]]
        assert ours == theirs


class TestDor:
    @pytest.mark.parametrize("name, run", runs("dor"))
    def test_same_port_for_every_switch_and_lid(self, name, run):
        g, theirs = opensm(name, run)
        ours = dor.compute(g, {})
        lids = owned(g)
        assert np.array_equal(ours.expanded()[:, lids], theirs.expanded()[:, lids])
        # meshes and hypercubes cabled by dimension: dimension order is deadlock-free
        assert check_routes(ours).ok


class TestSssp:
    @pytest.mark.parametrize("name, run", runs("sssp") + runs("dfsssp"))
    def test_same_hop_counts_all_shortest(self, name, run):
        # The ports differ (6-11 % of the entries): OpenSM runs Dijkstra on a channel graph whose
        # weights start at P^2 and breaks ties its own way, routing LIDs in its own order; ours
        # takes the least accumulated weight among min-hop ports.  Both are shortest.
        g, theirs = opensm(name, run)
        ours = (sssp.compute_sssp if run == "sssp" else sssp.compute_dfsssp)(g, {})
        assert np.array_equal(lid_hops(ours), lid_hops(theirs))
        assert np.array_equal(lid_hops(theirs), lid_hops(minhop.compute(g, {})))

    @pytest.mark.parametrize("name", [f for f, _ in runs("dfsssp")])
    def test_dfsssp_same_tables_as_sssp_and_same_number_of_layers(self, name):
        g, _ = opensm(name, "dfsssp")
        assert dump(name, "dfsssp") == dump(name, "sssp")
        ours = sssp.compute_dfsssp(g, {})
        assert np.array_equal(ours.lft, sssp.compute_sssp(g, {}).lft)
        assert ours.info["layers_needed"] == meta(name, "dfsssp")["vls_needed"]
        vl, num_vls = ours.vl_function()
        assert check_routes(ours, vl=vl, num_vls=num_vls).ok

    @pytest.mark.parametrize("name", [f for f, _ in runs("dfsssp")])
    def test_opensm_dfsssp_layers_cover_routes_from_adapters_only(self, name):
        # OpenSM's dfsssp builds its channel dependency graphs from the routes of CA sources:
        # with its VLs, those are acyclic, but the routes from switch LIDs (left on VL 0) close
        # a cycle.  ours places every route (source switch, DLID), so all of them are acyclic.
        g, theirs = opensm(name, "dfsssp")
        table = sl_table(g, DATA / meta(name, "dfsssp")["vls"])  # dfsssp's VLs, from its debug log
        from_ca = ~g.is_switch[g.ep_node]

        def vl(src, dst, hop, node, port):
            v = table[g.ep_lid[src], g.ep_lid[dst]]
            return np.where(from_ca[src], v, 8 + v)  # routes from switches on VLs of their own

        both = check_routes(theirs, vl=vl, num_vls=16)
        assert not any(int(c.rsplit("VL", 1)[1]) < 8 for c in both.cycle)
        assert both.cycle  # the cycle is among the routes from switches
        ours = sssp.compute_dfsssp(g, {})
        assert not check_routes(ours, vl=ours.vl_function()[0], num_vls=ours.vl_function()[1]).cycle


def switch_routes_of(tables):
    """``to[x, a]``: the port of switch row x towards switch row a's LID (-1 on the diagonal)."""
    g = tables.fabric
    sw_lids = np.array([g.lid_of(int(n)) for n in g.switches])
    to = tables.expanded()[:, sw_lids].astype(np.int64)
    np.fill_diagonal(to, -1)
    return to


class TestLash:
    @pytest.mark.parametrize("name, run", runs("lash"))
    def test_same_hop_counts_all_shortest_switch_level_routes(self, name, run):
        g, theirs = opensm(name, run)
        ours = lash.compute(g, {})
        assert np.array_equal(lid_hops(ours), lid_hops(theirs))
        assert np.array_equal(lid_hops(theirs), lid_hops(minhop.compute(g, {})))
        # both route every LID of a switch (its CAs') like the switch's own LID
        view = SwitchView(g)
        lids = owned(g)
        at = view.att_row[lids]
        for t in (ours, theirs):
            exp = t.expanded()
            same = exp[:, lids] == switch_routes_of(t)[:, at]
            assert (same | (at[None, :] == np.arange(view.S)[:, None])).all()
        vl, num_vls = ours.vl_function()
        assert check_routes(ours, vl=vl, num_vls=num_vls).ok

    @pytest.mark.parametrize("name, run", runs("lash"))
    def test_layers_of_opensm_routes_equal_opensm_layers(self, name, run):
        # Given OpenSM's routes, our layering (pairs of switches in order, both directions into
        # the first layer that stays acyclic) puts as many pairs in each layer as OpenSM's.
        # On its own routes ours may need more layers (fig1: 2 against 1, irregular32: 4 against
        # 3): our routes balance next hops over the LIDs routed, OpenSM's take its BFS's first.
        g, theirs = opensm(name, run)
        view = SwitchView(g)
        routes = Routes(view, switch_routes_of(theirs))
        layer, needed = lash._assign(routes, view.S, 15, lash._initial_order(view, routes))
        m = meta(name, run)
        assert needed == m["lanes_needed"]
        off_diagonal = layer[~np.eye(view.S, dtype=bool)]
        assert np.bincount(off_diagonal, minlength=needed).tolist() == m["per_layer_before_balancing"]

    @pytest.mark.parametrize("name, run", runs("lash"))
    def test_path_sls_per_pair_of_switches_deadlock_free(self, name, run):
        # OpenSM's path SLs, from its SA (saquery): one SL per pair of switches, the same both
        # ways, as ours; with them OpenSM's tables are deadlock-free, as ours are with theirs.
        g, theirs = opensm(name, run)
        sl = sl_table(g, DATA / meta(name, run)["sls"])
        view = SwitchView(g)
        lids = owned(g)
        at = view.att_row[lids]
        per_pair = {}
        for i, s in enumerate(lids):
            for j, d in enumerate(lids):
                if at[i] != at[j]:
                    assert per_pair.setdefault((at[i], at[j]), sl[s, d]) == sl[s, d]
        assert all(per_pair[b, a] == v for (a, b), v in per_pair.items())
        report = check_routes(theirs, vl=lambda src, dst, hop, node, port: sl[g.ep_lid[src], g.ep_lid[dst]], num_vls=16)
        assert report.ok, report.cycle
        # OpenSM balances the pairs over the layers it needs only; ours (balance=true) over all
        # `vls` SLs.  Without balancing ours uses as many SLs as it needs layers.
        assert len(set(per_pair.values())) == meta(name, run)["lanes_needed"]
        ours = lash.compute(g, {"balance": "false"})
        assert ours.info["sls_used"] == ours.info["layers_needed"]


class TestDnup:
    @pytest.mark.parametrize("name, run", runs("dnup"))
    def test_same_hop_counts_where_ranks_order_every_link(self, name, run):
        g, theirs = opensm(name, run)
        rank = dnup.ca_ranks(SwitchView(g))
        nbr = SwitchView(g).nbr
        level_link = ((nbr >= 0) & (rank[np.maximum(nbr, 0)] == rank[:, None])).any()
        if level_link:
            # Links between equal ranks: OpenSM takes them in either direction (its dnup_get_dir
            # says EQUAL and only a down-then-up step is illegal), so its routes are min-hop and
            # may deadlock; ours orders equal ranks by GUID, which keeps up*/down* acyclic.
            assert np.array_equal(lid_hops(theirs), lid_hops(minhop.compute(g, {})))
            assert check_routes(theirs).cycle
            try:
                ours = dnup.compute(g, {})
            except ConfigError as exc:
                # with every switch at rank 0 (a CA on each) GUID order alone leaves pairs
                # without a legal route: ours refuses, naming one
                assert "no legal down*/up* route" in str(exc) and "\n" not in str(exc)
                assert (rank == 0).all()
                return
            assert check_routes(ours).ok
            assert np.array_equal(lid_hops(ours) >= 0, lid_hops(theirs) >= 0)
        else:
            # fat-trees: the ranks order every link, both engines are the same up*/down*: same
            # hop counts, the same (switch, LID) pairs unrouted (one top switch from another)
            ours = dnup.compute(g, {})
            assert np.array_equal(lid_hops(ours), lid_hops(theirs))
            assert not check_routes(ours).cycle and not check_routes(theirs).cycle
