"""MPEG-2 workload of Kim et al. 2007: frame-size model, trace reader, packets, protection, DMP/DMT."""

from __future__ import annotations

import doctest
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric import mpeg
from ibfabric.components.packet import Packet
from ibfabric.errors import ConfigError
from ibfabric.mpeg import (
    DEFAULT_GOP,
    PRESETS,
    DeadlineStats,
    MpegModel,
    deadline_misses,
    deadline_stats,
    deadlines,
    dmp_dmt,
    frame_types,
    load_trace,
    packets_of_frame,
    parse_trace,
    protected,
    protected_mask,
    scale_to_rate,
)
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
    assert doctest.testmod(mpeg).failed == 0


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


class TestMpegModel:
    def test_gop_pattern_repeats_exactly(self):
        types, sizes = MpegModel().frames(30_000, 1)
        assert len(types) == len(sizes) == 30_000
        assert "".join(types) == DEFAULT_GOP * 2500
        types, _ = MpegModel(gop="IPPP").frames(10, 1, start=2)
        assert "".join(types) == "PPIPPPIPPP"
        assert "".join(frame_types(5, "IBP", start=1)) == "BPIBP"

    def test_sample_means_and_cvs_per_type(self):
        m = MpegModel()
        types, sizes = m.frames(30_000, np.random.default_rng(2007))
        for t in "IPB":
            x = sizes[types == t]
            assert x.mean() == pytest.approx(m.mean[t], rel=0.03), t
            assert x.std() / x.mean() == pytest.approx(m.cv[t], rel=0.05), t
        assert m.mean_rate() == 3.6e6
        assert sizes.mean() * 8 * m.fps == pytest.approx(m.mean_rate(), rel=0.02)

    def test_mean_rate(self):
        m = MpegModel(mean={"I": 3000, "P": 1500, "B": 750}, fps=25)
        # (3000 + 3 x 1500 + 8 x 750) / 12 = 1125 bytes a frame
        assert m.mean_frame() == 1125
        assert m.mean_rate() == 1125 * 8 * 25
        assert MpegModel(gop="I", mean={"I": 1000}, cv={"I": 0}).mean_rate() == 240_000

    def test_same_seed_same_frames(self):
        m = MpegModel.preset("low")
        a = m.frames(500, 42)[1]
        assert np.array_equal(a, m.frames(500, 42)[1])
        assert np.array_equal(a, m.frames(500, np.random.default_rng(42))[1])
        assert not np.array_equal(a, m.frames(500, 43)[1])

    def test_zero_cv_is_constant(self):
        m = MpegModel(mean={"I": 5000.4, "P": 2000, "B": 1000}, cv={"I": 0, "P": 0, "B": 0})
        types, sizes = m.frames(12, 0)
        assert sizes.tolist() == [5000, 1000, 1000, 2000, 1000, 1000, 2000, 1000, 1000, 2000, 1000, 1000]

    def test_presets_and_at_rate(self):
        assert MpegModel() == MpegModel.preset("medium")
        rates = {name: MpegModel.preset(name).mean_rate() for name in PRESETS}
        assert rates == {"low": 1.44e6, "medium": 3.6e6, "high": 7.2e6}
        m = MpegModel().at_rate(1.8e6)
        assert m.mean == {"I": 20000.0, "P": 10000.0, "B": 5000.0} and m.cv == MpegModel().cv
        assert scale_to_rate(MpegModel(), 1.8e6) == m
        with pytest.raises(ConfigError, match="unknown MPEG preset 'huge'; choose one of high, low, medium"):
            MpegModel.preset("huge")

    def test_fit_recovers_the_parameters(self):
        m = MpegModel(mean={"I": 30000, "P": 12000, "B": 5000}, cv={"I": 0.2, "P": 0.4, "B": 0.6})
        fitted = MpegModel.fit(m.frames(60_000, 3)[1])
        for t in "IPB":
            assert fitted.mean[t] == pytest.approx(m.mean[t], rel=0.02)
            assert fitted.cv[t] == pytest.approx(m.cv[t], rel=0.05)

    def test_from_trace(self, tmp_path):
        p = tmp_path / "t.txt"
        p.write_text("# I B B P\n8000\n1000\n3000\n4000\n")
        m = MpegModel.from_trace(p, gop="IBBP", unit="bits")
        assert m.mean == {"I": 1000.0, "P": 500.0, "B": 250.0}
        assert m.cv == {"I": 0.0, "P": 0.0, "B": 0.5}
        with pytest.raises(ConfigError, match="the trace has no P frames"):
            MpegModel.fit([1, 2], gop="IBBP")

    @pytest.mark.parametrize("kw, msg", [
        ({"gop": "IXB"}, "'gop' must be a non-empty string of I, P and B frames (got 'IXB')"),
        ({"gop": ""}, "'gop' must be a non-empty string"),
        ({"mean": {"I": 1, "B": 1}}, "'mean' must give P frames a value (the GOP 'IBBPBBPBBPBB' has them)"),
        ({"mean": {"I": 1, "P": 0, "B": 1}}, "'mean' of P frames must be > 0 bytes (got 0.0)"),
        ({"mean": {"I": 1, "P": 1, "B": "x"}}, "the parameter of 'B' frames must be a number (got 'x')"),
        ({"cv": {"I": 0, "P": -0.1, "B": 0}}, "'cv' of P frames must be >= 0 (got -0.1)"),
        ({"cv": {"I": 0, "P": math.nan, "B": 0}}, "'cv' of P frames must be >= 0 (got nan)"),
        ({"fps": 0}, "'fps' must be > 0 (got 0.0)"),
    ])
    def test_validation(self, kw, msg):
        with pytest.raises(ConfigError, match=re.escape(msg)):
            MpegModel(**kw)

    def test_gop_without_b_frames_needs_no_b_parameters(self):
        m = MpegModel(gop="IPPP", mean={"I": 4000, "P": 1000}, cv={"I": 0.1, "P": 0.1})
        assert m.mean_rate() == (4000 + 3000) / 4 * 8 * 30


