"""Multicast forwarding tables and OpenSM's opensm-mfts.dump format: exact text, round trips, located errors."""

from pathlib import Path

import numpy as np
import pytest

from ibfabric.components.routing.mfts import (MulticastTables, check_multicast, parse_mfts, read_mfts, shared_tree,
                                              write_mfts)
from ibfabric.errors import ConfigError

from .test_opensm import tiny


def tiny_mft():
    g = tiny()  # s1 (node 0, GUID 0x20, 2 ports), s2 (node 1, GUID 0x10, 2 ports)
    t = MulticastTables(g)
    t.set(0, 0xC000, [1, 2])
    t.set(1, 0xC000, [1])
    t.set(0, 0xC001, [0, 2])
    return t


# what OpenSM's dump_mcast_routes writes: switches in GUID order, each port as " 0x%03X "
EXPECTED = """
Switch 0x0000000000000010
LID    : Out Port(s)
0xC000 : 0x001 

Switch 0x0000000000000020
LID    : Out Port(s)
0xC000 : 0x001  0x002 
0xC001 : 0x000  0x002 
"""


class TestMulticastTables:
    def test_masks(self):
        t = tiny_mft()
        assert t.width == 3 and t.mlids == [0xC000, 0xC001]
        assert t.ports(0, 0xC000) == [1, 2] and t.ports(1, 0xC001) == [] and t.ports(1, 0xC005) == []
        t.set(0, 0xC001, [])
        assert t.mlids == [0xC000]

    @pytest.mark.parametrize("mlid, ports, message", [
        (0xBFFF, [1], "not a multicast LID"), (0xFFFF, [1], "not a multicast LID"), (0xC000, [3], "s1 has no port 3"),
    ])
    def test_bad_entries(self, mlid, ports, message):
        with pytest.raises(ValueError, match=message):
            tiny_mft().set(0, mlid, ports)

    def test_a_host_has_no_mft(self):
        with pytest.raises(ValueError, match="a is not a switch"):
            tiny_mft().ports(2, 0xC000)

    def test_copy_is_independent(self):
        t = tiny_mft()
        c = t.copy()
        c.set(0, 0xC000, [2])
        assert t.ports(0, 0xC000) == [1, 2] and c != t and tiny_mft() == t


class TestMftsFormat:
    def test_write_exact(self):
        assert write_mfts(tiny_mft()) == EXPECTED

    def test_read_back(self):
        assert read_mfts("x.dump", tiny(), text=EXPECTED).masks.keys() == {0xC000, 0xC001}
        g = tiny()
        t = read_mfts("x.dump", g, text=EXPECTED)
        assert write_mfts(t) == EXPECTED
        assert t.ports(0, 0xC001) == [0, 2]

    def test_parse(self):
        sw = parse_mfts(EXPECTED)
        assert [(s["guid"], s["line"]) for s in sw] == [(0x10, 2), (0x20, 6)]
        assert sw[1]["entries"][0xC000][:2] == ([1, 2], 8)

    def test_empty_dump(self):
        assert len(read_mfts("x.dump", tiny(), text="")) == 0
        assert write_mfts(MulticastTables(tiny())) == "\n"

    @pytest.mark.parametrize("text, message", [
        ("0xC000 : 0x001\n", r"^x.dump:1:1: table entry before any 'Switch 0x\.\.\.' line$"),
        (EXPECTED.replace("0xC001 :", "0xC001 -"), r"^x.dump:9:1: cannot parse"),
        (EXPECTED.replace("0xC001 :", "0xBFFF :"), r"^x.dump:9:1: LID 0xBFFF is not a multicast LID"),
        (EXPECTED.replace("0xC001 :", "0xFFFF :"), r"^x.dump:9:1: LID 0xFFFF is not a multicast LID"),
        (EXPECTED.replace("0xC001 :", "0xC000 :"), r"^x.dump:9:1: MLID 0xC000 appears twice .* \(first at line 8\)"),
        (EXPECTED.replace("0x000  0x002", "0x002  0x002"), r"^x.dump:9:17: port 2 is listed twice"),
        (EXPECTED.replace("0x000  0x002", "0x000  0x0FF"), r"^x.dump:9:17: port 255 is not a valid port"),
        (EXPECTED.replace("0x000  0x002", "0x000  7"), r"^x.dump:9:17: '7' is not a port"),
        (EXPECTED.replace("0x000  0x002", "0x000  0x003"), r"^x.dump:9:17: s1 has no port 3$"),
        (EXPECTED.replace("Switch 0x0000000000000020", "Switch 0x99"), r"^x.dump:6:8: switch guid 0x0+99 is not in"),
        (EXPECTED + "\nSwitch 0x10\n0xC005 : 0x001\n", r"^x.dump:11:8: switch guid 0x0+10 has a second table \(the first at line 2\)"),
        ("Switch 0x" + "f" * 17 + "\n", r"^x.dump:1:8: switch GUID has more than 64 bits"),
        ("Unicast lids [0-3] of switch Lid 2 guid 0x10 ('s2'):\n", r"^x.dump:1:1: this is a unicast dump"),
    ])
    def test_errors_name_file_line_and_column(self, text, message):
        with pytest.raises(ConfigError, match=message) as err:
            read_mfts("x.dump", tiny(), text=text)
        assert "\n" not in str(err.value)

    def test_file_that_is_not_text(self, tmp_path):
        p = tmp_path / "bin.dump"
        p.write_bytes(b"Switch 0x10\n\xff\xfe")
        with pytest.raises(ConfigError, match=r"bin.dump:2:1: .*UTF-8"):
            read_mfts(p, tiny())

    def test_random_tables_round_trip(self):
        g = tiny()
        rng = np.random.default_rng(3)
        t = MulticastTables(g)
        for mlid in rng.choice(np.arange(0xC000, 0xFFFF), 40, replace=False).tolist():
            for node in (0, 1):
                t.set(node, mlid, np.flatnonzero(rng.random(3) < 0.5).tolist())
        assert read_mfts("x", g, text=write_mfts(t)) == t


