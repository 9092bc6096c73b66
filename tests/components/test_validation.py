"""One validation path for the subnet: every command and the Python API stop at the same first error.

Each reproducer is a topology (or table dump) that used to reach a traceback,
a huge allocation or a wrong result through some entry point; now every entry
point gives one ``IbfabricError`` line, ``file:line:col: ...`` for files, and
the CLI exits 2 with ``ibfabric: error: ...``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import ibfabric
from ibfabric.cli import main
from ibfabric.components.routing import validate
from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.errors import ConfigError, IbfabricError, TopologyError
from ibfabric.topologies import load_fabric, load_network

ROOT = Path(__file__).resolve().parents[2]
TWO = ROOT / "tests" / "data" / "ibnetdiscover" / "two_node.ibnetdiscover"
FIG1 = ROOT / "topologies" / "bermudez2006_fig1.ned"

# a switch and two hosts; {a} and {b} are the hosts' parameters, {link} the second link's
NED = """network n
{{
    submodules:
        sw: Switch {{ numPorts = 4; }}
        a: HCA {{ {a} }}
        b: HCA {{ {b} }}
    connections:
        sw.port[1] <--> Link <--> a.port[1];
        sw.port[2] <--> Link {{ {link} }} <--> b.port[1];
}}
"""


def ned(tmp_path, a="", b="", link=""):
    path = tmp_path / "t.ned"
    path.write_text(NED.format(a=a, b=b, link=link))
    return path


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys, argv, where, message):
    """The CLI exits 2 with one ``ibfabric: error: WHERE: ...MESSAGE...`` line on stderr, no traceback."""
    code, _, err = cli(capsys, *argv)
    assert code == 2, err
    assert err.startswith(f"ibfabric: error: {where}: "), err
    assert message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ------------------------------------------------------------------ .ned reproducers

NED_CASES = {
    # id: (a, b, link, where (line:col), error class, message)
    "duplicate-lid": ("lid = 5;", "lid = 5;", "", "6:9", TopologyError, "LID 5 is used by both n.a port 1 and n.b port 1"),
    "multicast-lid": ("lid = 49152;", "", "", "5:9", ConfigError,
                      "n.a: 'lid' must be a unicast LID in 1..0xBFFF, or 0 for one the subnet manager assigns "
                      "(got 49152 = 0xC000, a multicast LID)"),
    "lmc-8": ("lmc = 8;", "", "", "5:9", ConfigError, "n.a: 'lmc' must be in 0..7 (got 8)"),
    "lid-2**32": ("lid = 4294967296;", "", "", "5:9", ConfigError, "(got 4294967296)"),
    "lid-2**63-1": ("lid = 9223372036854775807;", "", "", "5:9", ConfigError, "(got 9223372036854775807)"),
    "lmc-range-beyond-unicast": ("lid = 49150; lmc = 2;", "", "", "5:9", ConfigError,
                                 "'lid' 49150 with lmc 2 owns LIDs up to 49153, beyond the last unicast LID 0xBFFF"),
    "speed-lower-case": ("", "", 'speed = "qdr";', "9:9", ConfigError,
                         "'speed' must be one of (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR) (got 'qdr'; speeds are upper case: 'QDR')"),
    "speed-unknown": ("", "", 'speed = "ZZR";', "9:9", ConfigError, "'speed' must be one of (SDR, DDR, QDR"),
    "duplicate-guid": ('guid = "0x10";', 'guid = "0010";', "", "6:9", TopologyError,
                       "n.b: GUID 0x0000000000000010 is also the GUID of n.a; node GUIDs must be unique"),
    "guid-96-bits": ('guid = "ffffffffffffffffffffffff";', "", "", "5:9", ConfigError,
                     "n.a: 'guid' must be a non-zero 64-bit hexadecimal number such as '0002c903000e0b72' (got 'ffffffffffffffffffffffff')"),
    "guid-negative": ('guid = "-5";', "", "", "5:9", ConfigError, "'guid' must be a non-zero 64-bit hexadecimal number"),
    "guid-zero": ('guid = "0";', "", "", "5:9", ConfigError, "(got '0')"),
    "guid-no-room-for-ports": ('guid = "ffffffffffffffff";', "", "", "5:9", ConfigError, "leaves no room for its port GUIDs"),
    "negative-data-rate": ("", "", "dataRate = -1bps;", "9:9", ConfigError, "'dataRate' must be >= 0"),
}


class TestNedInputs:
    @pytest.mark.parametrize("case", sorted(NED_CASES))
    def test_library_entry_points(self, tmp_path, case):
        a, b, link, where, cls, message = NED_CASES[case]
        path = ned(tmp_path, a, b, link)
        for load in (load_fabric, load_network, ibfabric.load):
            with pytest.raises(cls) as info:
                load(path)
            text = str(info.value)
            assert text.startswith(f"{path}:{where}: ") and message in text, text
            assert len(text.splitlines()) == 1

    @pytest.mark.parametrize("case", sorted(NED_CASES))
    @pytest.mark.parametrize("command", [["topo", "show"], ["routes"], ["run"], ["topo", "convert"]])
    def test_commands(self, tmp_path, capsys, case, command):
        a, b, link, where, _, message = NED_CASES[case]
        path = ned(tmp_path, a, b, link)
        extra = ["-o", tmp_path / "out.ned"] if command == ["topo", "convert"] else []
        one_line_error(capsys, [*command, path, *extra], f"{path}:{where}", message)
        assert not (tmp_path / "out.ned").exists()

    def test_overrides_are_checked_too(self, tmp_path, capsys):
        # a wildcard gives every host LID 5: the second one is the error
        path = ned(tmp_path)
        one_line_error(capsys, ["run", path, "--set", "**.a.lid=5", "--set", "**.b.lid=5"], f"{path}:6:9",
                       "LID 5 is used by both n.a port 1 and n.b port 1")

    def test_a_valid_fabric_still_loads(self, tmp_path):
        g = load_fabric(ned(tmp_path, "lid = 5;", "lid = 6;", 'speed = "FDR";'))
        assert sorted(g.ep_lid.tolist()) == [0, 5, 6] and g.links[1].speed == "FDR"


class TestPythonApi:
    """FabricGraph and NodeSpec built by hand meet the same rules (messages without a place)."""

    @pytest.mark.parametrize("kw, message", [
        (dict(lid=0xC000), "'lid' must be a unicast LID"),
        (dict(lid=-1), "'lid' must be a unicast LID"),
        (dict(lmc=8), "'lmc' must be in 0..7 (got 8)"),
        (dict(guid=1 << 64), "'guid' must be a non-zero 64-bit number"),
        (dict(num_ports=255), "'numPorts' must be in 1..254 (got 255)"),
        (dict(port_lids={3: 7}), "'portLids' names port 3"),
        (dict(lid=10**30), "(got 1000000000...000000 (31 digits))"),
    ])
    def test_node_fields(self, kw, message):
        with pytest.raises(ConfigError, match=re.escape(message)):
            NodeSpec("h", False, kw.pop("num_ports", 2), **kw)

    @pytest.mark.parametrize("links, cls, message", [
        ([Link(0, 1, 0, 2)], TopologyError, "port 1 of sw is cabled to its own port 2; a link must join two nodes"),
        ([Link(0, 1, 0, 1)], TopologyError, "port 1 of sw is cabled to itself"),
        ([Link(0, 0, 1, 1)], TopologyError, "sw.port[0] is the management port and cannot be connected"),
        ([Link(0, 1, 1, 1, speed="qdr")], ConfigError, "speeds are upper case: 'QDR'"),
        ([Link(0, 1, 1, 1, width="3x")], ConfigError, "'width' must be one of (1x, 2x, 4x, 8x, 12x) (got '3x')"),
        ([Link(0, 1, 1, 1, rate=float("nan"))], ConfigError, "'dataRate' must be >= 0 (got nanbps)"),
    ])
    def test_links(self, links, cls, message):
        with pytest.raises(cls, match=re.escape(message)):
            FabricGraph([NodeSpec("sw", True, 4), NodeSpec("h", False, 1)], links)

    def test_lmc_ranges_overlap(self):
        with pytest.raises(TopologyError, match=r"LID 6 is used by both sw and h port 1 \(its LMC range is 4..7\)"):
            FabricGraph([NodeSpec("sw", True, 4, lid=6), NodeSpec("h", False, 1, lid=4, lmc=2)], [Link(0, 1, 1, 1)])

    def test_derived_guids_collide_with_given_ones(self):
        from ibfabric.components.routing.fabric import _guid_from_name

        nodes = [NodeSpec("sw", True, 4), NodeSpec("h", False, 1, guid=_guid_from_name("sw"))]
        with pytest.raises(TopologyError, match="h: GUID 0x.* is also the GUID of sw"):
            FabricGraph(nodes, [Link(0, 1, 1, 1)])

    def test_nothing_is_allocated_from_an_unchecked_lid(self):
        # before: lid_owner was sized from the largest LID (32 GiB for 2**32)
        with pytest.raises(ConfigError):
            FabricGraph([NodeSpec("sw", True, 4, lid=1 << 32)], [])
        g = FabricGraph([NodeSpec("sw", True, 4, lid=0xBFFF)], [])
        assert len(g.lid_owner) == 0xC000

    def test_with_lids_checks_its_lmc(self):
        with pytest.raises(ConfigError, match="'lmc' must be in 0..7 \\(got 9\\)"):
            FabricGraph([NodeSpec("sw", True, 4), NodeSpec("h", False, 1)], [Link(0, 1, 1, 1)]).with_lids(lmc=9)


# ------------------------------------------------------------------ ibnetdiscover reproducers

def dump(tmp_path, text, name="d.ibnetdiscover"):
    path = tmp_path / name
    path.write_text(text)
    return path


TWO_TEXT = TWO.read_text()

DUMP_CASES = {
    # id: (edit of two_node.ibnetdiscover, where (line:col), message)
    "duplicate-lid": (lambda t: t.replace("lid 3 lmc 0", "lid 8 lmc 0"), "25:1",
                      'LID 8 is used by both H-0002c90300001dd0 "node1" port 1 and H-001e0bffff4cafc0 "node2" port 1'),
    "multicast-lid": (lambda t: t.replace("lid 3 lmc 0", "lid 49152 lmc 0"), "26:53",
                      "H-001e0bffff4cafc0 port 1: the LID must be a unicast LID in 1..0xBFFF, or 0 for one the subnet "
                      "manager assigns (got 49152 = 0xC000, a multicast LID)"),
    "switch-lmc-8": (lambda t: t.replace("port 0 lid 1 lmc 0", "port 0 lid 1 lmc 8"), "10:72",
                     "S-0008f10500200134: the LMC must be in 0..7 (got 8)"),
    "huge-lid": (lambda t: t.replace("lid 3 lmc 0", "lid 4294967296 lmc 0"), "26:53", "(got 4294967296)"),
    "lid-20-digits": (lambda t: t.replace("lid 3 lmc 0", "lid 12345678901234567890 lmc 0"), "26:53",
                      "(got 12345678901234567890)"),
    "lid-400-digits": (lambda t: t.replace("lid 3 lmc 0", f"lid {'9' * 400} lmc 0"), "26:53",
                       "LID 999999999999... (400 digits) is far too large"),
    "unknown-speed": (lambda t: t.replace("lid 3 4xFDR", "lid 3 4xZZR"), "11:63",
                      "unknown link width/speed '4xZZR': 'speed' must be one of (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR) (got 'ZZR')"),
    "lower-case-speed": (lambda t: t.replace("lid 3 4xFDR", "lid 3 4xfdr"), "11:63", "speeds are upper case: 'FDR'"),
    "unknown-width": (lambda t: t.replace("lid 3 4xFDR", "lid 3 3xFDR"), "11:63", "'width' must be one of (1x, 2x, 4x, 8x, 12x)"),
    "duplicate-guid": (lambda t: t.replace("H-001e0bffff4cafc0", "H-0008f10500200134"), "25:1",
                       'H-0008f10500200134 "node2": GUID 0x0008f10500200134 is also the GUID of S-0008f10500200134 "ibswitch"'),
    "guid-96-bits": (lambda t: t.replace("H-001e0bffff4cafc0", "H-ffffffffffffffffffffffff"), "25:9",
                     "the GUID must be a non-zero 64-bit hexadecimal number"),
    "guid-negative": (lambda t: t.replace("H-001e0bffff4cafc0", "H--5"), "25:9", "(got '-5')"),
    "guid-zero": (lambda t: t.replace("H-001e0bffff4cafc0", "H-0000000000000000"), "25:9", "(got '0000000000000000')"),
    "self-loop": (lambda t: t.replace('[4]\t"H-001e0bffff4cafc0"[1](1e0bffff4cafc1)', '[4]\t"S-0008f10500200134"[7]')
                  .replace('[1](1e0bffff4cafc1) \t"S-0008f10500200134"[4]', '[1](1e0bffff4cafc1) \t"S-0008f10500200134"[9]'),
                  "11:1", 'port 4 of S-0008f10500200134 "ibswitch" is cabled to its own port 7; a link must join two nodes'),
}


class TestIbnetdiscoverInputs:
    @pytest.mark.parametrize("case", sorted(DUMP_CASES))
    def test_errors_are_at_the_dumps_own_place(self, tmp_path, capsys, case):
        edit, where, message = DUMP_CASES[case]
        path = dump(tmp_path, edit(TWO_TEXT))
        for load in (load_fabric, ibfabric.load):
            with pytest.raises(IbfabricError) as info:
                load(path)
            assert str(info.value).startswith(f"{path}:{where}: ") and message in str(info.value), str(info.value)
        for command in (["topo", "show"], ["routes"], ["run"]):
            one_line_error(capsys, [*command, path], f"{path}:{where}", message)

    def test_a_one_line_dump_reports_line_1(self, tmp_path, capsys):
        # before: 'line 7' of the NED text generated from it
        path = dump(tmp_path, 'Switch 4 "S-01" # "s" port 0 lid 49152 lmc 0\n')
        one_line_error(capsys, ["topo", "show", path], f"{path}:1:34", "the LID must be a unicast LID")

    def test_not_a_dump_by_name_and_content(self, tmp_path, capsys):
        path = dump(tmp_path, "network x\n{\n}\n")
        one_line_error(capsys, ["topo", "show", path], f"{path}:1:1",
                       "not an ibnetdiscover dump (expected 'Switch'/'Ca' lines such as")
        with pytest.raises(TopologyError, match=r"^.*d\.ibnetdiscover:1:1: not an ibnetdiscover dump \(no 'Switch'/'Ca' lines"):
            load_fabric(dump(tmp_path, ""))
        # a dump is recognised by its content whatever its name
        assert len(load_fabric(dump(tmp_path, TWO_TEXT, "cluster.txt")).nodes) == 3

    def test_locations_of_the_elaborated_network_are_the_dumps(self, tmp_path):
        path = dump(tmp_path, TWO_TEXT)
        net = load_network(path)
        sw = net.module("d.ibswitch")
        assert (sw.location.file, sw.location.line, sw.location.column) == (str(path), 10, 1)
        conn = next(c for c in net.flat_connections() if c.src.path == "d.ibswitch")
        assert conn.location.line == 11
        assert load_fabric(path).nodes[0].where == f"{path}:10:1"

    def test_routers_are_imported_as_channel_adapters(self, tmp_path):
        g = load_fabric(dump(tmp_path, TWO_TEXT.replace('Ca\t2 "H-001e0bffff4cafc0"', 'Rt\t2 "H-001e0bffff4cafc0"')))
        assert not g.is_switch[g.index("d.node2")]

    def test_a_dump_that_is_not_utf8(self, tmp_path, capsys):
        path = tmp_path / "bad.ibnetdiscover"
        path.write_bytes(TWO_TEXT.encode().replace(b'"node1"', b'"n\xffde1"', 1))
        col = TWO_TEXT.splitlines()[11].index('"node1"') + 3
        one_line_error(capsys, ["topo", "show", path], f"{path}:12:{col}", "not UTF-8 text (byte 0xff)")


# ------------------------------------------------------------------ OpenSM table reproducers

@pytest.fixture
def fig1_dump(tmp_path):
    """fig1 with its own LIDs, and updn's tables for it as opensm-lfts.dump text (lines as a list)."""
    out = tmp_path / "fig1.dump"
    assert main(["routes", str(FIG1), "--routing", "updn", "-o", str(out)]) == 0
    return out.read_text().splitlines()


