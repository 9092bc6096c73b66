"""MPEG-2 workload of Kim et al. 2007: frame-size model, trace reader, packets, protection (DMP/DMT: test_deadlines)."""

from __future__ import annotations

import doctest
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric import mpeg
from ibfabric.errors import ConfigError
from ibfabric.mpeg import (
    DEFAULT_GOP,
    PRESETS,
    MpegModel,
    frame_types,
    load_trace,
    packets_of_frame,
    parse_trace,
    protected,
    protected_mask,
    scale_to_rate,
)


def test_doctests():
    assert doctest.testmod(mpeg).failed == 0


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