class TestCheckMulticast:
    """Members (endpoints whose attachment port is in the mask) reached exactly once from every member."""

    @pytest.fixture
    def g(self):
        from ibfabric.topologies import generators

        return generators.irregular(16, links_per_switch=4, hosts_per_switch=2, seed=1).with_lids()

    def test_shared_trees_are_clean(self, g):
        t = MulticastTables(g)
        n = len(g.ep_node)
        shared_tree(t, 0xC000, list(range(n)))
        shared_tree(t, 0xC001, [3, n - 1])
        assert check_multicast(t) == []
        # a two-member group uses only the switches on the path between them (and nothing else has a mask)
        used = [sw for sw in g.switches.tolist() if t.ports(sw, 0xC001)]
        a, b = g.attachment(3)[0], g.attachment(n - 1)[0]
        assert a in used and b in used and len(used) <= 1 + g.switch_hops()[g.switch_row[a], g.switch_row[b]]

    def test_a_loop_is_found(self, g):
        t = MulticastTables(g)
        shared_tree(t, 0xC000, list(range(len(g.ep_node))))
        for sw in g.switches.tolist():  # flood: every switch port in every mask
            t.set(sw, 0xC000, g.ports(sw))
        problems = check_multicast(t)
        assert problems and all("twice" in p for p in problems)

    def test_a_member_cut_off_is_found(self, g):
        t = MulticastTables(g)
        n = len(g.ep_node)
        shared_tree(t, 0xC000, list(range(n)))
        far = g.attachment(n - 1)[0]
        t.set(far, 0xC000, [g.attachment(n - 1)[1]])  # its switch keeps only the host port
        assert any("members not reached" in p for p in check_multicast(t))

    def test_a_port_leading_nowhere_is_found(self):
        g = tiny()
        t = MulticastTables(g)
        t.set(1, 0xC000, [2])  # s2 port 2 is not connected
        assert check_multicast(t) == ["MLID 0xC000: s2 port 2 is in the mask but leads nowhere"]


class TestCli:
    def test_routes_checks_an_mfts_dump(self, tmp_path, capsys):
        from ibfabric.cli import main
        from ibfabric.topologies import load_fabric

        ned = Path(__file__).resolve().parents[2] / "topologies" / "irregular16.ned"
        g = load_fabric(ned).with_lids()
        t = MulticastTables(g)
        shared_tree(t, 0xC000, list(range(len(g.ep_node))))
        dump = tmp_path / "m.dump"
        dump.write_text(write_mfts(t))
        assert main(["routes", str(ned), "--routing", "updn", "--mfts", str(dump), "--check"]) == 0
        assert "multicast: 1 MLID, no problems" in capsys.readouterr().out
        for sw in g.switches.tolist():
            t.set(sw, 0xC000, g.ports(sw))
        dump.write_text(write_mfts(t))
        assert main(["routes", str(ned), "--routing", "updn", "--mfts", str(dump), "--check"]) == 1
        assert "problems" in capsys.readouterr().out
