"""The ibnetdiscover importer, on real dumps and on generated ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibfabric.cli import main
from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.errors import ConfigError, TopologyError
from ibfabric.ned_like import write_ned, elaborate
from ibfabric.topologies import detect_format, load_fabric, load_network
from ibfabric.topologies.ibnetdiscover import (IBNetNode, ibnetdiscover_to_ned, node_names, parse_ibnetdiscover,
                                               readable)

DATA = Path(__file__).resolve().parents[1] / "data" / "ibnetdiscover"  # copies of ../shared/data (see SOURCES.md)
CLUSTER = DATA / "cluster2014_8sw_144hca.ibnetdiscover"
TWO = DATA / "two_node.ibnetdiscover"


class TestRealDumps:
    def test_two_node_fabric(self):
        net = load_network(TWO)
        g = FabricGraph.from_network(net)
        assert len(g.switches) == 1 and len(g.cas) == 2
        sw = g.index("two_node.ibswitch")
        node1 = g.index("two_node.node1")
        assert g.lid_of(sw) == 1 and g.lid_of(node1) == 8
        assert g.lid_of(g.index("two_node.node2")) == 3
        assert g.peer_node[sw, 5] == node1 and g.peer_port[sw, 5] == 1
        assert {(ln.width, ln.speed) for ln in g.links} == {("4x", "FDR")}
        assert g.nodes[sw].guid == 0x0008F10500200134
        assert g.nodes[node1].desc == "node1"

    def test_cluster_dump_keeps_everything(self):
        net = load_network(CLUSTER)
        g = FabricGraph.from_network(net)
        assert len(g.switches) == 8 and len(g.cas) == 144 and len(g.links) == 192
        assert g.lids_complete
        speeds = sorted((ln.width + ln.speed) for ln in g.links)
        assert speeds.count("4xFDR10") == 47 and speeds.count("4xQDR") == 145
        ib5 = g.index("cluster2014_8sw_144hca.ib5_SX6036")  # "MF0;ib5:SX6036/U1": host name and model
        assert g.nodes[ib5].desc == "MF0;ib5:SX6036/U1"
        assert g.lid_of(ib5) == 128
        stage114 = g.index("cluster2014_8sw_144hca.stage114_mlx4_0")
        assert g.peer_node[ib5, 1] == stage114 and g.lid_of(stage114) == 105
        # a dual-port adapter cabled on its port 2 keeps that port and its LID
        booster2 = g.index("cluster2014_8sw_144hca.booster2_mlx4_0")
        assert g.ports(booster2) == [2] and g.lid_of(booster2, 2) == 147

    def test_detected_by_content(self):
        assert detect_format(CLUSTER.read_text()) == "ibnetdiscover"
        assert detect_format("network n { }") == "ned"

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.one_of(
        st.sampled_from(['Switch 4 "S-1"  # "sw"', ' Ca 2 "H-1" # "h" ', 'Rt 1 "R"', "Switchx", "Ca", "  Rt 3",
                         "# Topology file: generated on x by ibnetdiscover", "# Topology file", "network n {}",
                         "// Switch 4 \"S\"", "\tCa\t2\t\"H\""]),
        st.text(alphabet='SwitchCaRt #":0123456789 \t', max_size=30)), max_size=8))
    def test_quick_look_never_misses_a_dump(self, lines):
        # detect_format skips the dump reader when no line starts as a node line or the banner
        from ibfabric.topologies import _may_be_a_dump
        from ibfabric.topologies.ibnetdiscover import looks_like_ibnetdiscover

        text = "\n".join(lines)
        assert _may_be_a_dump(text) or not looks_like_ibnetdiscover(text)

    def test_converted_network_round_trips(self):
        net = load_network(CLUSTER)
        again = elaborate(write_ned(net))
        assert again.canonical() == net.canonical()

    def test_simulates(self):
        from ibfabric.simulation import Simulation

        sim = Simulation(TWO, overrides={"**.traffic": "uniform", "**.load": "0.5"})
        s = sim.run("20us")
        assert s["packets_delivered"] > 10 and s["conservation_ok"]
        # the dump's LIDs are kept by the subnet manager
        assert sim.module("node1").lid == 8


CONNECTX = "MT25408 ConnectX Mellanox Technologies"


def names_of(fabric):
    """{short name: node} of a FabricGraph, without the network's prefix."""
    return {n.name.rsplit(".", 1)[-1]: n for n in fabric.nodes}


