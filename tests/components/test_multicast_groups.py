"""Multicast groups: declarations, hosts, MLIDs, the subnet manager's MFTs, checks and the routes CLI."""

import re
from pathlib import Path

import numpy as np
import pytest

import ibfabric
from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.mfts import MulticastTables, read_mfts, write_mfts
from ibfabric.components.routing.mgroups import (
    GroupSpec,
    MulticastGroup,
    assign_mlids,
    declare_groups,
    host_nodes,
    parse_groups,
    resolve_groups,
)
from ibfabric.components.routing.mtrees import check_groups
from ibfabric.errors import ConfigError, PluginError
from ibfabric.plugins import PluginSet

# Two switches, hosts a, b on s0 and c, d on s1; 'x' is a CA without a link.
#
#   a(1) b(2)      c(1) d(2)
#      \ /            \ /
#      s0 (3) ---- (3) s1
PAIR = """
network pair
{
    submodules:
        s0: Switch { numPorts = 3; }
        s1: Switch { numPorts = 3; }
        a: HCA;
        b: HCA;
        x: HCA;
        c: HCA;
        d: HCA;
        sm: SubnetManager { multicastGroups = "ab: a b; all@0xC100: * senders=a,d"; }
    connections:
        a.port[1] <--> Link <--> s0.port[1];
        b.port[1] <--> Link <--> s0.port[2];
        c.port[1] <--> Link <--> s1.port[1];
        d.port[1] <--> Link <--> s1.port[2];
        s0.port[3] <--> Link <--> s1.port[3];
}
"""


def pair_fabric() -> FabricGraph:
    from ibfabric.topologies import load_fabric

    return load_fabric(PAIR).with_lids()


class TestParseGroups:
    def test_forms(self):
        specs = parse_groups(" video: h1 h2,h3 ; audio@0xC010: 0..3 senders=h1 ;0xC020: * senders= 4 5;")
        assert specs == [
            GroupSpec("video", 0, ("h1", "h2", "h3")),
            GroupSpec("audio", 0xC010, ("0..3",), ("h1",)),
            GroupSpec("0xC020", 0xC020, ("*",), ("4", "5")),
        ]
        assert parse_groups("") == [] and parse_groups(" ; ") == []
        assert parse_groups("g@49153: 1")[0].mlid == 0xC001  # decimal MLIDs too

    @pytest.mark.parametrize("text, message", [
        ("h1 h2", r"character 1: expected 'NAME:', 'NAME@MLID:' or 'MLID:' before the members of a group \(got 'h1 h2'\)"),
        ("a: 1; h3", r"character 7: expected 'NAME:'"),
        ("9lives: 1", r"'9lives' is not a group name"),
        ("g@0xBFFF: 1", r"group 'g': MLID 0xBFFF is not a multicast LID \(0xC000..0xFFFE\)"),
        ("0xFFFF: 1", r"group '0xFFFF': MLID 0xFFFF is not a multicast LID"),
        ("g@0x123456789: 1", r"group 'g': MLID 0x123456789 is not a multicast LID"),
        ("a@0xC001: 1; b@0xC001: 2", r"groups 'a' and 'b' both have MLID 0xC001"),
        ("a: 1; a: 2", r"two groups are named 'a'"),
        ("a: ", r"group 'a' has no members"),
        ("a: senders=1", r"group 'a' has no members"),
        ("a: 1 senders=", r"group 'a': 'senders=' lists no host"),
        ("a: 1 senders=1 senders=2", r"group 'a': 'senders=' is given twice"),
        ("a: 1 members=2", r"group 'a': unknown key 'members='"),
        ("a: 3..1", r"group 'a': the range 3..1 is empty"),
    ])
    def test_errors_are_one_line(self, text, message):
        with pytest.raises(ConfigError, match=rf"^multicastGroups: {message}") as err:
            parse_groups(text)
        assert "\n" not in str(err.value)


