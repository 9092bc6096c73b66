"""OpenSM's opensm-lfts.dump format: exact text, parsing, errors, round trips."""

import numpy as np
import pytest

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.opensm import dump_lids, parse_lfts, read_lfts, write_lfts
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError


def tiny():
    # s1 (LID 1, GUID 0x20) - s2 (LID 2, GUID 0x10), host a (LID 3, GUID 0x100) on s1 port 2
    return FabricGraph(
        [NodeSpec("s1", True, 2, lid=1, guid=0x20), NodeSpec("s2", True, 2, lid=2, guid=0x10),
         NodeSpec("a", False, 1, lid=3, guid=0x100, desc="a HCA-1")],
        [Link(0, 1, 1, 1), Link(2, 1, 0, 2)],
    )  # fmt: skip


def tiny_tables():
    g = tiny()
    lft = np.full((2, 4), NO_PORT, dtype=np.uint8)
    lft[0, 1:4] = [0, 1, 2]
    lft[1, 2] = 0
    return ForwardingTables(g, lft, default_port=np.array([-1, 1]))


# what OpenSM 3.3.23 writes for these tables (see topologies/data/opensm for real dumps):
# switches in GUID order, LID 0 and LIDs without a port skipped, default ports expanded
EXPECTED = """\
Unicast lids [0-3] of switch Lid 2 guid 0x0000000000000010 ('s2'):
0x0001 001 # Switch portguid 0x0000000000000020: 's1'
0x0002 000 # Switch portguid 0x0000000000000010: 's2'
0x0003 001 # Channel Adapter portguid 0x0000000000000101: 'a HCA-1'
3 lids dumped
Unicast lids [0-3] of switch Lid 1 guid 0x0000000000000020 ('s1'):
0x0001 000 # Switch portguid 0x0000000000000020: 's1'
0x0002 001 # Switch portguid 0x0000000000000010: 's2'
0x0003 002 # Channel Adapter portguid 0x0000000000000101: 'a HCA-1'
3 lids dumped
"""


class TestOpenSMFormat:
    def test_write_exact(self):
        assert write_lfts(tiny_tables()) == EXPECTED

    def test_read_back(self):
        t = read_lfts("x.dump", tiny(), text=EXPECTED)
        assert np.array_equal(t.lft, tiny_tables().expanded())
        assert t.engine == "file" and t.info["missing"] == []

    def test_parse(self):
        sw = parse_lfts(EXPECTED)
        assert [(s["guid"], s["lid"], s["desc"], s["line"]) for s in sw] == [(0x10, 2, "s2", 1), (0x20, 1, "s1", 6)]
        assert sw[1]["entries"][3] == (2, 9) and sw[1]["names"][3] == "a HCA-1"
        assert dump_lids(EXPECTED) == {"s1": 1, "s2": 2, "a HCA-1": 3}

    def test_switches_are_matched_by_guid_only(self):
        # a header whose GUID the fabric lacks is an error naming the GUID and its line, even if the LID or name match
        other = EXPECTED.replace("guid 0x0000000000000010", "guid 0x00000000000000aa")
        with pytest.raises(ConfigError, match=r"^x.dump:1:\d+: switch guid 0x00000000000000aa \('s2'\) is not in the fabric"):
            read_lfts("x.dump", tiny(), text=other)
        by_name = other.replace("switch Lid 2 guid", "switch guid")  # older OpenSM headers have no Lid
        with pytest.raises(ConfigError, match="switch guid 0x00000000000000aa"):
            read_lfts("x.dump", tiny(), text=by_name)

    def test_hex_lid_ranges_and_comments_accepted(self):
        text = "# made by hand\n" + EXPECTED.replace("[0-3]", "[0x0-0x3]")
        assert np.array_equal(read_lfts("x.dump", tiny(), text=text).lft, tiny_tables().expanded())

    def test_missing_switch_reported(self):
        half = EXPECTED.split("3 lids dumped\n")[0] + "3 lids dumped\n"
        t = read_lfts("x.dump", tiny(), text=half)
        assert t.info["missing"] == ["s1"] and (t.lft[0] == NO_PORT).all()

    @pytest.mark.parametrize(
        "text, message",
        [
            ("0x0001 000\n", r"x.dump:1:1: table entry before any 'Unicast lids"),
            (EXPECTED.replace("0x0003 001", "0x0003 xyz"), r"x.dump:4:1: cannot parse"),
            (EXPECTED.replace("0x0003 002", "0x0009 002"), r"x.dump:9:1: LID 9 is beyond the fabric's highest LID \(3\)"),
            (EXPECTED.replace("0x0003 002", "0x0003 007"), r"x.dump:9:8: s1 has no port 7"),
            (EXPECTED.replace("'s1'):", "'zz'):").replace("Lid 1 guid 0x0000000000000020", "guid 0x0000000000000099"),
             r"x.dump:6:\d+: switch guid 0x0000000000000099 \('zz'\) is not in the fabric"),
            ("Multicast mlids [0xc000-0xc001] of switch Lid 1 guid 0x1:\n", r"x.dump:1:1: this is a multicast dump"),
        ],
    )
    def test_errors_name_file_and_line(self, text, message):
        with pytest.raises(ConfigError, match=message):
            read_lfts("x.dump", tiny(), text=text)

    def test_opensm_file_engine_parser_rules(self):
        # osm_ucast_file.c needs whitespace after the LID and after the port, and "guid 0x" + space in headers
        for line in write_lfts(tiny_tables()).splitlines():
            if line.startswith("0x"):
                lid, port, rest = line.split(" ", 2)
                assert len(lid) == 6 and port.isdigit() and rest.startswith("# ")
            elif line.startswith("Unicast"):
                assert " guid 0x" in line and line.split(" guid 0x")[1][16] == " "