class TestNames:
    @pytest.mark.parametrize("desc, name", [
        (CONNECTX, "ConnectX"),                         # the vendor's default description of an adapter
        ("MF0;ib5:SX6036/U1", "ib5_SX6036"),            # a managed switch: host name and model
        ("node042 HCA-1", "node042_HCA_1"),             # host name and device
        ("node042.cluster.example.org mlx5_0", "node042_mlx5_0"),
        ("stage114 mlx4_0", "stage114_mlx4_0"),
        ("Infiniscale-IV Mellanox Technologies", "Infiniscale_IV"),
        ("SwitchX -  Mellanox Technologies", "SwitchX"),
        ("Mellanox Technologies", "Mellanox_Technologies"),  # nothing but boilerplate: kept whole
        ("42 mlx4_0", "n_42_mlx4_0"),                   # identifiers start with a letter
        ("for", "for_node"),                            # never a NED keyword (the connections would not parse)
        ("sm", "sm_node"),                              # the subnet manager's name
        ("", ""),
    ])
    def test_readable_part_of_the_description(self, desc, name):
        assert readable(desc) == name

    def test_every_duplicate_gets_a_short_guid_suffix_the_first_too(self):
        text = TWO.read_text().replace('# "node1"', f'# "{CONNECTX}"').replace('# "node2"', f'# "{CONNECTX}"')
        fabric = load_fabric(text)
        names = names_of(fabric)
        assert set(names) == {"ibswitch", "ConnectX_1dd0", "ConnectX_afc0"}
        # the full description and the GUID stay, as parameters
        assert names["ConnectX_1dd0"].desc == CONNECTX and names["ConnectX_1dd0"].guid == 0x0002C90300001DD0
        ned = ibnetdiscover_to_ned(text, "two.topo")
        assert f'guid = "0002c90300001dd0"; nodeDesc = "{CONNECTX}";' in ned

    def test_suffix_grows_until_the_group_is_told_apart(self):
        def ca(guid, desc=CONNECTX):
            return IBNetNode(f"H-{guid}", "Ca", 1, desc, guid)

        # trailing 0000 groups that all share say nothing; then 4 digits tell 49cd from 49ce
        nodes = [ca("003048c749cd0000"), ca("003048c749ce0000"), ca("0002c90300001dd0", "ib1")]
        assert list(node_names(nodes).values()) == ["ConnectX_49cd", "ConnectX_49ce", "ib1"]
        # the same last 4 digits: 6
        nodes = [ca("00000000001a1dd0"), ca("00000000001b1dd0")]
        assert list(node_names(nodes).values()) == ["ConnectX_1a1dd0", "ConnectX_1b1dd0"]
        # a suffixed name never takes another node's name
        nodes = [ca("0000000000001dd0"), ca("000000000000afc0"), ca("0000000000000001", "ConnectX_1dd0")]
        names = list(node_names(nodes).values())
        assert len(set(names)) == 3 and names[2] == "ConnectX_1dd0" and names[0] != "ConnectX_1dd0"

    def test_by_guid_and_by_lid(self):
        guid = names_of(load_fabric(TWO, names="guid"))
        assert set(guid) == {"sw_0008f10500200134", "ca_0002c90300001dd0", "ca_001e0bffff4cafc0"}
        lid = names_of(load_fabric(TWO, names="lid"))
        assert set(lid) == {"sw_lid1", "ca_lid8", "ca_lid3"}
        assert lid["ca_lid8"].desc == "node1" and lid["ca_lid8"].guid == 0x0002C90300001DD0
        # a node the dump gives no LID is named by its GUID
        nolid = TWO.read_text().replace("# lid 3 lmc 0", "# lmc 0")
        assert "ca_001e0bffff4cafc0" in names_of(load_fabric(nolid, names="lid"))

    def test_cluster_names_are_unique_identifiers_in_every_naming(self):
        for naming in ("desc", "guid", "lid"):
            names = names_of(load_fabric(CLUSTER, names=naming))
            assert len(names) == 152 and all(n.isidentifier() for n in names)

    def test_bad_naming_and_naming_a_ned_file(self):
        with pytest.raises(ConfigError, match=r"'names' must be one of desc, guid, lid \(got 'port'\)"):
            load_network(TWO, names="port")
        with pytest.raises(ConfigError, match="applies to ibnetdiscover dumps"):
            load_network("irregular16", names="lid")
        from ibfabric.simulation import Simulation

        with pytest.raises(ConfigError, match="applies to ibnetdiscover dumps, not to an elaborated network"):
            Simulation(load_network(TWO), names="lid")
        assert {m.name for m in Simulation(TWO, names="guid").network.simple_modules()} >= {
            "sw_0008f10500200134", "ca_0002c90300001dd0"}

    def test_command_line(self, tmp_path, capsys):
        out = tmp_path / "two.ned"
        assert main(["topo", "convert", str(TWO), "-o", str(out), "--names", "lid"]) == 0
        net = load_network(out)
        assert {m.name for m in net.simple_modules()} == {"sw_lid1", "ca_lid8", "ca_lid3", "sm"}
        assert main(["topo", "show", str(TWO), "--names", "guid"]) == 0
        assert "sw_0008f10500200134" in capsys.readouterr().out


