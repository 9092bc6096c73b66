"""Traffic sources draw destinations by index into one DLID list every HCA shares (issue "Faster and
bigger": memory O(hosts + ports)), and send exactly what the old per-HCA list of every host's DLID sent."""

from __future__ import annotations

import copy
import types
from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric.components.hca.realtime import ControlSource
from ibfabric.components.hca.sources import _BATCH, SplitSource, TrafficSource
from ibfabric.simulation import Simulation
from ibfabric.topologies.generators import irregular, to_ned

PATTERNS = ["uniform", "bit-reversal", "transpose", "shuffle", "hot-spot"]


def old_dlids(sim, hca) -> list[int]:
    """The old definition (one list per HCA, hosts entries each): the DLID the routing gives packets
    from *hca*'s first port to every host's first port, host by host."""
    g = sim.tables.fabric
    index = {id(n): i for i, n in enumerate(sim.ib_nodes)}
    eps = np.array([g.endpoint_of(index[id(h)], h.first_port) for h in sim.hosts], dtype=np.int64)
    src_ep = int(eps[sim.hosts.index(hca)])
    return [int(x) for x in np.array(sim.tables.dlids(src_ep, eps), dtype=np.int64)]


def old_adaptive_dlids(sim, dlids) -> list[int]:
    owner, lmc = sim.fabric.lid_owner, sim.fabric.ep_lmc
    return [d | 1 if d < len(owner) and owner[d] >= 0 and lmc[owner[d]] > 0 else d for d in dlids]


def old_path_counts(sim, dlids) -> list[int]:
    owner, lmc = sim.fabric.lid_owner, sim.fabric.ep_lmc
    return [1 << (int(lmc[owner[d]]) - 1) if d < len(owner) and owner[d] >= 0 and lmc[owner[d]] > 0 else 0
            for d in dlids]


def sources(sim) -> list:
    """The traffic source of every host that has one (a TrafficSource or the parts of a SplitSource)."""
    out = []
    for h in sim.hosts:
        s = h.tx[h.first_port].source if h.first_port is not None else None
        if isinstance(s, SplitSource):
            out.extend(s.parts)
        elif isinstance(s, TrafficSource):
            out.append(s)
    return out


def fabric_sim(switches, hosts, lmc, routing, pattern, seed, **over) -> Simulation:
    fabric = irregular(switches, links_per_switch=3, hosts_per_switch=hosts, seed=seed).with_lids(lmc=lmc)
    ov = {"**.traffic": f'"{pattern}"', "**.load": "0.5", **over}
    return Simulation(to_ned(fabric, name="f", routing=routing), overrides=ov, seed=seed)


def replay(source: TrafficSource, messages: int = 60):
    """Packets a fresh copy of *source* (the same pattern, DLIDs and a copy of its generator) creates,
    and the destinations its pattern draws from another copy of that generator, by the old order of
    draws (a batch of gaps, then a batch of destinations)."""
    hca = source.hca
    rng = copy.deepcopy(source.rng)
    expected_rng = copy.deepcopy(rng)
    expected_rng.exponential(source.mean_gap, _BATCH)
    expected = np.asarray(source.pattern.destinations(source.src, expected_rng, _BATCH))
    tx = types.SimpleNamespace(link=source.tx.link, sendq=[deque() for _ in range(16)], queued=0)
    s = TrafficSource(hca, tx, source.pattern, source.src, source.dlids, rng)
    s.lazy = False
    s.materialize(s.mean_gap * messages)
    packets = [p for q in tx.sendq for p in q]
    return packets, expected[expected >= 0].tolist()


