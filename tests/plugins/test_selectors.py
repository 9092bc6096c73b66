"""Path selectors pick what hand-computed counters, credits and hop counts say."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric.components.packet import Packet
from ibfabric.errors import ConfigError
from ibfabric.plugins import PluginSet
from ibfabric.plugins.selectors import (AdaptiveFirst, First, LeastFrequentlyUsed, LeastFrequentlyUsedPort,
                                        MaxCredit, RandomSelector)


class _Tx:
    def __init__(self, port, sent=0):
        self.port, self.sent = port, sent


class _Opt:
    def __init__(self, port, index):
        self.tx, self.index, self.adaptive = _Tx(port), index, index > 0


def cands(*rows):
    """rows of (port, option index, vl, free credits)."""
    return [(_Opt(port, index), vl, free) for port, index, vl, free in rows]


P = Packet.make(1, 3, 256)


class TestSelectors:
    def test_registered(self):
        names = set(PluginSet.load().path_selectors.names())
        assert {"first", "random", "max-credit", "adaptive-first", "lfu", "lfu-port", "shortest"} <= names

    def test_max_credit_takes_the_most_free_credits_ties_to_the_escape(self):
        s = MaxCredit({}, None)
        assert s.select(P, cands((1, 0, 0, 4), (2, 1, 0, 9), (3, 2, 0, 7)), 0.0) == 1
        assert s.select(P, cands((2, 1, 0, 9), (1, 0, 0, 9)), 0.0) == 1  # equal credits: lower index

    def test_adaptive_first_takes_the_escape_only_when_no_adaptive_option_can(self):
        s = AdaptiveFirst({}, None)
        # the escape option has the most credits, an adaptive one is still taken: the one with most credits
        assert s.select(P, cands((1, 0, 0, 16), (2, 1, 0, 1), (3, 2, 0, 3)), 0.0) == 2
        assert s.select(P, cands((2, 1, 0, 3), (3, 2, 0, 3)), 0.0) == 0  # equal credits: lower index
        assert s.select(P, cands((1, 0, 0, 2),), 0.0) == 0  # only the escape option could take it

    def test_lfu_counts_per_output_vl(self):
        s = LeastFrequentlyUsed({}, None)
        c = cands((1, 0, 0, 4), (2, 1, 0, 4))
        picks = []
        for _ in range(4):
            k = s.select(P, c, 0.0)
            s.chosen(c[k][0], c[k][1])
            picks.append(c[k][0].tx.port)
        assert picks == [1, 2, 1, 2]  # alternates: the counters stay level
        s.chosen(c[1][0], 0)  # port 2 VL0 used once more elsewhere
        assert s.select(P, c, 0.0) == 0
        assert s.uses == {(1, 0): 2, (2, 0): 3}
        # another VL of port 2 has its own counter
        assert s.select(P, cands((1, 0, 0, 4), (2, 1, 1, 4)), 0.0) == 1

    def test_lfu_port_counts_every_packet_the_port_sent(self):
        s = LeastFrequentlyUsedPort({}, None)
        c = cands((1, 0, 0, 4), (2, 1, 3, 4), (3, 2, 0, 4))
        for opt, sent in zip((o for o, _, _ in c), (7, 5, 9)):
            opt.tx.sent = sent  # packets of any VL and class, not only this selector's choices
        assert s.select(P, c, 0.0) == 1
        s.chosen(c[1][0], 3)  # its own choices add nothing: the port counts them when it sends them
        assert s.select(P, c, 0.0) == 1
        c[1][0].tx.sent = 7
        assert s.select(P, c, 0.0) == 0  # 7 and 7: ties to the lower option index

    def test_first_takes_the_escape_option(self):
        assert First({}, None).select(P, cands((3, 2, 0, 9), (1, 0, 0, 1), (2, 1, 0, 5)), 0.0) == 1

    def test_random_is_uniform_and_seeded(self):
        a = RandomSelector({}, np.random.default_rng(5))
        b = RandomSelector({}, np.random.default_rng(5))
        c = cands((1, 0, 0, 4), (2, 1, 0, 4), (3, 2, 0, 4))
        xs = [a.select(P, c, 0.0) for _ in range(3000)]
        assert xs == [b.select(P, c, 0.0) for _ in range(3000)]
        assert np.bincount(xs).min() > 900

    def test_options_are_refused(self):
        with pytest.raises(ConfigError, match="takes no options"):
            MaxCredit({"x": "1"}, None)
