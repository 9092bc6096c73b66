"""Kim et al.'s multicast real-time workload (2007, §5.2): a share of the MPEG-2 streams sent to
multicast groups, their frames reaching every member once, DMP/DMT per (stream, member)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ibfabric.deadlines import DeadlineStats, deadline_stats, dmp_dmt
from ibfabric.errors import ConfigError
from ibfabric.mpeg import protected
from ibfabric.simulation import Simulation

from .test_realtime import mpeg_sources

GROUPS = "g1: 0 5 senders=*; g2: 3 9 11 14 senders=*; g3: 2 12 senders=*"
# few small streams per host, no best effort: fast; switch replication needs input-queued switches
LOW = {"**.mtu": "1024B", "**.traffic": '""', "**.numVLs": "2", "**.slPriority": '"1 0"',
       "**.realtimeLoad": "0.004", "**.realtimeStreams": "4", "**.outputBufferSize": "0B",
       "**.multicastGroups": GROUPS, "**.realtimeMulticast": "0.5"}
MARGIN = 2e6  # ns: frames created this long before the end have been delivered at this load


def run(engine="asynchronous", until="40ms", **kw):
    ov = dict(LOW, **{"**.replication": engine}, **kw.pop("overrides", {}))
    sim = Simulation("kim2007_15_29hosts", overrides=ov, seed=kw.pop("seed", 1), warmup="2ms", check=True, **kw)
    return sim, sim.run(until)


@pytest.fixture(scope="module", params=["asynchronous", "replicated-unicast"])
def low(request):
    return run(request.param)


def streams(sim):
    """(source, stream index, group) of every multicast stream."""
    return [(src, j, g) for src in mpeg_sources(sim) for j, g in enumerate(src.groups) if g >= 0]


class TestStreams:
    def test_share_of_streams_to_the_hosts_groups(self, low):
        sim, s = low
        groups = sim.multicast.groups
        for src in mpeg_sources(sim):
            mine = [g for g in src.groups if g >= 0]
            assert len(mine) == 2  # round(0.5 x 4)
            assert all(src.src in groups[g].sender_hosts for g in mine)
        flows = {src.flows[j] for src, j, _ in streams(sim)}
        assert sim.realtime_multicast_flows == flows and len(flows) == 2 * 29
        assert s["realtime"]["multicast"]["streams"] == 58 and s["realtime"]["streams"] == 4 * 29

    def test_unicast_streams_keep_their_destinations(self):
        def sources(share):
            sim = Simulation("kim2007_15_29hosts", overrides=dict(LOW, **{"**.realtimeMulticast": share}), seed=3)
            sim.run("1ns")
            return mpeg_sources(sim)

        a, b = sources("0"), sources("0.5")
        assert all(src.groups == [-1] * 4 for src in a)
        for x, y in zip(a, b):  # the share draws from its own generator
            assert sum(g >= 0 for g in y.groups) == 2
            assert [d for d, g in zip(x.dsts, y.groups) if g < 0] == [d for d, g in zip(y.dsts, y.groups) if g < 0]
            assert x.phase == y.phase

    @pytest.mark.parametrize("engine", ["asynchronous", "replicated-unicast"])
    def test_frames_keep_burst_last_and_protection(self, engine):
        sim = Simulation("kim2007_15_29hosts", overrides=dict(LOW, **{"**.replication": engine}), seed=1)
        sim.run("1ns")
        checked = 0
        for src in mpeg_sources(sim)[:4]:
            mine = [j for j, g in enumerate(src.groups) if g >= 0]
            first = {j: src._frame(j, 0) for j in mine}  # each stream's first frame: (kind, size)
            src.materialize(max(src.phase[j] for j in mine))
            queued = [p for q in src.tx.sendq for p in q]
            for j in mine:
                group = sim.multicast.groups[src.groups[j]]
                others = sorted(m for m in group.member_hosts if m != src.src)
                kind, size = first[j]
                pk = [p for p in queued if p.flow == src.flows[j]]
                n = -(-size // 1024)
                assert src.copies[j] == (len(others) if engine == "replicated-unicast" else 1)
                assert len(pk) == n * src.copies[j] and len({p.msg for p in pk}) == 1
                for i in range(n):
                    copies = [p for p in pk if p.seq == i]
                    assert all(p.keep == protected(kind, i, n) and p.last == (i == n - 1) and p.cls == 2
                               and p.sl == src.sls[j] for p in copies)
                    if engine == "replicated-unicast":
                        assert sorted(p.dst for p in copies) == others
                    else:
                        assert [p.dlid for p in copies] == [group.mlid_of(src.src)]
                checked += 1
        assert checked == 8

    def test_every_member_gets_every_frame_once(self, low):
        sim, s = low
        acc, log = sim.multicast, sim.stats.arrays()
        end = sim.now - MARGIN
        # every packet sent to a group before the end reached every member but its sender (the accounting
        # raises on a second copy: check=True)
        assert not [r for r in acc.pending.values() if r[1] <= end]
        groups = s["multicast"]["groups"]
        for gi, g in enumerate(acc.groups):
            x = groups[g.name]
            assert x["duplicates"] == 0 and x["complete"] == x["packets"] - sum(r[0] == gi for r in acc.pending.values())
        mc = np.isin(log["flow"], list(sim.realtime_multicast_flows))
        assert mc.sum() == sum(x["member_deliveries"] for x in groups.values()) > 1000  # 1,416 with seed 1 (the module paths seed the streams)
        # in the delivery log: each frame's packets reach each member, as many to each, one of them last
        frames: dict[tuple[int, int], dict[int, list[int]]] = {}
        for f, m, d, last, c in zip(log["flow"][mc].tolist(), log["msg"][mc].tolist(), log["dst"][mc].tolist(),
                                    log["last"][mc].tolist(), log["created"][mc].tolist()):
            if c <= end:
                frames.setdefault((f, m), {}).setdefault(d, []).append(last)
        group_of = {src.flows[j]: (src.src, sim.multicast.groups[g]) for src, j, g in streams(sim)}
        for (f, _m), by_member in frames.items():
            host, g = group_of[f]
            assert sorted(by_member) == sorted(m for m in g.member_hosts if m != host)
            assert len({len(v) for v in by_member.values()}) == 1 and all(sum(v) == 1 for v in by_member.values())
        for src, j, _g in streams(sim):  # and no frame is missing
            due = math.floor((end - src.phase[j]) / src.period) + 1 if src.phase[j] <= end else 0
            assert sum(f == src.flows[j] for f, _m in frames) == due
        assert len(frames) > 60

    def test_no_misses_at_low_load(self, low):
        sim, s = low
        rt = s["realtime"]
        assert rt["missed"] == 0 and rt["dmp"] == 0.0 and rt["dmt_ns"] is None
        m = rt["multicast"]
        assert m["frames"] > 150 and m["missed"] == 0 and m["dmp"] == 0.0 and m["dmt_ns"] is None
        # each member of a stream's group is a receiver of its own; overall counts unicast and multicast frames
        res = deadline_stats(sim.stats.arrays(), sim.now, t0=sim.warmup)
        assert m["receivers"] == int(np.isin(res["flow"], list(sim.realtime_multicast_flows)).sum()) > 58
        assert rt["frames"] == int(res["frames"].sum()) > m["frames"]


class TestDeadlinesPerMember:
    # one multicast stream (flow 9) to members 1 and 2, one unicast stream (flow 3) to host 4; period 40
    MS = {"fps": 25, "per_second": 1000, "cls": None}

    @staticmethod
    def log():
        rows = []  # (flow, msg, created, delivered, dst)
        for k, (a1, a2) in enumerate(zip([30, 70, 110, 150], [30, 100, 130, 150])):
            rows += [(9, 10 + k, 40.0 * k, a1, 1), (9, 10 + k, 40.0 * k, a2, 2)]
        rows += [(3, 20 + k, 40.0 * k, a, 4) for k, a in enumerate([35, 125, 130])]
        rows.sort(key=lambda r: r[3])
        f, m, c, d, dst = (np.array(x) for x in zip(*rows))
        return {"flow": f, "msg": m, "created": c.astype(float), "delivered_at": d.astype(float),
                "last": np.ones(len(f), dtype=bool), "dst": dst}

    def test_each_member_is_judged_as_a_stream(self):
        r = DeadlineStats(**self.MS).add(self.log()).result()
        assert list(zip(r["flow"].tolist(), r["dst"].tolist())) == [(3, 4), (9, 1), (9, 2)]
        assert r["frames"].tolist() == [3, 4, 4] and r["missed"].tolist() == [1, 0, 1]
        # member 2: due 40, 80 (arrives 100: late by 20), then 140, 180
        for k, arrivals in ((1, [30, 70, 110, 150]), (2, [30, 100, 130, 150])):
            dmp, dmt = dmp_dmt(arrivals, 0, fps=25, per_second=1000)
            assert r["dmp"][k] == dmp and (r["dmt"][k] == dmt or math.isnan(dmt) and math.isnan(r["dmt"][k]))
        assert r["dmt"][2] == 20.0 and r["reordered"].tolist() == [0, 0, 0]

    def test_overall_and_multicast_only(self):
        acc = DeadlineStats(**self.MS).add(self.log())
        assert acc.summary() == {"streams": 3, "frames": 11, "missed": 2, "dmp": 2 / 11, "dmt": (20 + 45) / 2}
        assert acc.summary(flows={9}) == {"streams": 2, "frames": 8, "missed": 1, "dmp": 1 / 8, "dmt": 20.0}

    def test_chunks_like_folds(self):
        log = self.log()
        one = DeadlineStats(**self.MS).add(log).result()
        acc = DeadlineStats(**self.MS)
        for lo, hi in [(0, 3), (3, 4), (4, 9), (9, len(log["msg"]))]:
            acc.add({k: v[lo:hi] for k, v in log.items()})
        for k, v in acc.result().items():
            np.testing.assert_array_equal(v, one[k], err_msg=k)


class TestRuns:
    def test_folded_log_and_same_seed_give_the_same_summary(self):
        _, a = run(until="30ms")
        sim, b = run(until="30ms", log_limit=500)
        assert sim.stats.folded_delivered > 0
        assert a["realtime"] == b["realtime"] and a["multicast"] == b["multicast"]
        _, c = run(until="30ms")
        timing = {"wall_s", "routing_time_s", "events_per_s", "packet_hops_per_s"}  # wall-clock figures
        assert {k: v for k, v in c.items() if k not in timing} == {k: v for k, v in a.items() if k not in timing}
        assert a["realtime"]["multicast"]["frames"] > 50

    @pytest.mark.parametrize("over, message", [
        ({"**.multicastGroups": '""'}, "'realtimeMulticast' is 0.5 but no multicast groups are declared"),
        ({"**.multicastGroups": '"g: 0 1 senders=0"'}, "host 1 sends to no multicast group"),
        ({"**.realtimeMulticast": "1.5"}, "'realtimeMulticast' must be a fraction from 0 to 1"),
    ])
    def test_clear_errors(self, over, message):
        with pytest.raises(ConfigError, match=message):
            Simulation("kim2007_15_29hosts", overrides=dict(LOW, **over)).run("1ns")
