"""The ibnetdiscover importer, on real dumps and on generated ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibfabric.components.fabric import FabricGraph
from ibfabric.errors import TopologyError
from ibfabric.ned_like import write_ned, elaborate
from ibfabric.topologies import detect_format, load_network
from ibfabric.topologies.ibnetdiscover import ibnetdiscover_to_ned, parse_ibnetdiscover

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
        ib5 = g.index("cluster2014_8sw_144hca.MF0_ib5_SX6036_U1")
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
