"""Multicast bandwidth allocation policies (Kim et al. 2007 §3.6.2, Fig. 10f): the tables each
policy computes, and the share of a contended output port each gives multicast in a simulation."""

from __future__ import annotations

import math

import pytest

from ibfabric.components.qos.mcastbw import POLICIES, plan, weights_for
from ibfabric.components.routing.mgroups import MulticastGroup
from ibfabric.errors import ConfigError
from ibfabric.simulation import Simulation

from .conftest import STAR

KIM = {"**.numVLs": "15", "**.slPriority": '"1 0"', "**.outputBufferSize": "0B", "**.mtu": "1024B", "**.traffic": "uniform",
       "**.load": "0.01", "**.realtimeLoad": "0.01", "**.realtimeSL": "1", "**.realtimeMulticast": "0.5",
       "**.multicastGroups": "g1: 0 5 senders=*; g2: 3 9 11 14 senders=*; g3: 2 12 senders=*"}


def group(name, n):
    return MulticastGroup(name, 0, tuple(range(n)), tuple(range(n)), tuple(range(n)), tuple(range(n)))


class Host:
    traffic, traffic_sls = "uniform", [0]
    realtime_load, realtime_sl, realtime_sls = 0.1, 1, 1


class TestWeights:
    @pytest.mark.parametrize("policy, two, four", [
        ("separate", 64, 64),
        ("linear", 128, 256),
        ("logarithmic", round(64 * (1 + math.log(2))), round(64 * (1 + math.log(4)))),
    ])
    def test_vl_weights_for_two_and_four_members(self, policy, two, four):
        bw = plan(policy, {}, [group("a", 2), group("b", 4)], [Host()])
        assert bw.group_sls == ((2,), (3,)) and bw.ref_sl == 1 and not bw.priority
        table = tuple((vl, 64) for vl in range(15))
        out = weights_for(table, 1, bw.factors)
        weights = {}
        for vl, w in out:
            weights[vl] = weights.get(vl, 0) + w
            assert w <= 255
        assert weights[2] == two and weights[3] == four
        assert all(weights[vl] == 64 for vl in (0, 1, 4, 14))

    def test_heavy_weight_is_split_over_entries(self):
        out = weights_for(((0, 64), (1, 100)), 1, {5: 4.0})
        assert out == ((0, 64), (1, 100), (5, 255), (5, 145))

    def test_shared_keeps_the_tables(self):
        bw = plan("shared", {}, [group("a", 2)], [Host()])
        assert bw.priority and bw.factors == {} and bw.group_sls == ((),)

    def test_fewer_vls_than_groups_take_the_largest_weight(self):
        bw = plan("linear", {"vls": "1", "sl": "6"}, [group("a", 2), group("b", 4)], [Host()])
        assert bw.group_sls == ((6,), (6,)) and bw.factors == {6: 4.0}

    def test_groups_with_several_vls(self):
        bw = plan("separate", {"vls": "6"}, [group("a", 2), group("b", 4), group("c", 2)], [Host()])
        assert bw.group_sls == ((2, 5), (3, 6), (4, 7))

    @pytest.mark.parametrize("opts, msg", [
        ({"sl": "1"}, "also carries unicast"),
        ({"vls": "0"}, "'vls' must be an integer 1..15"),
        ({"ref": "2"}, "reference SL 2 is a multicast SL"),
        ({"size": "3"}, "no option 'size'"),
    ])
    def test_bad_options(self, opts, msg):
        with pytest.raises(ConfigError, match=msg):
            plan("linear", opts, [group("a", 2)], [Host()])

    def test_unknown_policy_lists_the_valid_ones(self):
        with pytest.raises(ConfigError, match="shared, separate, linear, logarithmic"):
            plan("cubic", {}, [group("a", 2)], [Host()])
        assert list(POLICIES) == ["shared", "separate", "linear", "logarithmic"]


@pytest.fixture(scope="module")
def sim():
    return Simulation("kim2007_15", overrides=dict(KIM, **{"**.multicastBandwidth": "linear"}), seed=1)