class TestResolveGroups:
    def test_hosts_by_name_index_range_and_star(self):
        g = pair_fabric()
        assert [g.nodes[n].name for n in host_nodes(g)] == ["pair.a", "pair.b", "pair.c", "pair.d"]  # x has no link
        ab, every = declare_groups("ab: a pair.b; all: 0..1 3 c senders=d,0", g)
        assert ab.member_hosts == (0, 1) and ab.sender_hosts == (0, 1)  # senders default to the members
        assert ab.member_eps == tuple(g.endpoint_of(g.index(n)) for n in ("pair.a", "pair.b"))
        assert every.member_hosts == (0, 1, 3, 2) and every.sender_hosts == (3, 0)  # declaration order
        assert declare_groups("s: *", g)[0].member_hosts == (0, 1, 2, 3)
        assert every.size == 4 and ab.mlid == 0 and ab.sender_mlids == ()
        assert resolve_groups(parse_groups("ab: a pair.b"), g) == (ab,)

    def test_host_indices_are_the_simulations(self):
        sim = ibfabric.Simulation(PAIR)
        g = sim.fabric
        assert [h.path for h in sim.hosts] == [g.nodes[n].name for n in host_nodes(g)]

    @pytest.mark.parametrize("text, message", [
        ("g: a h9", r"group 'g': unknown host 'h9' \(give a host's name, like 'a', or its index 0..3\)"),
        ("g: 4", r"group 'g': host index 4 is out of range \(the network has 4 hosts: 0..3\)"),
        ("g: 1..99999999999", r"group 'g': host index 99999999999 is out of range"),
        ("g: a s0", r"group 'g': s0 is a switch; members and senders are hosts"),
        ("g: x", r"group 'g': x is a channel adapter without a connected port"),
        ("g: a 0", r"group 'g': a is listed twice as a member \('a' and '0'\)"),
        ("g: * b", r"group 'g': b is listed twice as a member \('\*' and 'b'\)"),
        ("g: a senders=c 0..3", r"group 'g': c is listed twice as a sender"),
    ])
    def test_errors(self, text, message):
        with pytest.raises(ConfigError, match=rf"^multicastGroups: {message}"):
            declare_groups(text, pair_fabric())

    def test_a_host_cabled_to_a_host_cannot_be_reached(self):
        g = FabricGraph([NodeSpec("s", True, 2), NodeSpec("a", False, 1), NodeSpec("p", False, 1), NodeSpec("q", False, 1)],
                        [Link(1, 1, 0, 1), Link(2, 1, 3, 1)]).with_lids()
        with pytest.raises(ConfigError, match=r"group 'g': p is not attached to a switch"):
            declare_groups("g: a p", g)


def groups_of(sizes, mlids=()) -> tuple[MulticastGroup, ...]:
    """Groups g0, g1, ... with the given numbers of senders (and declared MLIDs)."""
    mlids = list(mlids) + [0] * len(sizes)
    return tuple(MulticastGroup(f"g{i}", mlids[i], (0,), (0,), tuple(range(n)), tuple(range(n))) for i, n in enumerate(sizes))


class TestAssignMlids:
    def test_in_declaration_order_one_per_group(self):
        out = assign_mlids(groups_of([3, 1, 2]), per_sender=False)
        assert [g.mlid for g in out] == [0xC000, 0xC001, 0xC002]
        assert out[0].sender_mlids == (0xC000,) * 3 and out[0].mlids == (0xC000,)

    def test_a_block_per_group_one_mlid_per_sender(self):
        out = assign_mlids(groups_of([3, 1, 2]), per_sender=True)
        assert [g.sender_mlids for g in out] == [(0xC000, 0xC001, 0xC002), (0xC003,), (0xC004, 0xC005)]
        assert out[2].mlid_of(1) == 0xC005
        with pytest.raises(ValueError, match="host 7 is not a sender of multicast group 'g2'"):
            out[2].mlid_of(7)

    def test_declared_mlids_are_kept_and_the_others_fill_the_gaps(self):
        out = assign_mlids(groups_of([2, 2, 1, 3], [0, 0xC001, 0, 0]), per_sender=True)
        # g1 holds 0xC001-0xC002; g0 needs 2 and does not fit before it
        assert [g.mlid for g in out] == [0xC003, 0xC001, 0xC000, 0xC005]
        assert assign_mlids(out, per_sender=True) == out  # assigning again changes nothing

    def test_overlapping_blocks(self):
        with pytest.raises(ConfigError, match=r"^multicastGroups: the MLIDs of group 'g1' \(0xC001..0xC003, one per"
                           r" sender\) overlap the MLIDs of group 'g0' \(0xC000..0xC001, one per sender\); declare"):
            assign_mlids(groups_of([2, 3], [0xC000, 0xC001]), per_sender=True)
        assert [g.mlid for g in assign_mlids(groups_of([2, 3], [0xC000, 0xC001]), per_sender=False)] == [0xC000, 0xC001]

    def test_running_out(self):
        with pytest.raises(ConfigError, match=r"group 'g0' needs 3 MLIDs from 0xFFFD \(one per sender\), past"):
            assign_mlids(groups_of([3], [0xFFFD]), per_sender=True)
        with pytest.raises(ConfigError, match=r"no room left for group 'g1' \(2 MLIDs\)"):
            assign_mlids(groups_of([0x3FFE, 2]), per_sender=True)