class TestErrors:
    def test_garbage_line_gives_file_and_line(self):
        text = TWO.read_text().replace("[5]\t", "[5x]\t", 1)
        with pytest.raises(TopologyError, match=r"^two\.topo:12:1: cannot read this line"):
            parse_ibnetdiscover(text, "two.topo")

    def test_port_beyond_the_node(self):
        text = TWO.read_text().replace("[5]\t", "[40]\t", 1)
        with pytest.raises(TopologyError, match=r"^two\.topo:12:2: .* has no port 40 \(it has 36\)"):
            parse_ibnetdiscover(text, "two.topo")

    def test_inconsistent_link_speed(self):
        text = TWO.read_text().replace('lid 8 4xFDR', 'lid 8 4xQDR', 1)
        with pytest.raises(TopologyError, match="is 4xFDR here but 4xQDR|is 4xQDR here but 4xFDR"):
            parse_ibnetdiscover(text, "two.topo")

    def test_link_to_undescribed_node(self):
        text = "\n".join(TWO.read_text().splitlines()[:13])  # the switch section only
        with pytest.raises(TopologyError, match="never describes"):
            parse_ibnetdiscover(text, "two.topo")


@st.composite
def dumps(draw):
    """A random fabric of switches and CAs written in ibnetdiscover's format."""
    nsw = draw(st.integers(1, 4))
    nca = draw(st.integers(1, 6))
    ports = {f"S-{i + 1:016x}": 8 for i in range(nsw)}  # GUIDs are non-zero
    ports.update({f"H-{0x100 + i:016x}": 2 for i in range(nca)})
    free = {n: list(range(1, p + 1)) for n, p in ports.items()}
    links = []
    names = list(ports)
    for ca in names[nsw:]:
        sw = names[draw(st.integers(0, nsw - 1))]
        if not free[sw]:
            continue
        links.append((ca, free[ca].pop(0), sw, free[sw].pop(0), draw(st.sampled_from(["4xQDR", "1xSDR", "4xEDR"]))))
    for _ in range(draw(st.integers(0, 4))):
        a, b = draw(st.sampled_from(names[:nsw])), draw(st.sampled_from(names[:nsw]))
        if a != b and free[a] and free[b]:
            links.append((a, free[a].pop(0), b, free[b].pop(0), "4xFDR"))
    lids = {n: i + 1 for i, n in enumerate(names)}
    lines = []
    for n in names:
        kind = "Switch" if n.startswith("S") else "Ca"
        desc = f'node {n[-3:]}'
        extra = f" enhanced port 0 lid {lids[n]} lmc 0" if kind == "Switch" else ""
        lines += [f"{kind.lower()}guid=0x{n[2:]}", f'{kind}\t{ports[n]} "{n}"\t\t# "{desc}"{extra}']
        for a, pa, b, pb, sp in links:
            for x, px, y, py in ((a, pa, b, pb), (b, pb, a, pa)):
                if x == n:
                    if kind == "Switch":
                        lines.append(f'[{px}]\t"{y}"[{py}]\t\t# "node {y[-3:]}" lid {lids[y]} {sp}')
                    else:
                        lines.append(f'[{px}](abc)\t"{y}"[{py}]\t\t# lid {lids[x]} lmc 0 "node {y[-3:]}" lid {lids[y]} {sp}')
        lines.append("")
    return "\n".join(lines), len(names), len(links)