def write(tmp_path, lines, name="t.dump"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


class TestOpenSMDumps:
    def both(self, capsys, path, where, message):
        """``routes --routing file`` and ``run --routing file`` give the same one-line error."""
        one_line_error(capsys, ["routes", FIG1, "--routing", "file", "--set", f"path={path}", "--check"], where, message)
        one_line_error(capsys, ["run", FIG1, "--routing", "file", "--set", f"path={path}", "--time", "20us"], where, message)

    def test_a_route_to_port_0_of_a_switch(self, tmp_path, capsys, fig1_dump):
        # before: routes --check said unreachable, run exited 0 counting what sw1 absorbed as delivered
        i = next(i for i, line in enumerate(fig1_dump) if line.startswith("0x000f"))
        fig1_dump[i] = "0x000f 000" + fig1_dump[i][10:]
        path = write(tmp_path, fig1_dump)
        self.both(capsys, path, f"{path}:{i + 1}:1",
                  "LID 15 (bermudez2006_fig1.h15 port 1) is sent to port 0 of bermudez2006_fig1.sw1; port 0 is the "
                  "switch itself, only its own LID 1 may go there")

    def test_a_header_with_an_unknown_guid(self, tmp_path, capsys, fig1_dump):
        # before: matched by its LID instead
        guid = fig1_dump[0].split("guid 0x")[1][:16]
        fig1_dump[0] = fig1_dump[0].replace(guid, "00000000deadbeef")
        path = write(tmp_path, fig1_dump)
        self.both(capsys, path, f"{path}:1:42", "switch guid 0x00000000deadbeef ('sw1') is not in the fabric "
                                               "(switches are matched by GUID); LID 1 is bermudez2006_fig1.sw1")

    def test_an_entry_for_lid_0(self, tmp_path, capsys, fig1_dump):
        path = write(tmp_path, fig1_dump[:1] + ["  0x0000 001 # zero"] + fig1_dump[1:])
        self.both(capsys, path, f"{path}:2:3", "LID 0 is reserved; a table has no entry for it")

    @pytest.mark.parametrize("entry, where, message", [
        ("0xc000 001", "3:1", "LID 0xc000 is not a unicast LID (1..0xBFFF); multicast LIDs belong in a multicast dump"),
        ("0x0002 255", "3:8", "port 255 is not a valid port number (0..254)"),
        ("0x0002 99999999999999999999999", "3:1", "number far too large"),
        ("0x0002 001", "4:1", "LID 2 appears twice in the table of switch guid 0x0002c936db76eb9d (first at line 3)"),
    ])
    def test_bad_entries(self, tmp_path, capsys, fig1_dump, entry, where, message):
        path = write(tmp_path, fig1_dump[:2] + [entry] + fig1_dump[2:])
        self.both(capsys, path, f"{path}:{where}", message)

    def test_a_header_lid_that_is_not_the_switchs(self, tmp_path, capsys, fig1_dump):
        fig1_dump[0] = fig1_dump[0].replace("switch Lid 1 ", "switch Lid 2 ")
        path = write(tmp_path, fig1_dump)
        self.both(capsys, path, f"{path}:1:1", "has LID 2 in the dump but 1 in the fabric")

    def test_a_dump_that_is_not_utf8(self, tmp_path, capsys, fig1_dump):
        path = tmp_path / "bin.dump"
        path.write_bytes(("\n".join(fig1_dump) + "\n").encode().replace(b"'sw2'", b"'sw\xfe2'", 1))
        col = fig1_dump[2].index("'sw2'") + 4
        self.both(capsys, path, f"{path}:3:{col}", "not UTF-8 text (byte 0xfe); is this the right file?")

    def test_a_good_dump_still_runs(self, tmp_path, capsys, fig1_dump):
        path = write(tmp_path, fig1_dump)
        code, out, err = cli(capsys, "routes", FIG1, "--routing", "file", "--set", f"path={path}", "--check")
        assert code == 0 and "unreachable:          0" in out, err

    def test_no_routing_engine_may_send_other_lids_to_port_0(self):
        # the subnet manager refuses tables that would make a switch absorb another node's packets
        from ibfabric.components.routing.tables import ForwardingTables
        from ibfabric.plugins.routing import updn

        sim = ibfabric.Simulation(FIG1)
        t = updn.compute(sim.tables.fabric, {})
        lft = t.expanded().copy()
        lft[0, 15] = 0
        with pytest.raises(ibfabric.PluginError, match="sends LID 15 .* to port 0 of bermudez2006_fig1.sw1"):
            sim.module("sm").install(ForwardingTables(t.fabric, lft, engine="bad"))


# ------------------------------------------------------------------ scale and generated topologies

class TestTopoShowScale:
    def test_diameter_agrees_with_the_hop_matrix(self):
        from ibfabric.topologies import generators as gen

        for g in (gen.irregular(40, seed=3), gen.fat_tree(3, 3), gen.torus((5, 7)), gen.hypercube(4), gen.mesh((1, 1))):
            hops = g.switch_hops()
            assert g.switch_diameter() == (True, int(hops.max()), True)
        apart = FabricGraph([NodeSpec("s1", True, 2), NodeSpec("s2", True, 2)], [])
        assert apart.switch_diameter() == (False, None, True)

    def test_large_fabrics_get_a_bound_without_a_switch_matrix(self, monkeypatch):
        from ibfabric.topologies import generators as gen

        monkeypatch.setattr(FabricGraph, "switch_hops", lambda self: pytest.fail("S x S matrix built"))
        g = gen.torus((150, 150), hosts_per_switch=0)  # 22,500 switches: 20 GB as a hop matrix of int64
        assert g.switch_diameter() == (True, 150, False)

    def test_topo_show_does_not_build_the_hop_matrix(self, monkeypatch, capsys):
        monkeypatch.setattr(FabricGraph, "switch_hops", lambda self: pytest.fail("S x S matrix built"))
        code, out, _ = cli(capsys, "topo", "show", FIG1)
        assert code == 0 and re.search(r"diameter \(switch hops\) +│ +4 ", out)


class TestGeneratedRouting:
    def test_minhop_deadlocks_even_on_fat_trees_updn_does_not(self):
        from ibfabric.components.routing.routecheck import check_routes
        from ibfabric.plugins.routing import minhop, updn
        from ibfabric.topologies import generators as gen

        g = gen.fat_tree(2, 3).with_lids()
        assert not check_routes(minhop.compute(g, {})).ok
        for g in (g, gen.irregular(12, seed=1).with_lids(), gen.torus((3, 3)).with_lids(), gen.hypercube(3).with_lids()):
            assert check_routes(updn.compute(g, {}, np.random.default_rng(1))).ok

    @pytest.mark.parametrize("argv", [["fattree", "-k", "2", "-n", "3"], ["torus", "--dims", "3x3"],
                                      ["irregular", "--switches", "6", "--links-per-switch", "3"], ["hypercube", "--dim", "2"]])
    def test_generate_writes_updn(self, capsys, argv):
        code, out, _ = cli(capsys, "topo", "generate", *argv)
        assert code == 0 and 'routing = "updn";' in out and "minhop" not in out

    def test_generate_routing_option(self, capsys):
        code, out, _ = cli(capsys, "topo", "generate", "mesh", "--dims", "2x2", "--routing", "dr")
        assert code == 0 and 'routing = "dr";' in out


class TestHelpers:
    def test_doctests(self):
        import doctest

        res = doctest.testmod(validate)
        assert res.failed == 0 and res.attempted > 0

    def test_parse_guid(self):
        assert validate.parse_guid("") == 0
        assert validate.parse_guid(" 0x0002C903000E0B72 ") == 0x2C903000E0B72
        for bad in ("xyz", "-5", "0", "0x", "1" * 17, "+5", "5 5"):
            with pytest.raises(ValueError, match="non-zero 64-bit hexadecimal"):
                validate.parse_guid(bad)

    def test_read_text_points_at_the_bad_byte(self, tmp_path):
        path = tmp_path / "x"
        path.write_bytes("é\nab\xff".encode("latin-1").replace(b"\xe9", "é".encode()))
        with pytest.raises(TopologyError, match=r"x:2:3: not UTF-8 text \(byte 0xff\)"):
            validate.read_text(path)
