"""Deadline metrics of Kim et al. 2007: the deadline rule, DMP/DMT of one stream, DeadlineStats over a delivery log."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from ibfabric import deadlines as deadlines_module
from ibfabric.components.packet import Packet
from ibfabric.deadlines import DeadlineStats, deadline_misses, deadline_stats, deadlines, dmp_dmt
from ibfabric.errors import ConfigError
from ibfabric.stats import PacketStats

# Time in ms, 25 frames/s: the period is exactly 40.
MS = {"fps": 25, "per_second": 1000}

# Six frames created every 40 ms from 0; the first is due at 0 + 40.
#   frame  deadline                     arrival  miss by
#   0      40   (created 0 + T)         35       -
#   1      80   (40 + T)                90       10
#   2      130  (arrival 90 + T: reset)  115      -
#   3      170  (130 + T)               170      - (on the deadline is on time)
#   4      210  (170 + T)               230      20
#   5      270  (arrival 230 + T)       235      -
CREATED = [0, 40, 80, 120, 160, 200]
ARRIVALS = [35, 90, 115, 170, 230, 235]
DEADLINES = [40, 80, 130, 170, 210, 270]
MISSED = [False, True, False, False, True, False]
LATE = [0, 10, 0, 0, 20, 0]


def test_doctests():
    assert doctest.testmod(deadlines_module).failed == 0


class TestDeadlineMisses:
    def test_deadlines_step_by_step(self):
        assert deadlines(ARRIVALS, CREATED, **MS).tolist() == DEADLINES

    def test_misses_and_miss_times(self):
        missed, late = deadline_misses(ARRIVALS, CREATED, **MS)
        assert missed.tolist() == MISSED
        assert late.tolist() == LATE

    def test_dmp_dmt(self):
        assert dmp_dmt(ARRIVALS, CREATED, **MS) == (2 / 6, 15.0)

    def test_consecutive_misses_each_restart_from_the_previous_arrival(self):
        # due 40, 50 + 40 = 90, 100 + 40 = 140: each 10 late
        arrivals = [50, 100, 150]
        assert deadlines(arrivals, 0, **MS).tolist() == [40, 90, 140]
        assert dmp_dmt(arrivals, 0, **MS) == (1.0, 10.0)

    def test_first_deadline_argument(self):
        # due 100, 140, ..., 300: all on time
        assert deadlines(ARRIVALS, CREATED, first_deadline=100, **MS).tolist() == [100, 140, 180, 220, 260, 300]
        assert dmp_dmt(ARRIVALS, CREATED, first_deadline=100, **MS)[0] == 0.0
        # due 20 (35: 15 late), 35 + 40 = 75 (90: 15 late), 130, 170, 210 (230: 20 late), 270
        assert deadlines(ARRIVALS, CREATED, first_deadline=20, **MS).tolist() == [20, 75, 130, 170, 210, 270]
        assert dmp_dmt(ARRIVALS, CREATED, first_deadline=20, **MS) == (3 / 6, 50 / 3)

    def test_created_may_be_the_first_frames_time(self):
        assert deadlines(ARRIVALS, 0, **MS).tolist() == DEADLINES
        assert deadlines(ARRIVALS, 20, **MS)[0] == 60

    def test_default_is_30_frames_per_second_in_ns(self):
        t = 1e9 / 30  # 33.33 ms in ns
        missed, late = deadline_misses([t - 1, 2 * t + 5e6, 3 * t + 5e6], [0.0, t, 2 * t])
        assert missed.tolist() == [False, True, False]
        assert late[1] == pytest.approx(5e6)
        assert deadlines([t - 1, 2 * t + 5e6, 3 * t + 5e6], 0.0)[2] == pytest.approx(3 * t + 5e6)

    def test_no_frames(self):
        missed, late = deadline_misses([], [])
        assert len(missed) == len(late) == 0
        assert all(math.isnan(x) for x in dmp_dmt([], []))

    def test_no_miss_gives_nan_dmt(self):
        dmp, dmt = dmp_dmt([10, 50], 0, **MS)
        assert dmp == 0.0 and math.isnan(dmt)

    @pytest.mark.parametrize("kw, msg", [
        ({"fps": 0}, "'fps' must be > 0"),
        ({"per_second": -1}, "'per_second' must be > 0"),
    ])
    def test_bad_rates(self, kw, msg):
        with pytest.raises(ConfigError, match=msg):
            deadline_misses(ARRIVALS, CREATED, **kw)

    def test_created_of_the_wrong_length(self):
        with pytest.raises(ConfigError, match="'created' must be"):
            deadline_misses(ARRIVALS, [0, 40])


def frame_log(streams: dict[int, tuple[list, list]], packets: int = 3, cls: int = 2, msg0: int = 0) -> dict:
    """A delivery log: for each flow, frames (created, arrival) of *packets* packets each, the
    earlier packets arriving 1 ms before the last; message ids global, in creation order."""
    rows = []
    msg = msg0
    frames = sorted((c, f, a) for f, (cs, arr) in streams.items() for c, a in zip(cs, arr))
    for c, f, a in frames:
        for k in range(packets):
            last = k == packets - 1
            rows.append((f, msg, c, a if last else a - 1, last, cls))
        msg += 1
    flow, m, created, delivered, last, klass = zip(*rows)
    return {"flow": np.array(flow, dtype=np.int64), "msg": np.array(m, dtype=np.int64),
            "created": np.array(created, dtype=float), "delivered_at": np.array(delivered, dtype=float),
            "last": np.array(last, dtype=bool), "cls": np.array(klass, dtype=np.int8)}


def take(log: dict, mask: np.ndarray) -> dict:
    return {k: v[mask] for k, v in log.items()}


def concat(*logs: dict) -> dict:
    return {k: np.concatenate([g[k] for g in logs]) for k in logs[0]}


def in_delivery_order(log: dict) -> dict:
    return take(log, np.argsort(log["delivered_at"], kind="stable"))


# stream 7: the hand-made sequence; stream 3: due 40, 80, 120 (frame 2 late by 30), then 190
LOG = in_delivery_order(frame_log({7: (CREATED, ARRIVALS), 3: ([0, 40, 80, 120], [40, 60, 150, 160])}))


class TestDeadlineStats:
    def test_per_stream(self):
        r = DeadlineStats(**MS).add(LOG).result()
        assert r["flow"].tolist() == [3, 7]
        assert r["frames"].tolist() == [4, 6]
        assert r["missed"].tolist() == [1, 2]
        assert r["dmp"].tolist() == [0.25, 2 / 6]
        assert r["dmt"].tolist() == [30.0, 15.0]
        assert r["miss_time_max"].tolist() == [30.0, 20.0]
        assert r["last_deadline"].tolist() == [190.0, 270.0]
        assert r["last_arrival"].tolist() == [160.0, 235.0]
        assert r["reordered"].tolist() == [0, 0]

    def test_summary_over_streams(self):
        s = DeadlineStats(**MS).add(LOG).summary()
        assert s == {"streams": 2, "frames": 10, "missed": 3, "dmp": 0.3, "dmt": 60 / 3}

    def test_only_last_packets_and_the_real_time_class_count(self):
        noise = frame_log({7: ([0, 40], [500, 600])}, cls=0, msg0=1000)  # best effort on the same flow id
        r = DeadlineStats(**MS).add(concat(LOG, noise)).result()
        assert r["frames"].tolist() == [4, 6]
        r = DeadlineStats(cls=None, **MS).add(concat(LOG, noise)).result()
        assert r["frames"].tolist() == [4, 8]

    def test_flows_filter(self):
        r = deadline_stats(LOG, flows=[7], **MS)
        assert r["flow"].tolist() == [7] and r["missed"].tolist() == [2]

    def test_packets_after_now_wait_for_the_next_chunk(self):
        acc = DeadlineStats(**MS).add(LOG, now=100)
        assert acc.summary()["frames"] == 4  # 7: arrivals 35, 90; 3: 40, 60
        acc.add(take(LOG, LOG["delivered_at"] > 100))
        assert acc.summary() == DeadlineStats(**MS).add(LOG).summary()

    @pytest.mark.parametrize("cuts", [[1], [5, 9], [2, 3, 4, 20, 21], list(range(1, 30))])
    def test_chunked_equals_one_shot(self, cuts):
        one = DeadlineStats(**MS).add(LOG).result()
        acc = DeadlineStats(**MS)
        for part in np.split(np.arange(len(LOG["msg"])), cuts):
            acc.add(take(LOG, np.isin(np.arange(len(LOG["msg"])), part)))
        chunked = acc.result()
        for k in one:
            np.testing.assert_array_equal(chunked[k], one[k], err_msg=k)

    def test_chunked_like_folds_on_a_random_log(self):
        """Folds as PacketStats does them: the whole log seen at each fold, the delivered part dropped."""
        rng = np.random.default_rng(5)
        t = 1e9 / 30
        streams = {}
        for f in range(1, 6):
            n = 300
            created = f * 1e6 + t * np.arange(n)
            arrivals = np.maximum.accumulate(created + rng.exponential(0.7 * t, n))  # in order, as assumed
            streams[f] = (created.tolist(), arrivals.tolist())
        log = in_delivery_order(frame_log(streams, packets=4))
        one = DeadlineStats().add(log).result()
        assert 0 < one["missed"].sum() < one["frames"].sum()
        acc = DeadlineStats()
        pending = take(log, np.zeros(len(log["msg"]), dtype=bool))
        for lo, hi in [(0, 700), (700, 701), (701, 3000), (3000, 6000)]:
            pending = concat(pending, take(log, (np.arange(len(log["msg"])) >= lo) & (np.arange(len(log["msg"])) < hi)))
            now = float(log["delivered_at"][hi - 1]) - 1e6  # the last packets are still on their wire
            acc.add(pending, now)
            pending = take(pending, pending["delivered_at"] > now)
        acc.add(pending)
        got = acc.result()
        for k in ("flow", "frames", "missed", "reordered", "last_deadline", "last_arrival", "miss_time_max"):
            np.testing.assert_array_equal(got[k], one[k], err_msg=k)
        np.testing.assert_allclose(got["dmt"], one["dmt"], rtol=1e-12)

    def test_as_a_packet_stats_fold_hook(self):
        stats = PacketStats(log_limit=3)
        stats.hosts = 2
        clock = [0.0]
        stats.clock = lambda: clock[0]
        acc = DeadlineStats(**MS)
        stats.fold_hooks.append(acc.add)
        for k, (c, a) in enumerate(zip(CREATED, ARRIVALS)):
            clock[0] = a
            stats.add_delivery(Packet(1, 2, 0, 1050, 17, src=0, dst=1, created=c, flow=7, msg=k, last=True, cls=2), a)
        assert stats.folded_delivered > 0
        acc.add(stats.arrays(), clock[0])
        assert acc.summary() == {"streams": 1, "frames": 6, "missed": 2, "dmp": 2 / 6, "dmt": 15.0}

    def test_window_counts_frames_created_in_it_but_keeps_the_chain(self):
        r = deadline_stats(LOG, flows=[7], t0=80, **MS)
        # frames 2..5 are measured; frame 2's deadline still comes from frame 1's miss
        assert r["frames"].tolist() == [4] and r["missed"].tolist() == [1] and r["dmt"].tolist() == [20.0]
        r = deadline_stats(LOG, flows=[7], t0=0, t_end=40, **MS)
        assert r["frames"].tolist() == [2] and r["missed"].tolist() == [1]

    def test_first_deadline_per_flow(self):
        r = deadline_stats(LOG, flows=[7], first_deadline={7: 20}, **MS)
        assert r["missed"].tolist() == [3] and r["dmt"].tolist() == [50 / 3]

    def test_frames_out_of_order_across_chunks_are_counted(self):
        log = take(LOG, LOG["flow"] == 7)
        late = log["msg"] == log["msg"][log["last"]][1]  # frame 1's packets come after the others
        acc = DeadlineStats(**MS).add(take(log, ~late)).add(take(log, late))
        assert acc.result()["reordered"].tolist() == [1]
        assert acc.summary()["frames"] == 6

    def test_empty(self):
        acc = DeadlineStats().add(take(LOG, np.zeros(len(LOG["msg"]), dtype=bool)))
        assert acc.result()["flow"].tolist() == []
        s = acc.summary()
        assert s["frames"] == 0 and math.isnan(s["dmp"]) and math.isnan(s["dmt"])