class TestSubnetManager:
    def test_builds_and_publishes_the_mfts(self):
        sim = ibfabric.Simulation(PAIR)
        mft = sim.tables.mft
        assert mft.engine == "source-based" and [g.name for g in mft.groups] == ["ab", "all"]
        ab, every = mft.groups
        assert ab.sender_mlids == (0xC000, 0xC001) and every.sender_mlids == (0xC100, 0xC101)
        assert mft.group("all") is every and mft.group_of(0xC101) is every and mft.group_of(0xC002) is None
        g = sim.fabric
        s0, s1 = g.index("pair.s0"), g.index("pair.s1")
        # a's packets to everyone: s0 copies to b and s1, s1 to c and d; d's: s1 to c and s0, s0 to a and b
        assert mft.switch_entries(s0) == {0xC000: (2,), 0xC001: (1,), 0xC100: (2, 3), 0xC101: (1, 2)}
        assert mft.switch_entries(s1) == {0xC100: (1, 2), 0xC101: (1, 3)}
        assert mft.entries() == {s0: mft.switch_entries(s0), s1: mft.switch_entries(s1)}
        assert check_groups(mft) == []
        with pytest.raises(KeyError, match=r"no multicast group 'z' \(groups: ab, all\)"):
            mft.group("z")

    def test_overrides_and_the_shared_engine(self):
        sim = ibfabric.Simulation(PAIR, overrides={"**.multicastGroups": "cd: c d senders=a", "**.multicastRouting": "shared"})
        (cd,) = sim.tables.mft.groups
        assert cd.sender_mlids == (0xC000,) and sim.tables.mft.engine == "shared" and check_groups(sim.tables.mft) == []

    def test_from_an_experiment_file_on_a_generated_topology(self):
        from ibfabric.experiment import Experiment

        exp = Experiment.from_text("""
[experiment]
name = "mc"
topology = { generator = "irregular", switches = 6, links_per_switch = 3, hosts_per_switch = 2, seed = 4 }
time = "1us"

[parameters]
"**.multicastGroups" = "g1: 0 5 senders=*; g2@0xC100: 3 7 9"
"**.multicastRouting" = "${mcast}"

[iterations]
mcast = ["source-based", "shared"]
""")
        for spec in exp.runs():
            sim = ibfabric.Simulation(spec.topology_source(), overrides=list(spec.overrides), seed=spec.seed)
            mft = sim.tables.mft
            assert mft.engine == dict(spec.vars)["mcast"] and check_groups(mft) == []
            assert len(mft.group("g1").mlids) == (12 if mft.engine == "source-based" else 1)
            assert mft.group("g2").mlid == 0xC100

    def test_without_groups_nothing_is_built_or_looked_up(self):
        sim = ibfabric.Simulation(PAIR, overrides={"**.multicastGroups": "", "**.multicastRouting": "no-such-engine"})
        assert len(sim.tables.mft) == 0 and sim.tables.mft.groups == () and sim.tables.mft.entries() == {}

    def test_errors_are_located_at_the_subnet_manager(self, tmp_path):
        path = tmp_path / "pair.ned"
        path.write_text(PAIR.replace("senders=a,d", "senders=a,h7"))
        with pytest.raises(ConfigError, match=rf"^{path}:12:9: pair.sm: multicastGroups: group 'all': unknown host 'h7'"):
            ibfabric.Simulation(path)
        names = PluginSet.load().multicast_routing_engines.names()  # the built-ins and other plugins' engines
        assert {"shared", "source-based"} <= set(names)
        with pytest.raises(PluginError, match=rf"unknown multicast routing engine 'nope' \(valid: {re.escape(', '.join(names))}\)"):
            ibfabric.Simulation(PAIR, overrides={"**.multicastRouting": "nope"})
        with pytest.raises(ConfigError, match=r"pair.sm: multicast routing engine 'source-based': unknown option 'root'"
                                              r" \(valid: none\)$"):
            ibfabric.Simulation(PAIR, overrides={"**.multicastOptions": "root=s0"})

    def test_dump_round_trip_of_sm_built_tables(self):
        sim = ibfabric.Simulation("kim2007_15", overrides={
            "**.multicastGroups": "v: h0_0 h3_1 h9_2 h14_0; a: h1_0 h10_2 senders=*; c: h5_0 h6_0 h8_1 h12_1"})
        mft = sim.tables.mft
        assert len(mft.mlids) == 4 + 29 + 4 and check_groups(mft) == []
        back = read_mfts("m.dump", sim.fabric, text=write_mfts(mft))
        assert back == mft and back.groups == ()
        back.groups = mft.groups
        assert check_groups(back) == []

    def test_determinism(self):
        over = {"**.multicastGroups": "v: h0_0 h3_1 h9_2 h14_0 senders=*"}
        one, two = (ibfabric.Simulation("kim2007_15", overrides=over, seed=s).tables.mft for s in (1, 2))
        assert one == two and write_mfts(one) == write_mfts(two) and one.groups == two.groups


