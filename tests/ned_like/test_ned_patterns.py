"""Wildcard patterns and the OverrideSet."""

import pytest

from ibfabric.ned_like import NedError, OverrideSet, PatternError, match
from ibfabric.ned_like.patterns import is_literal, range_regex


class TestMatch:
    @pytest.mark.parametrize(
        "pattern, path, expected",
        [
            # '*' stops at dots, '**' does not
            ("*.routingDelay", "fig1.routingDelay", True),
            ("*.routingDelay", "fig1.sw[3].routingDelay", False),
            ("**.routingDelay", "fig1.sw[3].routingDelay", True),
            ("fig1.*.routingDelay", "fig1.sw[3].routingDelay", True),
            ("fig1.sw*.lid", "fig1.sw[3].lid", True),  # '*' also covers brackets
            ("**", "anything.at.all", True),
            ("fig1.**.lid", "fig1.a.b.c.lid", True),
            # '?' is one character except a dot
            ("fig1.s?.lid", "fig1.sw.lid", True),
            ("fig1.s?.lid", "fig1.s.lid", False),
            ("fig?sw.lid", "fig1.sw.lid", False),
            # indices
            ("fig1.sw[*].lid", "fig1.sw[12].lid", True),
            ("fig1.sw[*].lid", "fig1.sw.lid", False),
            ("fig1.sw[3].lid", "fig1.sw[3].lid", True),
            ("fig1.sw[3].lid", "fig1.sw[13].lid", False),
            ("fig1.sw[3..7].lid", "fig1.sw[3].lid", True),
            ("fig1.sw[3..7].lid", "fig1.sw[7].lid", True),
            ("fig1.sw[3..7].lid", "fig1.sw[8].lid", False),
            ("fig1.sw[3..7].lid", "fig1.sw[2].lid", False),
            ("fig1.sw[..2].lid", "fig1.sw[0].lid", True),
            ("fig1.sw[10..].lid", "fig1.sw[123].lid", True),
            ("fig1.sw[10..].lid", "fig1.sw[9].lid", False),
            # numeric ranges inside names take the whole number
            ("fig1.host{2..11}.x", "fig1.host10.x", True),
            ("fig1.host{2..11}.x", "fig1.host12.x", False),
            ("fig1.host{2..11}**", "fig1.host12.x", False),
            ("fig1.host{1..3}*.x", "fig1.host2abc.x", True),
            # the whole path must match
            ("sw[*].lid", "fig1.sw[1].lid", False),
            ("fig1.sw", "fig1.sw[1]", False),
            # channel parameters
            ("**.channel.length", "fig1.sw[0].port[1].channel.length", True),
            ("**.length", "fig1.sw[0].port[1].channel.length", True),
        ],
    )
    def test_cases(self, pattern, path, expected):
        assert match(pattern, path) is expected

    def test_special_characters_are_literal(self):
        assert match("a$b+c(d)", "a$b+c(d)")
        assert not match("a.b", "axb")

    @pytest.mark.parametrize("bad", ["sw[x].lid", "sw[3", "sw{3}", "a]b", "", "sw{a..b}"])
    def test_malformed(self, bad):
        with pytest.raises(PatternError):
            match(bad, "x")

    def test_is_literal(self):
        assert is_literal("fig1.sw[3].lid")
        assert not is_literal("fig1.sw[*].lid")
        assert not is_literal("fig1.sw[1..2].lid")
        assert not is_literal("**.lid")

    def test_range_regex_exhaustively(self):
        import re

        for lo, hi in [(0, 0), (3, 7), (8, 13), (0, 100), (95, 1005), (7, 3)]:
            r = re.compile(range_regex(lo, hi))
            for n in range(0, 1200):
                assert bool(r.fullmatch(str(n))) == (lo <= n <= hi), (lo, hi, n)


class TestOverrideSet:
    def test_first_match_in_given_order(self):
        o = OverrideSet([("**.sw[0].lid", "1"), ("**.lid", "2")])
        assert o.lookup("net.sw[0].lid") == "1"
        assert o.lookup("net.sw[1].lid") == "2"

    def test_mapping_keeps_insertion_order(self):
        o = OverrideSet({"**.lid": "2", "**.sw[0].lid": "1"})
        assert o.lookup("net.sw[0].lid") == "2"

    def test_unused(self):
        o = OverrideSet({"**.lid": "1", "**.nothing": "2", "*.lid": "3"})
        assert o.unused() == ["**.lid", "**.nothing", "*.lid"]
        o.lookup("net.sw.lid")
        assert o.unused() == ["**.nothing", "*.lid"]
        assert o.lookup("net.sw.other") is None

    def test_invalid_pattern_is_a_ned_error(self):
        with pytest.raises(NedError) as info:
            OverrideSet({"**.sw[x].lid": "1"})
        assert info.value.file == "<override **.sw[x].lid>"
        assert info.value.column == 6

    def test_len_and_iter(self):
        o = OverrideSet([("a.b", "1")])
        assert len(o) == 1 and list(o) == [("a.b", "1")]
