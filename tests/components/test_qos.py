"""QoS arithmetic, traffic classes, admission and establishment (Alfaro et al. 2001 §§4-5), without simulation."""

from __future__ import annotations

import doctest
import importlib
from fractions import Fraction

import numpy as np
import pytest

from ibfabric.components.qos import (
    FRAME_BITS,
    PAPER_RANGES,
    SLOTS_PER_FRAME,
    Admission,
    ClassMap,
    Connection,
    Rejection,
    category,
    establish,
    frame_time,
    link_rate_of,
    slots_for,
    slots_from_frame_time,
)
from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.errors import ConfigError
from ibfabric.plugins.arbitration.alfaro2001 import Alfaro2001
from ibfabric.plugins.routing.minhop import compute as minhop
from ibfabric.topologies.generators import mesh


class TestFrame:
    def test_frame_is_a_full_table(self):
        assert SLOTS_PER_FRAME == 64 * 255 == 16320
        assert FRAME_BITS == 16320 * 64 * 8

    @pytest.mark.parametrize("rate, ms", [(2.5e9, 3.342336), (10e9, 0.835584), (30e9, 0.278528)])
    def test_t_frame_is_table_1(self, rate, ms):
        assert frame_time(rate) / 1e6 == ms  # exactly, in ms
        assert frame_time(rate) == ms * 1e6  # and in ns

    def test_link_names(self):
        assert [frame_time(link_rate_of(w)) for w in ("1x", "4x", "12x")] == [3342336.0, 835584.0, 278528.0]
        assert link_rate_of("2.5Gbps") == 2.5e9
        with pytest.raises(ConfigError, match="bad link rate 'fast'"):
            link_rate_of("fast")

    @pytest.mark.parametrize("bw, n", [(8e3, 1), (64e3, 1), (1.55e6, 11), (64e6, 418), (300e6, 1959), (2.5e9, 16320)])
    def test_slots_by_hand(self, bw, n):
        # 1x: one slot per frame is 2.5e9 / 16320 = 153,186.27 bit/s
        assert slots_for(bw, 2.5e9) == n

    def test_slots_round_up_exactly_at_whole_slots(self):
        # 2.5 Gb/s / 16320 is not a float; with exact arithmetic k slots' worth needs exactly k slots
        for k in (1, 255, 418, 16320):
            assert slots_for(Fraction(k * 2_500_000_000, 16320), 2.5e9) == k
            assert slots_for(Fraction(k * 2_500_000_000, 16320) + Fraction(1, 10**9), 2.5e9) == k + 1

    @pytest.mark.parametrize("rate", [2.5e9, 10e9, 30e9])
    def test_both_forms_agree(self, rate):
        # ceil(B / B_link x 16320) == ceil(B x T_frame / 512), on a grid and right at every slot boundary
        t = frame_time(rate)
        grid = [float(b) for b in np.geomspace(1e3, rate, 400)]
        bounds = [k * rate / 16320 for k in range(1, 16321, 37)]
        for b in grid + bounds + [x * (1 + 1e-12) for x in bounds]:
            assert slots_for(b, rate) == slots_from_frame_time(b, t), b

    def test_bad_values(self):
        with pytest.raises(ConfigError, match="bandwidth must be > 0"):
            slots_for(0, 2.5e9)
        with pytest.raises(ConfigError, match="link rate must be > 0"):
            frame_time(0)


class TestClasses:
    @pytest.mark.parametrize("bw, cat", [(8e3, 0), (64e3, 0), (64e3 + 1, 1), (1.55e6, 1), (1.55e6 + 1, 2),
                                         (64e6, 2), (64e6 + 1, 3), (1e9, 3)])
    def test_bandwidth_categories(self, bw, cat):
        assert category(bw) == cat

    def test_default_map(self):
        m = ClassMap()
        assert [m.sl_for("DB", b) for b in (1e3, 1e6, 1e7, 1e8)] == [0, 1, 2, 3]
        assert [m.sl_for("DBTS", b) for b in (1e3, 1e6, 1e7, 1e8)] == [4, 5, 6, 7]
        assert (m.sl_for("BE"), m.sl_for("CH")) == (8, 9)
        assert m.sl2vl == tuple(range(10)) + (8,) * 6  # SLs of no class ride the BE VL
        assert m.num_vls == 10
        assert [m.is_high(s) for s in (3, 4, 7, 8)] == [False, True, True, False]
        assert [m.class_of(s) for s in (0, 5, 8, 9, 12)] == ["DB", "DBTS", "BE", "CH", "BE"]

    def test_vl15_is_never_a_data_vl(self):
        with pytest.raises(ConfigError, match="a data VL 0..14"):
            ClassMap(sl2vl=[15] + [0] * 15)

    def test_fewer_vls(self):
        # DB on VLs 0-3, DBTS on VL 4, BE and CH share VL 5: six data VLs
        m = ClassMap(sl2vl=[0, 1, 2, 3, 4, 4, 4, 4, 5, 5] + [5] * 6)
        assert m.num_vls == 6

    def test_dbts_and_others_cannot_share_a_vl(self):
        with pytest.raises(ConfigError, match="VL 3 carries both DBTS"):
            ClassMap(sl2vl=[0, 1, 2, 3, 3, 5, 6, 7, 8, 9] + [8] * 6)

    def test_unknown_class(self):
        with pytest.raises(ConfigError, match=r"unknown traffic class 'GOLD' \(valid: DBTS, DB, BE, CH\)"):
            ClassMap().sl_for("GOLD")