class TestCheckGroups:
    @pytest.fixture
    def mft(self):
        return ibfabric.Simulation(PAIR).tables.mft

    def test_clean(self, mft):
        assert check_groups(mft) == []

    def test_a_member_cut_off(self, mft):
        mft.set(mft.fabric.index("pair.s1"), 0xC100, [1])  # s1 forgets d for a's packets
        assert check_groups(mft) == ["group 'all' (MLID 0xC100) from a: members not reached: d"]

    def test_a_copy_to_a_stranger(self, mft):
        g = mft.fabric
        mft.set(g.index("pair.s0"), 0xC000, [1, 2])  # port 1 is where a's packets come in: no copy back to a
        mft.set(g.index("pair.s0"), 0xC001, [1, 3])  # b's packets for ab go to s1 too...
        mft.set(g.index("pair.s1"), 0xC001, [1])  # ... which passes them to c
        assert check_groups(mft) == ["group 'ab' (MLID 0xC001) from b: packets reach non-members: c"]

    def test_a_stray_mlid(self, mft):
        mft.set(mft.fabric.index("pair.s0"), 0xC200, [1])
        assert check_groups(mft) == ["MLID 0xC200 has entries but belongs to no group"]

    def test_a_loop(self):
        # a triangle s0 - s1 - s2 - s0, a on s0 and b on s1, every port in the mask
        g = FabricGraph([NodeSpec(f"s{i}", True, 3) for i in range(3)] + [NodeSpec("a", False, 1), NodeSpec("b", False, 1)],
                        [Link(0, 1, 1, 1), Link(1, 2, 2, 1), Link(2, 2, 0, 2), Link(3, 1, 0, 3), Link(4, 1, 1, 3)]).with_lids()
        (grp,) = assign_mlids(declare_groups("g: a b", g), per_sender=False)
        mft = MulticastTables(g, groups=[grp])
        for sw in range(3):
            mft.set(sw, 0xC000, g.ports(sw))
        # both ways round the triangle: s2 gets a copy from s0 and one from s1
        assert check_groups(mft) == ["group 'g' (MLID 0xC000) from a: packets reach s2 twice (a loop or two paths)",
                                     "group 'g' (MLID 0xC000) from b: packets reach s2 twice (a loop or two paths)"]

    def test_a_port_leading_nowhere(self):
        g = FabricGraph([NodeSpec("s", True, 3), NodeSpec("a", False, 1), NodeSpec("b", False, 1)],
                        [Link(1, 1, 0, 1), Link(2, 1, 0, 2)]).with_lids()
        (grp,) = assign_mlids(declare_groups("g: a b", g), per_sender=False)
        mft = MulticastTables(g, groups=[grp])
        mft.set(0, 0xC000, [1, 2, 3])
        assert check_groups(mft) == ["MLID 0xC000: s port 3 is in the mask but leads nowhere"]

    def test_two_groups_on_one_mlid(self):
        g = pair_fabric()
        a, b = (assign_mlids(declare_groups(t, g), per_sender=False)[0] for t in ("x: a b", "y: c d"))
        mft = MulticastTables(g, groups=[a, b])
        assert "MLID 0xC000 serves two groups ('x' and 'y')" in check_groups(mft)