class TestGeneratedDumps:
    @given(dumps())
    @settings(max_examples=40, deadline=None)
    def test_every_node_and_link_survives(self, dump):
        text, n_nodes, n_links = dump
        net = elaborate(ibnetdiscover_to_ned(text, "gen.topo"))
        g = FabricGraph.from_network(net)
        assert len(g.nodes) == n_nodes
        assert len(g.links) == n_links
        assert elaborate(write_ned(net)).canonical() == net.canonical()


class TestLmcOnADump:
    """fa (and every engine that needs LMC > 0) on a real dump, whose LIDs its subnet manager gave
    with LMC 0: the subnet manager's lmc, or ``routes --lmc``, moves the LIDs that leave no room."""

    MOVED = "LMC 1 gives every CA port 2 aligned LIDs: the LIDs of 76 of 145 CA ports were reassigned ("

    def test_fa_needs_more_lids_than_the_dump_has(self, capsys):
        assert main(["routes", str(CLUSTER), "--routing", "fa", "--check"]) == 2
        assert "need LMC >= 1 (set the subnet manager's 'lmc')" in capsys.readouterr().err

    def test_routes_lmc_moves_the_lids(self, capsys):
        assert main(["routes", str(CLUSTER), "--routing", "fa", "--lmc", "1", "--check"]) == 0
        out, err = capsys.readouterr()
        assert err.startswith(f"ibfabric: warning: --lmc 1: {self.MOVED}cluster2014_8sw_144hca.stage1_mlx4_0 port 1:"
                              " 57 -> 6, ") and len(err.splitlines()) == 1
        assert "unreachable:          0" in out and "acyclic (deadlock-free)" in out
        assert "adaptive options:     all minimal" in out

    def test_run_with_the_subnet_managers_lmc(self, capsys):
        argv = ["run", str(CLUSTER), "--routing", "fa", "--set", "**.sm.lmc=1", "--time", "12us", "--json"]
        assert main(argv) == 0
        out, err = capsys.readouterr()
        summary = json.loads(out)
        assert summary["routing"] == "fa" and summary["packets_delivered"] > 1000
        assert f"ibfabric: warning: cluster2014_8sw_144hca.sm: {self.MOVED}" in err
        assert any(w.startswith(f"cluster2014_8sw_144hca.sm: {self.MOVED}") for w in summary["warnings"])

    def test_the_simulation_and_routes_give_the_same_lids(self):
        import ibfabric

        sim = ibfabric.load(CLUSTER, overrides={"**.sm.lmc": "1", "**.routing": "fa"})
        dump = load_fabric(CLUSTER)
        fabric, moved = dump.with_lmc(1)
        lids = {(fabric.nodes[n].name, int(p)): int(lid) for n, p, lid in zip(fabric.ep_node, fabric.ep_port, fabric.ep_lid)}
        g = sim.tables.fabric
        assert {(g.nodes[n].name, int(p)): int(lid) for n, p, lid in zip(g.ep_node, g.ep_port, g.ep_lid)} == lids
        assert len(moved) == 76 and int((fabric.ep_lid == dump.ep_lid).sum()) == len(fabric.ep_lid) - 76
        for h in sim.hosts:  # the nodes hold the LIDs the SM gave
            e = g.endpoint_of(sim.ib_nodes.index(h))
            assert (h.lid, h.lmc) == (int(g.ep_lid[e]), 1)

    def test_every_nodes_lmc_collides_and_says_what_to_set(self, capsys):
        assert main(["run", str(CLUSTER), "--routing", "fa", "--set", "**.lmc=1", "--time", "12us"]) == 2
        err = capsys.readouterr().err
        assert "LIDs must be unique (to give ports more LIDs, leave the nodes' 'lmc' and set the subnet manager's" in err
