"""The alfaro2001 arbitration policy against hand-computed tables (Alfaro et al. 2001 §4.2).

Every port here is on a 2.5 Gb/s link, where a slot (64 bytes per frame of
3.342336 ms) is 153,186.27 bit/s: N_slots = ceil(B / 153186.27).  ``slots(k)``
is a bandwidth of k - 1/2 slots, which needs exactly k.
"""

from fractions import Fraction

import numpy as np
import pytest

from ibfabric.components.qos import SLOTS_PER_FRAME, ClassMap, Demand, slots_for
from ibfabric.errors import ConfigError
from ibfabric.plugins import PluginSet
from ibfabric.plugins.arbitration.alfaro2001 import Alfaro2001

RATE = 2.5e9
SLOT_BPS = RATE / SLOTS_PER_FRAME  # 153186.27 bit/s


def slots(k):
    """A bandwidth that needs exactly k slots."""
    return (k - 0.5) * SLOT_BPS
#: Positions of the 13 BE entries spread over 64: (i * 64) // 13.
BE_POS = [0, 4, 9, 14, 19, 24, 29, 34, 39, 44, 49, 54, 59]


def port(**options):
    return Alfaro2001(**options).new_port(RATE, ClassMap(), "sw0 port 1")


def low(p):
    """The low-priority table as a dict position -> (vl, weight), free positions left out."""
    return {i: e for i, e in enumerate(p.tables()[1]) if e[1] > 0}


def demand(conn, sl, bandwidth, high=False):
    return Demand(conn, sl, ClassMap().vl(sl), bandwidth, high)


class TestReservationsBeforeConnections:
    def test_be_share_and_ch_entry_exist_before_any_connection(self):
        # 20 % of 16320 = 3264 slots: 12 entries of 255 and one of 204, spread; CH weight 1 in the last position.
        p = port()
        expected = {pos: (8, 255) for pos in BE_POS}
        expected[59] = (8, 204)
        expected[63] = (9, 1)
        assert low(p) == expected
        assert p.tables()[0] == ()  # no DBTS: the high-priority table is empty
        assert p.free_slots() == 16320 - 3264 - 1 == 13055
        assert p.free_entries() == 64 - 14

    def test_unspread_layout(self):
        p = port(spread=False)
        assert low(p) == {**{i: (8, 255) for i in range(12)}, 12: (8, 204), 13: (9, 1)}

    def test_other_shares_and_ch_weight(self):
        p = port(be_share=0.5, ch_weight=3, spread="false")  # 8160 slots = 32 x 255
        assert low(p) == {**{i: (8, 255) for i in range(32)}, 32: (9, 3)}
        assert p.free_slots() == 16320 - 8160 - 3

    def test_zero_be_share_still_gives_be_one_unit(self):
        assert low(port(be_share=0, spread=False)) == {0: (8, 1), 1: (9, 1)}

    @pytest.mark.parametrize("opts, msg", [
        ({"be_share": 1.0}, "'be_share' must be in 0..1"),
        ({"ch_weight": 0}, "'ch_weight' must be in 1..255"),
        ({"limit_high": 256}, "'limit_high' must be in 0..255"),
        ({"spread": "maybe"}, "'spread' must be true or false"),
        ({"check_entries": "2"}, "'check_entries' must be true or false"),
    ])
    def test_bad_options(self, opts, msg):
        with pytest.raises(ConfigError, match=msg):
            Alfaro2001(**opts)

    def test_unknown_option_lists_the_valid_ones(self):
        with pytest.raises(ConfigError, match=r"unknown alfaro2001 option 'weights'; did you mean 'ch_weight'\? \(valid: be_share, ch_weight"):
            Alfaro2001.from_options({"weights": "1"})

    def test_registered_through_its_entry_point(self):
        reg = PluginSet.load().arbitration_policies.get("alfaro2001")
        assert reg.plugin == "alfaro2001"
        assert reg.obj({"be_share": "0.3"}).be_slots == 4896  # 0.3 x 16320