class TestSameDestinationsAsThePerHostList:
    @given(switches=st.integers(2, 6), hosts=st.integers(1, 3), pattern=st.sampled_from(PATTERNS),
           seed=st.integers(0, 10_000))
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def test_every_pattern_on_random_fabrics(self, switches, hosts, pattern, seed):
        sim = fabric_sim(switches, hosts, 0, "updn", pattern, seed)
        for source in sources(sim):
            ref = old_dlids(sim, source.hca)
            assert source.dlids == ref
            packets, expected = replay(source)
            # the pattern's draws are untouched: the same destinations in the same order
            dsts = [p.dst for p in packets if p.seq == 0]
            assert dsts == expected[:len(dsts)]
            # and each packet carries the DLID the old per-host list gave its destination
            assert all(p.dlid == ref[p.dst] and p.dst != source.src for p in packets)

    @pytest.mark.parametrize("pattern", PATTERNS)
    def test_destination_renaming_picks_the_dlid_per_source(self, pattern):
        # DR gives a host a second LID that some sources use (a path_offset): each source its own list
        fabric = irregular(8, links_per_switch=4, hosts_per_switch=1, seed=42).with_lids(lmc=1)
        sim = Simulation(to_ned(fabric, name="ren", routing="dr"),
                         overrides={"**.traffic": f'"{pattern}"', "**.load": "0.5"}, seed=3)
        assert sim.tables.path_offset is not None and sim.tables.path_offset.any()
        for source in sources(sim):
            ref = old_dlids(sim, source.hca)
            assert source.dlids == ref
            packets, _ = replay(source)
            assert all(p.dlid == ref[p.dst] for p in packets)

    def test_adaptive_dlids_and_path_counts_follow_the_old_definition(self):
        ov = {"**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1", "**.traffic": "uniform",
              "**.adaptive": "0.5", "**.randomPath": "0.2", "**.load": "0.3"}
        sim = Simulation("irregular16", overrides=ov, seed=1)
        for source in sources(sim):
            ref = old_dlids(sim, source.hca)
            assert source.adaptive_dlids == old_adaptive_dlids(sim, ref)
            assert source.path_counts == old_path_counts(sim, ref)

    def test_path_sls_follow_the_old_definition(self):
        sim = Simulation("irregular16", overrides={"**.routing": '"dfsssp"', "**.routingOptions": '"vls=4"',
                                                   "**.numVLs": "4", "**.traffic": "uniform", "**.load": "0.3"})
        eps = sim.host_endpoints()
        for h in sim.hosts:
            src_ep = int(eps[sim.hosts.index(h)])
            ref = np.asarray(sim.tables.sls(src_ep, np.array(old_dlids(sim, h))), dtype=np.int64)
            assert np.array_equal(h.path_sls, ref)


class TestShared:
    """One structure for all HCAs: the O(hosts) memory cannot silently turn O(hosts^2) again."""

    def test_the_sources_share_one_dlid_list(self):
        sim = Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.3", "**.sl": '"0,1"',
                                                   "**.numVLs": "2"})
        srcs = sources(sim)
        assert len(srcs) == 2 * len(sim.hosts)
        assert all(s.dlids is srcs[0].dlids for s in srcs)
        assert srcs[0].dlids is sim.dlids_from(sim.hosts[5]) and isinstance(srcs[0].dlids, list)
        assert not hasattr(srcs[0], "dlids_l")

    def test_adaptive_lists_are_shared(self):
        ov = {"**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1", "**.traffic": "uniform",
              "**.adaptive": "0.5", "**.randomPath": "0.2", "**.load": "0.3"}
        a, b = sources(Simulation("irregular16", overrides=ov))[:2]
        assert a.adaptive_dlids is b.adaptive_dlids and a.path_counts is b.path_counts

    def test_hosts_of_one_switch_share_their_path_sls(self):
        sim = Simulation("irregular16", overrides={"**.routing": '"dfsssp"', "**.routingOptions": '"vls=4"',
                                                   "**.numVLs": "4", "**.traffic": "uniform", "**.load": "0.3"})
        sw = sim.tables.fabric.attachments()[0][sim.host_endpoints()]
        by_switch: dict[int, list] = {}
        for h, s in zip(sim.hosts, sw.tolist()):
            by_switch.setdefault(s, []).append(h.path_sls)
        assert all(len(v) == 4 and all(x is v[0] for x in v) for v in by_switch.values())
        assert len({id(v[0]) for v in by_switch.values()}) == len(by_switch)

    def test_control_sources_and_multicast_copies_share_it(self):
        ov = {"**.traffic": '""', "**.controlInterval": "10us",
              "**.multicastGroups": "g: 0 1 2 3 senders=*", "**.replication": "replicated-unicast"}
        sim = Simulation("irregular16", overrides=ov)
        ctl = [h.tx[h.first_port].source for h in sim.hosts]
        assert all(isinstance(c, ControlSource) and c.dlids is ctl[0].dlids for c in ctl)
        for h in sim.hosts[:2]:
            h.multicast_packets(h.multicast_group("g"), 256, sl=0, created=0.0, msg=0, seq=0)
        assert sim.hosts[0]._member_dlids is sim.hosts[1]._member_dlids is ctl[0].dlids
