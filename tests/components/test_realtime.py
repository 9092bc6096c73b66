"""Kim et al.'s mixed workload: MPEG-2 streams (frames as bursts, protected packets, rate), control
packets on VL15, DMP/DMT in the summary, folding, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric.components.hca.realtime import MAX_STREAMS, STREAM_BASE, MpegSource
from ibfabric.deadlines import deadline_stats
from ibfabric.errors import ConfigError
from ibfabric.mpeg import protected
from ibfabric.simulation import Simulation

MIX = {"**.mtu": "1024B", "**.traffic": "uniform", "**.packetSize": "1050B", "**.numVLs": "2",
       "**.slPriority": '"1 0"', "**.controlInterval": "33.3ms"}


def mix(total=0.05, rt=0.7, until="60ms", **kw):
    ov = dict(MIX, **{"**.load": str(total * (1 - rt)), "**.realtimeLoad": str(total * rt)})
    sim = Simulation("kim2007_15", overrides=ov, seed=kw.pop("seed", 1), warmup="10ms", **kw)
    return sim, sim.run(until)


def mpeg_sources(sim):
    out = []

    def walk(src):
        if isinstance(src, MpegSource):
            out.append(src)
        for sub in getattr(src, "sources", []):
            walk(sub)

    for h in sim.hosts:
        walk(h.tx[h.first_port].source)
    return out


@pytest.fixture(scope="module")
def low():
    return mix()


class TestStreams:
    def test_frames_are_bursts_of_mtu_packets_with_kims_protection(self, low):
        sim, _ = low
        log = sim.stats.arrays()
        rt = log["cls"] == 2
        assert rt.sum() > 10_000
        assert set(np.unique(log["size"][rt]).tolist()) == {1050}  # padded: MTU + 26 B header
        assert (log["sl"][rt] == 1).all() and (log["flow"][rt] >= STREAM_BASE).all()
        # a frame's packets share its message, stream and creation time, and one of them is the last
        for m in np.unique(log["msg"][rt])[:300].tolist():
            sel = rt & (log["msg"] == m)
            assert len(np.unique(log["created"][sel])) == len(np.unique(log["flow"][sel])) == 1
            assert log["last"][sel].sum() <= 1

    def test_protected_packets_are_marked(self, low):
        sim, _ = low
        for src in mpeg_sources(sim)[:5]:
            t, j = src.heap[0]
            kind, size = src._frame(j, src.k[j])
            q = src.tx.sendq[src.sl]
            before = len(q)
            src.materialize(t)
            frame = [p for p in list(q)[before:] if p.flow == src.flows[j]]
            n = len(frame)
            assert n == -(-size // 1024) and [p.keep for p in frame] == [protected(kind, i, n) for i in range(n)]
            assert frame[0].keep and frame[-1].keep and frame[-1].last and not frame[0].last

    def test_streams_add_up_to_the_real_time_load(self, low):
        sim, s = low
        n = sum(len(src.flows) for src in mpeg_sources(sim))
        assert s["realtime"]["streams"] == n == 29 * 19  # 0.035 x 2 Gb/s over 3.68 Mb/s streams per host
        # offered real-time bytes: the load plus about 6 % of headers and padding to full packets
        assert 0.035 * 1.0 < s["by_class"]["real_time"]["accepted_load"] < 0.035 * 1.12

    def test_streams_spread_over_consecutive_sls(self):
        ov = dict(MIX, **{"**.traffic": "\"\"", "**.realtimeLoad": "0.035", "**.realtimeSLs": "3", "**.numVLs": "4",
                          "**.slPriority": '"1 2 3 0"'})
        sim = Simulation("kim2007_15", overrides=ov, seed=1)
        sim.run("20ms")
        log = sim.stats.arrays()
        rt = log["cls"] == 2
        assert set(np.unique(log["sl"][rt]).tolist()) == {1, 2, 3}
        for flow, sl in zip(log["flow"][rt][:2000].tolist(), log["sl"][rt][:2000].tolist()):
            assert sl == 1 + (flow - STREAM_BASE) % MAX_STREAMS % 3  # stream j of its host: SL 1 + j mod 3

    def test_control_packets_every_interval_on_vl15(self, low):
        sim, s = low
        log = sim.stats.arrays()
        ctl = log["cls"] == 3
        # 29 hosts, one per 33.3 ms each, from a random phase: 60 ms gives one or two each
        assert 29 <= ctl.sum() <= 58 and (log["size"][ctl] == 256).all()
        assert s["by_class"]["control"]["latency_ns"]["max"] < 10_000

    def test_no_misses_at_low_load(self, low):
        _, s = low
        rt = s["realtime"]
        assert rt["frames"] > 500 and rt["missed"] == 0 and rt["dmp"] == 0.0 and rt["dmt_ns"] is None


@pytest.fixture(scope="module")
def busy():
    """A run long enough for frames to miss their deadlines (the first misses come after 30 ms), its
    whole log kept: the two tests below share it."""
    return mix(total=0.3, until="60ms", log_limit=None)


class TestDeadlines:
    def test_summary_is_kims_rule_on_the_log(self, busy):
        sim, s = busy
        log = sim.stats.arrays()
        res = deadline_stats(log, sim.now, t0=sim.warmup)
        assert s["realtime"]["frames"] == int(res["frames"].sum())
        assert s["realtime"]["missed"] == int(res["missed"].sum()) > 0
        assert s["realtime"]["dmp"] == pytest.approx(res["missed"].sum() / res["frames"].sum())

    def test_folded_log_gives_the_same_dmp_and_dmt(self, busy):
        _, full = busy
        sim, folded = mix(total=0.3, until="60ms", log_limit=1000)
        assert sim.stats.folded_delivered > 0
        a, b = full["realtime"], folded["realtime"]
        assert (a["frames"], a["missed"], a["streams"]) == (b["frames"], b["missed"], b["streams"])
        assert b["dmt_ns"] == pytest.approx(a["dmt_ns"], rel=1e-9)

    def test_same_seed_same_results(self):
        a = mix(until="30ms")[1]
        b = mix(until="30ms")[1]
        assert a["realtime"] == b["realtime"] and a["latency_ns"] == b["latency_ns"]


class TestErrors:
    @pytest.mark.parametrize("over, message", [
        ({"**.realtime": '"nosuch"'}, "'realtime' must be a preset"),
        ({"**.realtimeDestination": "0"}, "'realtimeDestination' must be another host"),
        ({"**.realtimeLoad": "-1"}, "'realtimeLoad' must be from 0 to 10"),
        ({"**.realtimeLoad": "9", "**.realtime": '"low"'}, "at most 4096"),
        ({"**.realtimeSL": "13", "**.realtimeSLs": "3"}, "'realtimeSLs' must be an integer in 1..2"),
    ])
    def test_clear_errors(self, over, message):
        ov = dict(MIX, **{"**.load": "0.01", "**.realtimeLoad": "0.02"})
        ov = {**over, **{k: v for k, v in ov.items() if k not in over}}
        with pytest.raises(ConfigError, match=message):
            Simulation("kim2007_15", overrides=ov).run("1ns")