def two_switches() -> FabricGraph:
    """a, c on sw0; b, d on sw1; one link sw0 port 3 <-> sw1 port 3.  Hosts 0..3 are a, b, c, d."""
    nodes = [NodeSpec("sw0", True, 4), NodeSpec("sw1", True, 4)] + [NodeSpec(n, False, 1) for n in "abcd"]
    links = [Link(2, 1, 0, 1), Link(4, 1, 0, 2), Link(0, 3, 1, 3), Link(3, 1, 1, 1), Link(5, 1, 1, 2)]
    return FabricGraph(nodes, links).with_lids()


@pytest.fixture
def adm():
    return Admission(minhop(two_switches()), Alfaro2001(), rate=2.5e9)


def free(adm, name):
    return next(pt.free_slots() for hop, pt in adm.ports.items() if adm.port_name(*hop) == name)


class TestAdmission:
    def test_paths_start_at_the_host_interface(self, adm):
        names = lambda s, d: [adm.port_name(*h) for h in adm.path(s, d)]  # noqa: E731
        assert names(0, 1) == ["a port 1", "sw0 port 3", "sw1 port 1"]
        assert names(2, 0) == ["c port 1", "sw0 port 1"]
        assert len(adm.ports) == 10  # every connected port of every node
        with pytest.raises(ConfigError, match="two different hosts"):
            adm.path(1, 1)

    def test_rate_must_be_known(self):
        with pytest.raises(ConfigError, match="link rate unknown"):
            Admission(minhop(two_switches()), Alfaro2001())

    def test_reserved_on_every_port_of_the_path(self, adm):
        c = adm.connect(0, 1, 1e9)  # 6528 slots
        assert isinstance(c, Connection) and c.sl == 3 and c.id == 1
        for name in ("a port 1", "sw0 port 3", "sw1 port 1"):
            assert free(adm, name) == 13055 - 6528
        for name in ("b port 1", "sw1 port 3", "c port 1"):
            assert free(adm, name) == 13055

    def test_rejection_reserves_nothing(self, adm):
        assert isinstance(adm.connect(3, 1, 1e9), Connection)  # d -> b: sw1 port 1 has 6527 slots left
        rej = adm.connect(2, 1, 1e9)  # c -> b: fits c port 1 and sw0 port 3, not the last hop
        assert isinstance(rej, Rejection)
        assert (rej.port, rej.reason) == ("sw1 port 1", "bandwidth: sw1 port 1 needs 6528 slots, 6527 left")
        assert free(adm, "c port 1") == free(adm, "sw0 port 3") == 13055
        assert free(adm, "sw1 port 1") == 6527
        assert list(adm.connections) == [1] and adm.rejections == {"bandwidth": 1}
        assert isinstance(adm.connect(2, 1, 0.9e9), Connection)  # 5876 slots do fit
        assert free(adm, "sw1 port 1") == 6527 - 5876

    def test_release(self, adm):
        c = adm.connect(0, 1, 64e6)
        adm.release(c.id)
        assert all(pt.free_slots() == 13055 for pt in adm.ports.values())
        with pytest.raises(ConfigError, match="no established connection 1"):
            adm.release(c.id)

    def test_class_gives_the_sl(self, adm):
        assert adm.connect(0, 1, 1e6, cls="DBTS").sl == 5
        assert adm.connect(0, 1, 1e6).sl == 1
        assert adm.connect(0, 1, 1e6, sl=9).cls == "CH"