class TestInstalled:
    def test_every_port_maps_the_multicast_sls_to_their_vls(self, sim):
        sim.run("1ns")
        for node in sim.ib_nodes:
            if node.is_switch:
                tables = [t for rx in node.rx.values() for t in rx.sl2vl_out if t is not None]
            else:
                tables = [tx.sl2vl for tx in node.tx.values()]
            assert tables and all(t[2] == 2 and t[3] == 3 and t[4] == 4 and t[1] == 1 for t in tables)

    def test_arbitration_tables_weight_each_group(self, sim):
        for node in sim.ib_nodes:
            for tx in node.tx.values():
                w = {}
                for vl, x in tx.arbiter.low:
                    w[vl] = w.get(vl, 0) + x
                assert (w[1], w[2], w[3], w[4]) == (64, 128, 256, 128)
                if node.is_switch and hasattr(tx, "mprio"):
                    assert tx.mprio is False

    def test_groups_send_on_their_sls_and_hosts_queue_them_after_the_reference(self, sim):
        assert sim.multicast.sls == [[2], [3], [4]]
        h = sim.hosts[0]
        assert h.sl_order[:5] == [1, 2, 3, 4, 0]
        s = sim.run("3ms")
        assert s["multicast"]["groups"]["g2"]["complete"] > 0 and s["conservation_ok"]

    def test_synchronous_replication_cannot_share_by_weight(self):
        ov = dict(KIM, **{"**.multicastBandwidth": "separate", "**.replication": "synchronous"})
        with pytest.raises(ConfigError, match="synchronous"):
            Simulation("kim2007_15", overrides=ov).run("1ns")

    def test_too_few_vls_is_an_error(self):
        ov = dict(KIM, **{"**.multicastBandwidth": "separate", "**.numVLs": "3"})
        with pytest.raises(ConfigError, match="has 3 data VLs"):
            Simulation("kim2007_15", overrides=ov).run("1ns")


def shares(policy: str, engine: str = "asynchronous", n: int = 400):
    """h0 multicasts to h1..h3 and h4 sends unicast to h1, both saturating: the multicast share of
    the packets (all 256 bytes) reaching h1 while both compete (until either flow is done)."""
    ov = {"**.multicastGroups": "g: 1 2 3 senders=0", "**.replication": engine, "**.numVLs": "2",
          "**.multicastBandwidth": policy}
    if policy != "shared":
        ov["**.multicastBandwidthOptions"] = "sl=1 ref=0"
    sim = Simulation(STAR, overrides=dict(ov, **{"star.k": "5"}), check=True)
    h0, h1, h4 = sim.hosts[0], sim.hosts[1], sim.hosts[4]

    def start():
        for _ in range(n):
            h0.send_multicast("g", 256)
            h4.send_packet(_unicast(sim, h4, h1))

    sim.call_at(0.0, start)
    s = sim.run("2ms")
    assert s["conservation_ok"] and s["multicast"]["groups"]["g"]["complete"] == n
    log = sim.stats.arrays()
    at_h1 = log["dst"] == 1
    t = log["delivered_at"][at_h1]
    uni = log["src"][at_h1] == 4
    cut = min(t[uni].max(), t[~uni].max())  # both flows compete until one of them is done
    window = t <= cut
    return float((~uni[window]).sum() / window.sum())


def _unicast(sim, a, b):
    from ibfabric.components.packet import Packet

    return Packet.make(a.lid, b.lid, 256, src=sim.traffic_index(a), dst=sim.traffic_index(b),
                       msg=sim.next_message_id())


class TestShares:
    def test_shared_vls_give_multicast_priority(self):
        assert shares("shared") > 0.95

    @pytest.mark.parametrize("policy, expected", [
        ("separate", 1 / 2),
        ("linear", 3 / 4),
        ("logarithmic", (1 + math.log(3)) / (2 + math.log(3))),
    ])
    @pytest.mark.parametrize("engine", ["asynchronous", "central-buffer"])
    def test_separate_vls_share_by_weight(self, policy, expected, engine):
        assert shares(policy, engine) == pytest.approx(expected, abs=0.03)


def test_an_explicit_sl_priority_listing_the_multicast_sls_is_kept():
    ov = dict(KIM, **{"**.multicastBandwidth": "separate", "**.slPriority": '"1 2 3 0 4"'})
    sim = Simulation("kim2007_15", overrides=ov, seed=1)
    sim.run("1ns")
    assert sim.hosts[0].sl_order[:5] == [1, 2, 3, 0, 4]