class TestScaleToRate:
    def test_scales_the_mean_rate(self):
        sizes = np.array([9000, 1000, 2000, 4000])
        out = scale_to_rate(sizes, 1.2e6, fps=25)
        assert out.dtype == np.int64
        assert out.tolist() == [13500, 1500, 3000, 6000]  # mean 6000 B x 8 x 25 = 1.2 Mb/s

    @pytest.mark.parametrize("sizes, bps, msg", [
        ([], 1e6, "non-empty"), ([0, 0], 1e6, "not all zero"), ([1, -1], 1e6, ">= 0"), ([1], 0, "'bps' must be > 0"),
    ])
    def test_errors(self, sizes, bps, msg):
        with pytest.raises(ConfigError, match=re.escape(msg)):
            scale_to_rate(sizes, bps)


def located(text: str, name: str) -> bool:
    return len(text.splitlines()) == 1 and re.match(rf"^{re.escape(name)}:\d+:\d+: \S", text) is not None


class TestLoadTrace:
    def test_good_file_with_comments_and_blank_lines(self, tmp_path):
        p = tmp_path / "movie.trace"
        p.write_text("# frame sizes (bytes)\n12000\n\n  800\t# a B frame\n900\n\n")
        out = load_trace(p)
        assert out.dtype == np.int64 and out.tolist() == [12000, 800, 900]

    def test_bits_round_up_to_bytes(self, tmp_path):
        p = tmp_path / "bits.trace"
        p.write_text("96000\n8001\n0\n")
        assert load_trace(p, unit="bits").tolist() == [12000, 1001, 0]
        assert load_trace(p).tolist() == [96000, 8001, 0]

    def test_crlf_and_byte_order_mark(self):
        assert parse_trace("\ufeff10\r\n20\r\n").tolist() == [10, 20]
        assert parse_trace(b"10\r\n20").tolist() == [10, 20]

    @pytest.mark.parametrize("text, where, msg", [
        ("12\nabc\n", "2:1", "'abc' is not a frame size (expected a non-negative integer number of bytes)"),
        ("12\n  -5\n", "2:3", "'-5' is not a frame size"),
        ("1.5\n", "1:1", "'1.5' is not a frame size"),
        ("+7\n", "1:1", "'+7' is not a frame size"),
        ("\u0663\n", "1:1", "is not a frame size"),  # an Arabic-Indic digit: int() would take it
        ("1_000\n", "1:1", "'1_000' is not a frame size"),
        ("# c\n\n  12 34\n", "3:6", "expected one frame size per line (found '34' after 12)"),
        ("4294967297\n", "1:1", "frame size 4294967297 is too large (at most 4294967296 bytes)"),
        ("9" * 30 + "\n", "1:1", "frame size 99999999999999999999... is too large"),
        ("# only a comment\n\n", "1:1", "no frame sizes (expected one integer number of bytes per line)"),
        ("", "1:1", "no frame sizes"),
    ])
    def test_located_errors(self, tmp_path, text, where, msg):
        p = tmp_path / "bad.trace"
        p.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as e:
            load_trace(p)
        assert str(e.value).startswith(f"{p}:{where}: ")
        assert msg in str(e.value)
        assert located(str(e.value), str(p))

    def test_not_utf8(self, tmp_path):
        p = tmp_path / "bin.trace"
        p.write_bytes(b"12\n3\xff4\n")
        with pytest.raises(ConfigError, match=re.escape(f"{p}:2:2: not UTF-8 text (byte 0xff)")):
            load_trace(p)

    def test_bits_limit(self):
        with pytest.raises(ConfigError, match=re.escape("<string>:1:1: frame size 34359738369 is too large "
                                                        "(at most 34359738368 bits)")):
            parse_trace("34359738369", unit="bits")

    def test_file_errors(self, tmp_path):
        with pytest.raises(ConfigError, match=re.escape(f"{tmp_path / 'nope'}: no such file")):
            load_trace(tmp_path / "nope")
        with pytest.raises(ConfigError, match=re.escape("'unit' must be 'bytes' or 'bits' (got 'kB')")):
            load_trace(tmp_path / "nope", unit="kB")

    TEXT = st.lists(st.sampled_from(["0", "7", "12000", "-3", "1e3", "99999999999999999999999", "#", "# x", " ",
                                     "\t", "\n", "\r\n", "abc", "\u0663", "\ufeff", "\x00", "1.5", "\u2028", "\x85"]),
                    max_size=30).map("".join)

    @given(data=st.one_of(st.binary(max_size=200), TEXT.map(lambda s: s.encode("utf-8"))))
    @settings(max_examples=300, deadline=2000, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    def test_random_input_loads_or_fails_on_one_located_line(self, tmp_path_factory, data):
        p = tmp_path_factory.mktemp("fuzz") / "f.trace"
        p.write_bytes(data)
        try:
            out = load_trace(p)
        except ConfigError as e:
            assert located(str(e), str(p)), str(e)
        else:
            assert out.dtype == np.int64 and len(out) > 0 and (out >= 0).all()
            assert (load_trace(p, unit="bits") == (out + 7) // 8).all()


class TestPackets:
    def test_fixed_size_packets_by_default(self):
        # Kim et al.: MTU 1024, headers 26 B; the last payload padded to a full MTU
        assert packets_of_frame(2500).tolist() == [1050, 1050, 1050]
        assert packets_of_frame(2048).tolist() == [1050, 1050]
        assert packets_of_frame(1).tolist() == [1050]

    def test_unpadded(self):
        assert packets_of_frame(2500, pad=False).tolist() == [1050, 1050, 478]
        assert packets_of_frame(2048, pad=False).tolist() == [1050, 1050]
        assert packets_of_frame(600, mtu=256, header=20, pad=False).tolist() == [276, 276, 108]

    def test_an_empty_frame_is_one_packet(self):
        assert packets_of_frame(0).tolist() == [1050]
        assert packets_of_frame(0, pad=False).tolist() == [26]

    @pytest.mark.parametrize("args, msg", [
        ((-1,), "'size' must be an integer >= 0 (got -1)"),
        ((10, 0), "'mtu' must be an integer >= 1 (got 0)"),
        ((10, 1024, -2), "'header' must be an integer >= 0 (got -2)"),
        ((1.5,), "'size' must be an integer >= 0 (got 1.5)"),
    ])
    def test_errors(self, args, msg):
        with pytest.raises(ConfigError, match=re.escape(msg)):
            packets_of_frame(*args)


class TestProtected:
    def test_kim_selective_dropping(self):
        assert [protected("I", k, 5) for k in range(5)] == [True] * 5
        assert [protected("P", k, 5) for k in range(5)] == [True, False, False, False, True]
        assert [protected("B", k, 3) for k in range(3)] == [True, False, True]
        assert protected("B", 0, 1) and protected("P", 1, 2)

    @pytest.mark.parametrize("t", "IPB")
    @pytest.mark.parametrize("count", [1, 2, 3, 7])
    def test_mask_agrees(self, t, count):
        assert protected_mask(t, count).tolist() == [protected(t, k, count) for k in range(count)]

    def test_errors(self):
        with pytest.raises(ConfigError, match="frame type must be 'I', 'P' or 'B' \\(got 'D'\\)"):
            protected("D", 0, 1)
        with pytest.raises(ConfigError, match="packet index 3 is not one of the frame's 3 packets"):
            protected("B", 3, 3)
        with pytest.raises(ConfigError, match="at least one packet"):
            protected_mask("P", 0)