class TestFilling:
    def test_hand_computed_fill(self):
        p = port()
        # SL3, 300 Mb/s: ceil(1958.4) = 1959 slots = 7 x 255 + 174, in the free positions 1,2,3,5,6,7,8 and 10.
        p.reserve(demand(1, 3, 300e6))
        sl3 = {i: e for i, e in low(p).items() if e[0] == 3}
        assert sl3 == {1: (3, 255), 2: (3, 255), 3: (3, 255), 5: (3, 255), 6: (3, 255), 7: (3, 255), 8: (3, 255),
                       10: (3, 174)}
        # SL0, 64 Kb/s: ceil(0.418) = 1 slot, a new entry in the next free position.
        p.reserve(demand(2, 0, 64e3))
        assert low(p)[11] == (0, 1)
        # SL3, 100 Mb/s: 653 slots = 81 to top up position 10, then 255 (12), 255 (13), 62 (15; 14 is BE).
        p.reserve(demand(3, 3, 100e6))
        t = low(p)
        assert (t[10], t[12], t[13], t[15]) == ((3, 255), (3, 255), (3, 255), (3, 62))
        # SL0, 8 Kb/s: 1 slot, grouped into SL0's entry.
        p.reserve(demand(4, 0, 8e3))
        assert low(p)[11] == (0, 2)
        assert p.free_slots() == 13055 - 1959 - 1 - 653 - 1
        assert p.reserved() == 300e6 + 64e3 + 100e6 + 8e3

    def test_connections_of_one_sl_share_an_entry_until_255(self):
        p = port(spread=False)
        for k in range(25):  # 25 connections of 10 slots (1.5 Mb/s: ceil(9.79) = 10)
            p.reserve(demand(k, 1, 1.5e6))
        t = low(p)
        assert t[14] == (1, 250)
        p.reserve(demand(99, 1, 1.5e6))  # 5 slots top the entry up to 255, 5 go to the next free one
        t = low(p)
        assert (t[14], t[15]) == ((1, 255), (1, 5))
        assert p.alloc[99] == [(False, 14, 5), (False, 15, 5)]

    def test_existing_entries_never_change(self):
        # Over many random connections, each reservation only tops up its SL's open entry and fills free ones.
        rng = np.random.default_rng(4)
        p = port()
        for k in range(200):
            sl = int(rng.integers(4))
            bw = float(rng.uniform(8e3, 80e6))
            before = p.tables()[1]
            open_pos = p.open.get((False, sl))
            d = demand(k, sl, bw)
            if p.check(d) is not None:
                continue
            p.reserve(d)
            after = p.tables()[1]
            for i, (vl, w) in enumerate(before):
                if w > 0 and i != open_pos:
                    assert after[i] == (vl, w), (k, i)
            assert sum(w for _, w in after) - sum(w for _, w in before) == slots_for(bw, RATE)
        assert sum(w for _, w in p.tables()[1]) == p.used

    def test_dbts_goes_to_the_high_priority_table(self):
        p = port(limit_high=4)
        p.reserve(demand(1, 7, 100e6, high=True))
        high, lo, limit = p.tables()
        assert high == ((7, 255), (7, 255), (7, 143))  # 653 slots
        assert limit == 4
        assert all(vl in (8, 9) for vl, w in lo if w)
        assert p.free_slots() == 13055 - 653  # one frame for both tables

    def test_release_gives_everything_back(self):
        p = port()
        p.reserve(demand(1, 3, 300e6))
        p.reserve(demand(2, 3, 10e6))
        p.release(1)
        t = low(p)
        assert {i: e for i, e in t.items() if e[0] == 3} == {10: (3, 66)}  # conn 2: ceil(65.28) slots remain
        assert p.free_slots() == 13055 - 66
        p.release(2)
        assert low(p) == low(port())


class TestAdmissionLimits:
    def test_bandwidth_limit(self):
        p = port()
        # 13055 slots are free (in the low-priority table they would need 52 entries: use the high one's 64)
        assert p.check(demand(1, 7, slots(13055), high=True)) is None
        assert p.check(demand(1, 7, slots(13056), high=True)) == "bandwidth: sw0 port 1 needs 13056 slots, 13055 left"
        p.reserve(demand(1, 7, slots(13000), high=True))
        assert p.check(demand(2, 0, slots(55))) is None
        assert p.check(demand(2, 0, slots(56))).startswith("bandwidth:")

    def test_64_entry_limit(self):
        p = port()
        full = slots(255)  # about 39 Mb/s: exactly one entry
        for k in range(49):
            p.reserve(demand(k, 2, full))
        p.reserve(demand(49, 3, slots(100)))
        assert p.free_entries() == 0
        assert p.free_slots() == 13055 - 49 * 255 - 100
        # bandwidth is left, but only SL3's open entry has room (155 units)
        assert p.check(demand(50, 3, slots(155))) is None
        assert p.check(demand(50, 3, slots(156))) == \
            "entries: sw0 port 1 needs 1 free low-priority entries, 0 left"
        assert p.check(demand(50, 0, 8e3)).startswith("entries:")  # SL0 has no entry and none is free
        assert p.check(demand(50, 7, 8e3, high=True)) is None  # the high-priority table has its own 64
        p.reserve(demand(50, 3, slots(155)))
        assert len([e for e in p.tables()[1] if e[1] > 0]) == 64

    def test_bandwidth_only_admission_ignores_the_64_entries(self):
        p = port(check_entries="false")
        full = slots(255)
        for k in range(49):
            p.reserve(demand(k, 2, full))
        p.reserve(demand(49, 3, slots(100)))
        assert p.free_entries() == 0
        # the strict port refuses this (test above); here only the frame's slots count
        assert p.check(demand(50, 0, 8e3)) is None
        p.reserve(demand(50, 0, 8e3))
        p.reserve(demand(51, 1, slots(300)))  # 300 slots: two more entries (255 + 45)
        low_table = p.tables()[1]
        assert len(low_table) == 67 and low_table[64:] == ((0, 1), (1, 255), (1, 45))  # SL n on VL n
        left = p.free_slots()
        assert left == 13055 - 49 * 255 - 100 - 1 - 300
        assert p.check(demand(52, 2, slots(left + 1))) == f"bandwidth: sw0 port 1 needs {left + 1} slots, {left} left"
        p.release(51)
        assert p.tables()[1][64:] == ((0, 1),) and p.free_slots() == left + 300