class TestEstablish:
    @pytest.fixture
    def net(self):
        # 2x2 mesh, 3 hosts per switch, 1x SDR (2 Gb/s data) links
        return mesh((2, 2), hosts_per_switch=3, width="1x", speed="SDR").with_lids()

    def run(self, net, n, seed=1, retries=50):
        adm = Admission(minhop(net), Alfaro2001())
        return adm, establish(adm, n, np.random.default_rng(seed), retries=retries)

    def test_equal_numbers_per_sl_in_their_ranges(self, net):
        adm, est = self.run(net, 42)
        assert est.established == 42 and est.exhausted_sl is None
        assert est.accepted == {0: 11, 1: 11, 2: 10, 3: 10}
        for c in est.connections:
            lo, hi = PAPER_RANGES[c.sl]
            assert lo <= c.bandwidth <= hi and c.src != c.dst
        assert all(est.attempts[s] >= est.accepted[s] for s in est.accepted)

    def test_stops_when_an_sl_runs_out_of_retries(self, net):
        adm, est = self.run(net, 10_000)
        assert est.exhausted_sl is not None and est.established < 10_000
        counts = list(est.accepted.values())
        assert max(counts) - min(counts) <= 1
        # the failing SL used up its retries on the connection it could not place
        assert est.attempts[est.exhausted_sl] >= est.accepted[est.exhausted_sl] + 50

    def test_bookkeeping_matches_the_paths(self, net):
        adm, est = self.run(net, 10_000)
        used = {hop: 3265 for hop in adm.ports}  # BE and CH
        for c in est.connections:
            for hop in adm.path(c.src, c.dst):
                used[hop] += slots_for(c.bandwidth, adm.ports[hop].rate)
        assert {hop: pt.used for hop, pt in adm.ports.items()} == used
        assert max(used.values()) <= SLOTS_PER_FRAME

    def test_a_retry_redraws_the_bandwidth_or_keeps_it(self):
        # an admission that refuses the first three attempts of every connection: 'all' asks four
        # bandwidths per connection, 'endpoints' the same one four times
        class Refuse3:
            num_hosts = 4

            def __init__(self):
                self.asked = []

            def connect(self, src, dst, bw, **kw):
                self.asked.append(bw)
                if len(self.asked) % 4:
                    return "refused"
                return Connection(len(self.asked), src, dst, kw["sl"], bw)

        for redraw, distinct in (("all", 4), ("endpoints", 1)):
            adm = Refuse3()
            est = establish(adm, 3, np.random.default_rng(1), retries=4, redraw=redraw)
            assert est.established == 3
            for k in range(3):
                assert len(set(adm.asked[4 * k:4 * k + 4])) == distinct
                assert est.connections[k].bandwidth == adm.asked[4 * k + 3]
        with pytest.raises(ConfigError, match="'redraw' must be one of"):
            establish(Refuse3(), 1, np.random.default_rng(1), redraw="bandwidth")

    def test_redraw_is_the_same_while_nothing_is_refused(self, net):
        adm = Admission(minhop(net), Alfaro2001())
        a = establish(adm, 20, np.random.default_rng(2), redraw="all")
        adm = Admission(minhop(net), Alfaro2001())
        b = establish(adm, 20, np.random.default_rng(2), redraw="endpoints")
        assert a.connections == b.connections

    def test_random_sl_order(self, net):
        adm = Admission(minhop(net), Alfaro2001())
        est = establish(adm, 200, np.random.default_rng(5), order="random")
        sls = [c.sl for c in est.connections]
        assert est.established == 200 and set(sls) == {0, 1, 2, 3}
        assert sls[:8] != [0, 1, 2, 3, 0, 1, 2, 3]  # not in turn
        assert sum(est.accepted.values()) == 200 and max(est.accepted.values()) - min(est.accepted.values()) > 1
        with pytest.raises(ConfigError, match="'order' must be one of"):
            establish(adm, 1, np.random.default_rng(1), order="byclass")

    def test_same_seed_same_connections_and_prefixes_agree(self, net):
        _, full = self.run(net, 10_000, seed=3)
        _, again = self.run(net, 10_000, seed=3)
        _, part = self.run(net, 40, seed=3)
        assert full.connections == again.connections
        assert part.connections == full.connections[:40]
        _, other = self.run(net, 40, seed=4)
        assert other.connections != part.connections


@pytest.mark.parametrize("module", ["ibfabric.components.qos", "ibfabric.plugins.arbitration.alfaro2001"])
def test_doctests(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
