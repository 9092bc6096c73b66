"""ibfabric's engines against OpenSM 3.3.23's tables (committed dumps; OpenSM itself is not needed).

topologies/data/opensm/README.md says how the dumps were made (ibsim + opensm -o).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from ibfabric.components.routing.opensm import read_lfts, with_dump_identity, write_lfts
from ibfabric.components.routing.routecheck import check_routes
from ibfabric.components.routing.tables import NO_PORT
from ibfabric.plugins.routing import fera, minhop, pira, updn
from ibfabric.topologies import generators

DATA = Path(__file__).resolve().parents[3] / "topologies" / "data" / "opensm"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
FABRICS = sorted(MANIFEST["fabrics"])


def fabric_of(name):
    spec = MANIFEST["fabrics"][name]
    return getattr(generators, spec["generator"])(**spec["kwargs"])


def dump(name, run):
    return (DATA / MANIFEST["fabrics"][name]["runs"][run]["file"]).read_text()


def lid_hops(tables):
    """Links from every switch to every LID's owner following the tables (-1: not delivered)."""
    g = tables.fabric
    exp = tables.expanded().astype(np.int64)
    S, L = exp.shape
    lids = np.flatnonzero(g.lid_owner >= 0)
    node = np.repeat(g.switches, len(lids))
    lid = np.tile(lids, S)
    hops = np.zeros(len(node), dtype=np.int64)
    out = np.full(len(node), -1, dtype=np.int64)
    active = np.arange(len(node))
    for _ in range(S + 2):
        p = exp[g.switch_row[node[active]], lid[active]]
        stop = (p == 0) | (p == NO_PORT)
        out[active[p == 0]] = hops[active[p == 0]]
        active, p = active[~stop], p[~stop]
        nxt = g.peer_node[node[active], p]
        hops[active] += 1
        at_ca = ~g.is_switch[nxt]
        out[active[at_ca]] = hops[active[at_ca]]
        node[active] = nxt
        active = active[~at_ca]
        if not len(active):
            break
    return out.reshape(S, len(lids))


class TestAgainstOpenSM:
    @pytest.mark.parametrize("name", FABRICS)
    def test_net_file_is_this_generator_output(self, name):
        assert generators.to_ibsim(fabric_of(name)) == (DATA / f"{name}.net").read_text()

    @pytest.mark.parametrize("name, run", [(n, r) for n in FABRICS for r in MANIFEST["fabrics"][n]["runs"] if r.startswith("minhop")])
    def test_minhop_hop_counts_equal_opensm(self, name, run):
        text = dump(name, run)
        g = with_dump_identity(fabric_of(name), text)
        assert g.lid_owner.max() >= 0 and int(g.ep_lmc.max()) == MANIFEST["fabrics"][name]["runs"][run]["lmc"]
        theirs = read_lfts(run, g, text=text)
        ours = minhop.compute(g, {})
        h_ours, h_theirs = lid_hops(ours), lid_hops(theirs)
        assert (h_theirs >= 0).all()
        assert np.array_equal(h_ours, h_theirs)

    @pytest.mark.parametrize("name", FABRICS)
    def test_updn_same_root_connected_deadlock_free_not_longer(self, name):
        meta = MANIFEST["fabrics"][name]["runs"]["updn"]
        text = dump(name, "updn")
        g = with_dump_identity(fabric_of(name), text)
        theirs = check_routes(read_lfts("updn", g, text=text))
        ours_t = updn.compute(g, {"root": meta["root"]})
        ours = check_routes(ours_t)
        assert ours.ok, ours.summary(g)
        assert len(theirs.unreachable) == 0
        assert ours.mean_hops <= theirs.mean_hops
        # both are up*/down* with the same root and the same equal-level rule (lower GUID is up)
        assert ours_t.info["root"] == meta["root"]

    @pytest.mark.parametrize("name, run", [(n, r) for n in FABRICS for r in MANIFEST["fabrics"][n]["runs"] if r.endswith("-file")])
    def test_opensm_file_engine_loads_our_dumps_unchanged(self, name, run):
        # OpenSM was started with -R file -U <our dump>, and dumped back exactly what we wrote
        text = dump(name, run)
        g = with_dump_identity(fabric_of(name), text)
        ours = fera.compute(g, {}) if run == "fera-file" else pira.compute(g, {}, np.random.default_rng(1))
        assert write_lfts(ours) == text

    def test_opensm_updn_turns_down_up_where_ours_does_not(self):
        # OpenSM 3.3.23's updn fixes each switch's direction at its first BFS visit and then lets
        # the min-hop balancing pick any least-hop port, which can be an up port after a down
        # link: on irregular32 its tables have a channel-dependency cycle.  ibfabric's two-state
        # search, on the same up*/down* graph (same root, same GUIDs), has none.
        from ibfabric.plugins.routing._common import SwitchView
        from ibfabric.plugins.routing._updown import UpDown
        from test_updn import legal

        text = dump("irregular32", "updn")
        g = with_dump_identity(fabric_of("irregular32"), text)
        theirs = read_lfts("updn", g, text=text)
        ud = UpDown(SwitchView(g), int(g.switch_row[g.index("sw0")]))
        assert not legal(theirs, ud) and check_routes(theirs).cycle
        ours = updn.compute(g, {"root": "sw0"})
        assert legal(ours, ud) and not check_routes(ours).cycle