class TestRoutesCli:
    def test_groups_of_the_topology_are_checked_and_written(self, tmp_path, capsys):
        from ibfabric.cli import main

        ned = tmp_path / "pair.ned"
        ned.write_text(PAIR)
        out = tmp_path / "m.dump"
        assert main(["routes", str(ned), "--check", "--mfts-out", str(out)]) == 0
        assert "multicast: 2 groups (source-based), 4 MLIDs, no problems" in capsys.readouterr().out
        g = pair_fabric()
        assert read_mfts(out, g) == ibfabric.Simulation(PAIR, overrides={"**.routing": "minhop"}).tables.mft
        # the same dump checked against the groups as the shared engine would give them MLIDs
        assert main(["routes", str(ned), "--multicast-routing", "shared", "--mfts", str(out), "--check"]) == 1
        assert "MLID 0xC001 has entries but belongs to no group" in capsys.readouterr().out

    def test_groups_on_the_command_line(self, tmp_path, capsys):
        from ibfabric.cli import main

        ned = Path(__file__).resolve().parents[2] / "topologies" / "irregular16.ned"
        assert main(["routes", str(ned), "--routing", "updn", "--groups", "g: 0..5 senders=7", "--multicast-routing",
                     "shared", "--multicast-set", "root=sw3", "--check"]) == 0
        assert "multicast: 1 group (shared), 1 MLID, no problems" in capsys.readouterr().out
        assert main(["routes", str(ned), "--groups", "g: 0 999", "--check"]) == 2
        err = capsys.readouterr().err
        assert err.strip().endswith("--groups: multicastGroups: group 'g': host index 999 is out of range (the network"
                                    " has 64 hosts: 0..63)") and err.count("\n") == 1

    def test_without_groups_the_tables_are_as_before(self, tmp_path, capsys):
        from ibfabric.cli import main

        ned = Path(__file__).resolve().parents[2] / "topologies" / "irregular16.ned"
        assert main(["routes", str(ned), "--routing", "updn", "--check"]) == 0
        assert "multicast" not in capsys.readouterr().out
        out = tmp_path / "empty.dump"
        assert main(["routes", str(ned), "--mfts-out", str(out), "-o", str(tmp_path / "l.dump")]) == 0
        assert out.read_text() == "\n"


    def test_a_topology_without_multicast_is_elaborated_once(self, monkeypatch, capsys):
        import ibfabric.topologies
        from ibfabric.cli import main

        def fail(*args, **kw):
            raise AssertionError("elaborated a second time")

        monkeypatch.setattr(ibfabric.topologies, "load_network", fail)
        ned = Path(__file__).resolve().parents[2] / "topologies" / "irregular16.ned"
        assert main(["routes", str(ned), "--routing", "updn", "--groups", "g: 0 1", "--check"]) == 0
        assert "multicast: 1 group (source-based), 2 MLIDs, no problems" in capsys.readouterr().out


@pytest.mark.parametrize("module", ["ibfabric.components.routing.mgroups", "ibfabric.components.routing.mtrees",
                                    "ibfabric.plugins.routing.multicast"])
def test_doctests(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


def test_masks_are_numpy_bool():
    mft = ibfabric.Simulation(PAIR).tables.mft
    assert all(m.dtype == np.bool_ for m in mft.masks.values())