class TestRounding:
    """What rounding each connection up to whole slots costs a port (Appendix A of the paper, issue 32)."""

    def test_rounding_loss_by_hand(self):
        p = port()
        # 8 kb/s on 2.5 Gb/s: 8e3 / 2.5e9 x 16320 = 0.052224 slots, rounded up to 1
        p.reserve(demand(1, 0, 8e3))
        # 1 Mb/s: 6.528 slots, 7; 64 Mb/s: 417.792 slots, 418
        p.reserve(demand(2, 1, 1e6))
        p.reserve(demand(3, 2, 64e6))
        assert p.connection_slots() == 1 + 7 + 418
        assert p.exact_slots() == Fraction("0.052224") + Fraction("6.528") + Fraction("417.792")
        assert p.connection_slots() - p.exact_slots() == Fraction("1.627776")  # 0.947776 + 0.472 + 0.208
        assert p.free_slots() == 13055 - 426

    def test_the_same_connections_cost_more_slots_on_a_wider_link(self):
        # a 4x link's slot is 4 times the bandwidth, so 8 kb/s wastes 0.986944 of a slot of 612.7 kb/s
        p = Alfaro2001().new_port(10e9, ClassMap(), "sw0 port 1")
        p.reserve(demand(1, 0, 8e3))
        assert p.connection_slots() - p.exact_slots() == 1 - Fraction("0.013056")

    def test_no_rounding_takes_the_exact_share(self):
        p = port(rounding="none", check_entries="false")  # a frame's worth of SL 2 needs 52 entries
        p.reserve(demand(1, 0, 8e3))
        p.reserve(demand(2, 1, 1e6))
        assert p.connection_slots() == p.exact_slots() == Fraction("6.580224")
        assert p.free_slots() == 13055 - Fraction("6.580224")
        # the admission compares exact shares: a demand of exactly the slots left fits, a little more does not
        left = p.free_slots()
        assert p.check(demand(3, 2, float(left) / SLOTS_PER_FRAME * RATE * (1 - 1e-12))) is None
        assert p.check(demand(3, 2, float(left) / SLOTS_PER_FRAME * RATE * (1 + 1e-9))).startswith("bandwidth:")
        p.release(2)
        assert p.connection_slots() == Fraction("0.052224")

    def test_bad_rounding(self):
        with pytest.raises(ConfigError, match="'rounding' must be one of"):
            Alfaro2001(rounding="floor")


class TestServedByTheIbaArbiter:
    """The iba-vlarb arbiter running a table this policy filled (256-byte packets: 4 units each)."""

    def arbiter(self):
        from ibfabric.plugins.arbiters import ArbiterConfig, IBAVLArbiter

        p = port(spread=False)  # BE at 0..12 (12 x 255 and 204), CH at 13 (weight 1)
        p.reserve(demand(1, 3, slots(9)))  # SL3: position 14, weight 9
        p.reserve(demand(2, 0, slots(1)))  # SL0: position 15, weight 1
        high, lo, limit = p.tables()
        return IBAVLArbiter(ArbiterConfig(10, high=high, low=lo, limit_high=limit))

    def serve(self, arb, vls, n):
        from ibfabric.components.packet import Packet

        ready = [Packet.make(1, 2, 256) if vl in vls else None for vl in range(10)]
        return [arb.select(ready) for _ in range(n)]

    def test_entries_without_traffic_are_passed_over(self):
        # weight 9 sends 3 packets (9 -> 5 -> 1 -> -3), weight 1 one whole packet; BE and CH have nothing
        assert self.serve(self.arbiter(), {0, 3}, 8) == [3, 3, 3, 0, 3, 3, 3, 0]

    def test_one_pass_with_every_class_backlogged(self):
        # 12 BE entries of 64 packets and one of 51 (204 units), CH 1, SL3 3, SL0 1: 824 packets a pass
        order = self.serve(self.arbiter(), {0, 3, 8, 9}, 824 * 2)
        assert [order[:824].count(vl) for vl in (8, 9, 3, 0)] == [819, 1, 3, 1]
        assert order[819:824] == [9, 3, 3, 3, 0] and order[824:] == order[:824]
