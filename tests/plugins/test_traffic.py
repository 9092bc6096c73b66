"""Traffic patterns."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibfabric.errors import ConfigError
from ibfabric.plugins.traffic import BitReversal, HotSpot, Shuffle, Transpose, Uniform


class TestUniform:
    @given(st.integers(2, 300), st.integers(0, 10_000))
    @settings(max_examples=50, deadline=None)
    def test_never_self_and_in_range(self, n, seed):
        rng = np.random.default_rng(seed)
        pat = Uniform(n)
        src = seed % n
        d = pat.destinations(src, rng, 500)
        assert d.min() >= 0 and d.max() < n
        assert not (d == src).any()

    def test_all_other_hosts_equally_likely(self):
        rng = np.random.default_rng(1)
        d = Uniform(8).destinations(3, rng, 70_000)
        counts = np.bincount(d, minlength=8)
        assert counts[3] == 0
        others = np.delete(counts, 3)
        assert abs(others / 70_000 - 1 / 7).max() < 0.01


class TestPermutations:
    def test_bit_reversal_16(self):
        pat = BitReversal(16)
        # 0001 -> 1000, 0011 -> 1100, 0110 -> 0110 (fixed point: silent)
        assert pat.target[1] == 8
        assert pat.target[3] == 12
        assert pat.target[6] == -1 and not pat.active(6)

    def test_transpose_16_swaps_halves(self):
        pat = Transpose(16)
        # (row, col) = (src >> 2, src & 3) -> (col, row)
        for s in range(16):
            t = ((s & 3) << 2) | (s >> 2)
            assert pat.target[s] == (t if t != s else -1)

    def test_shuffle_rotates_left(self):
        pat = Shuffle(8)
        assert pat.target[1] == 2 and pat.target[4] == 1 and pat.target[5] == 3
        assert pat.target[0] == -1 and pat.target[7] == -1

    @pytest.mark.parametrize("cls", [BitReversal, Transpose, Shuffle])
    @pytest.mark.parametrize("n", [2, 4, 16, 64])
    def test_power_of_two_is_a_permutation(self, cls, n):
        pat = cls(n)
        images = [pat.image(s) for s in range(n)]
        assert sorted(images) == list(range(n))

    @pytest.mark.parametrize("cls", [BitReversal, Transpose, Shuffle])
    def test_non_power_of_two_never_targets_missing_hosts(self, cls):
        pat = cls(12)
        assert pat.target.max() < 12
        d = pat.destinations(1, np.random.default_rng(0), 5)
        assert (d == pat.target[1]).all()


class TestNumbering:
    def test_interleaved_bit_reversal_on_four_switches_of_four_hosts(self):
        # endpoints 4s..4s+3 on switch s; interleaved, host number p is endpoint (p % 4) * 4 + p // 4
        pat = BitReversal(16, {"numbering": "interleaved", "blocks": "4"})
        assert pat.number.tolist() == [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]
        # endpoint 1 is number 4 = 0100 -> 0010 = number 2 = endpoint 8; endpoint 5 is number 5 -> 10 = endpoint 10;
        # numbers 0, 6, 9, 15 (endpoints 0, 9, 6, 15) are fixed points and send nothing
        assert pat.target.tolist() == [-1, 8, 4, 12, 2, 10, -1, 14, 1, -1, 5, 13, 3, 11, 7, -1]

    def test_consecutive_is_the_default(self):
        assert BitReversal(16, {"numbering": "consecutive"}).target.tolist() == BitReversal(16).target.tolist()

    @pytest.mark.parametrize("cls", [BitReversal, Transpose, Shuffle])
    @pytest.mark.parametrize("numbering", [{"numbering": "interleaved", "blocks": "8"}, {"numbering": "random"}])
    def test_renumbered_permutation_is_conjugate(self, cls, numbering):
        # the destination's number is the image of the source's number
        plain = cls(64)
        pat = cls(64, numbering, np.random.default_rng(3))
        endpoint = {int(p): e for e, p in enumerate(pat.number)}
        for e in range(64):
            image = plain.image(int(pat.number[e]))
            assert pat.target[e] == (-1 if image == pat.number[e] else endpoint[image])

    def test_random_numbering_is_a_permutation_from_the_generator(self):
        a = BitReversal(32, {"numbering": "random"}, np.random.default_rng(5))
        b = BitReversal(32, {"numbering": "random"}, np.random.default_rng(5))
        assert sorted(a.number.tolist()) == list(range(32)) and a.number.tolist() == b.number.tolist()
        assert a.number.tolist() != list(range(32))

    @pytest.mark.parametrize("opts, match", [
        ({"numbering": "interleave"}, "'numbering' must be one of consecutive, interleaved, random"),
        ({"numbering": "interleaved"}, "'blocks' goes with numbering=interleaved"),
        ({"blocks": "4"}, "'blocks' goes with numbering=interleaved"),
        ({"numbering": "interleaved", "blocks": "x"}, "'blocks' must be an integer"),
        ({"numbering": "interleaved", "blocks": "5"}, "'blocks' must divide the 16 endpoints"),
        ({"numbering": "interleaved", "blocks": "0"}, "'blocks' must divide"),
    ])
    def test_bad_options(self, opts, match):
        with pytest.raises(ConfigError, match=match):
            BitReversal(16, opts)


class TestHotSpot:
    def test_fraction_goes_to_the_hot_spot(self):
        pat = HotSpot(32, {"fraction": "0.2", "hotspot": "5"})
        d = pat.destinations(0, np.random.default_rng(3), 100_000)
        share = (d == 5).mean()
        # 20 % directly plus the uniform share 0.8/31
        assert abs(share - (0.2 + 0.8 / 31)) < 0.01

    def test_hot_spot_chosen_from_the_seed(self):
        a = HotSpot(64, {}, np.random.default_rng(9)).hotspot
        b = HotSpot(64, {}, np.random.default_rng(9)).hotspot
        assert a == b

    @pytest.mark.parametrize("opts", [{"fraction": "2"}, {"hotspot": "99"}, {"bogus": "1"}, {"fraction": "x"}])
    def test_bad_options(self, opts):
        with pytest.raises(ConfigError):
            HotSpot(10, opts)

    def test_the_hot_spot_named_by_its_host(self):
        names = ["net.h0", "net.h1", "net.pod.h2", "net.pod.x"]
        assert HotSpot(4, {"node": "h1"}, host_names=names).hotspot == 1
        assert HotSpot(4, {"node": "pod.h2"}, host_names=names).hotspot == 2  # the path without the network
        assert HotSpot(4, {"node": "net.pod.h2"}, host_names=names).hotspot == 2  # the full path
        assert HotSpot(4, {"node": "h2"}, host_names=names).hotspot == 2  # a last part only one host has
        with pytest.raises(ConfigError, match=r"^hot-spot 'node': no host named 'h11'; did you mean 'h1'\?;"
                                              r" hosts are the channel adapters with a connected port: h0, h1,"
                                              r" pod.h2, pod.x$"):
            HotSpot(4, {"node": "h11"}, host_names=names)
        with pytest.raises(ConfigError, match="'node' .* or 'hotspot' .*, not both"):
            HotSpot(4, {"node": "h1", "hotspot": "1"}, host_names=names)
        with pytest.raises(ConfigError, match="built without the host names: give the endpoint's index"):
            HotSpot(4, {"node": "h1"})

    def test_node_in_a_run(self):
        from ibfabric.simulation import Simulation

        ov = {"**.traffic": "hot-spot", "**.trafficOptions": '"fraction=0.5 node=h1_1"', "**.load": "0.2"}
        sim = Simulation("irregular16", overrides=ov, seed=1)
        sim.run("20us")
        log = sim.stats.arrays()
        hot = [h.path for h in sim.hosts].index("irregular16.h1_1")
        assert sim.traffic_pattern("hot-spot", "fraction=0.5 node=h1_1").hotspot == hot == 5
        assert np.bincount(log["dst"]).argmax() == hot
        with pytest.raises(ConfigError, match=r"hot-spot 'node': no host named 'h1_9'; did you mean 'h1_"):
            Simulation("irregular16", overrides={**ov, "**.trafficOptions": '"node=h1_9"'}, seed=1)


class TestHotSpotContributors:
    """The congestion-control experiments' form: contributors to the hot spot, victims elsewhere (issue 33)."""

    NAMES = [f"net.h{i}" for i in range(8)]

    def test_contributors_send_everything_to_the_hot_spot_and_victims_never(self):
        pat = HotSpot(8, {"contributors": "3", "hotspot": "2"}, np.random.default_rng(1))
        assert len(pat.contributors) == 3 and 2 not in pat.contributors
        rng = np.random.default_rng(0)
        for src in range(8):
            d = pat.destinations(src, rng, 4000)
            if src in pat.contributors:
                assert pat.role(src) == "contributor" and (d == 2).all()
            else:
                assert pat.role(src) == "victim"
                counts = np.bincount(d, minlength=8)
                assert counts[2] == 0 and counts[src] == 0
                others = [h for h in range(8) if h not in (2, src)]
                assert counts[others].min() > 4000 / len(others) * 0.8  # uniform over the others

    def test_named_contributors_victims_and_their_destination(self):
        pat = HotSpot(8, {"contributors": "h1,h3", "node": "h0", "victims": "h5", "victimTo": "h6"},
                      host_names=self.NAMES)
        assert pat.contributors == {1, 3} and pat.victims == {5} and pat.victim_to == 6
        assert [s for s in range(8) if pat.active(s)] == [1, 3, 5]
        assert (pat.destinations(5, np.random.default_rng(0), 10) == 6).all()
        assert (pat.destinations(3, np.random.default_rng(0), 10) == 0).all()

    def test_a_contributor_fraction_leaves_the_rest_to_victim_destinations(self):
        pat = HotSpot(8, {"contributors": "h1", "node": "h0", "fraction": "0.25"}, host_names=self.NAMES)
        d = pat.destinations(1, np.random.default_rng(2), 20_000)
        assert abs((d == 0).mean() - 0.25) < 0.02 and not (d == 1).any()

    @pytest.mark.parametrize("opts, match", [
        ({"contributors": "8"}, "must be 1..7"),
        ({"contributors": "h0", "node": "h0"}, "names the hot spot itself"),
        ({"contributors": "h9", "node": "h0"}, "no host named 'h9'"),
        ({"victims": "h1", "node": "h0"}, "'victims' needs 'contributors'"),
        ({"contributors": "h1", "victims": "h1", "node": "h0"}, "neither contributors nor the hot spot"),
        ({"contributors": "h1", "victimTo": "h0", "node": "h0"}, "'victimTo' is the hot spot"),
    ])
    def test_bad_options(self, opts, match):
        with pytest.raises(ConfigError, match=match):
            HotSpot(8, opts, np.random.default_rng(0), host_names=self.NAMES)


def test_doctests():
    import doctest

    from ibfabric.plugins import traffic

    assert doctest.testmod(traffic).failed == 0
