"""The Kim et al. 2007 networks: the generator and the shipped kim2007_15.ned / kim2007_30.ned."""

from pathlib import Path

import networkx as nx
import pytest

from ibfabric.components.routing.routecheck import check_routes
from ibfabric.plugins.routing import updn
from ibfabric.topologies import load_fabric, load_network
from ibfabric.topologies.generators import kim2007, to_ned

TOPOLOGIES = Path(__file__).parents[2] / "topologies"

#: file -> (switches, independent cycles, seed), as the files' headers say they were generated
SHIPPED = {"kim2007_15.ned": (15, 9, 2007), "kim2007_30.ned": (30, 17, 2007)}


def short(name: str) -> str:
    return name.rsplit(".", 1)[-1]  # module paths: 'kim2007_15.sw1'


def switch_graph(f) -> nx.MultiGraph:
    g = nx.MultiGraph()
    g.add_nodes_from(f.switches.tolist())
    g.add_edges_from((ln.a, ln.b) for ln in f.links if f.is_switch[ln.a] and f.is_switch[ln.b])
    return g


def link_key(f) -> list[tuple]:
    return sorted((short(f.nodes[ln.a].name), ln.port_a, short(f.nodes[ln.b].name), ln.port_b, ln.width, ln.speed) for ln in f.links)


@pytest.fixture(scope="module", params=sorted(SHIPPED))
def shipped(request):
    return request.param, load_fabric(str(TOPOLOGIES / request.param))


class TestShippedFiles:
    def test_switches_ports_cycles_hosts(self, shipped):
        name, f = shipped
        switches, cycles, _ = SHIPPED[name]
        g = switch_graph(f)
        assert len(f.switches) == switches
        assert all(f.nodes[int(s)].num_ports == 5 for s in f.switches)
        assert g.number_of_edges() - g.number_of_nodes() + 1 == cycles  # |E| - |V| + 1
        assert nx.is_connected(g)
        assert nx.number_of_edges(nx.Graph(g)) == g.number_of_edges()  # at most one link between two switches
        # every port is used: switch links and one HCA per remaining port, at least one per switch
        assert len(f.cas) == switches * 5 - 2 * g.number_of_edges()
        assert (f.peer_node[f.switches, 1:6] >= 0).all()
        hosts_per_switch = (~f.is_switch[f.peer_node[f.switches, 1:6]]).sum(axis=1)
        assert hosts_per_switch.min() >= 1 and hosts_per_switch.sum() == len(f.cas)

    def test_one_host_per_switch_variant(self):
        full = load_fabric(str(TOPOLOGIES / "kim2007_15.ned"))
        one = load_fabric(str(TOPOLOGIES / "kim2007_15h1.ned"))
        assert {short(one.nodes[int(c)].name) for c in one.cas} == {f"h{s}_0" for s in range(15)}
        switch_links = [k for k in link_key(full) if k[0].startswith("sw") and k[2].startswith("sw")]
        assert [k for k in link_key(one) if k[0].startswith("sw") and k[2].startswith("sw")] == switch_links
        assert set(link_key(one)) < set(link_key(full))

    def test_15_switch_numbers_of_the_paper(self):
        f = load_fabric(str(TOPOLOGIES / "kim2007_15.ned"))
        g = switch_graph(f)
        assert (len(f.switches), g.number_of_edges(), len(f.cas)) == (15, 23, 29)

    def test_regenerating_gives_the_shipped_links(self, shipped):
        name, f = shipped
        switches, cycles, seed = SHIPPED[name]
        assert link_key(f) == link_key(kim2007(switches, cycles, ports=5, seed=seed))

    def test_table1_parameters(self, shipped):
        name, _ = shipped
        net = load_network(str(TOPOLOGIES / name))
        net_name = name[:-4]
        sw, hca = net.module(f"{net_name}.sw0").params, net.module(f"{net_name}.h0_0").params
        # 16 VLs = 15 data VLs + VL15; 4200 B input and output VL buffers; MTU 1024 B; 1x SDR (2.5 Gbps) links
        assert sw["numVLs"].value == hca["numVLs"].value == 15
        assert sw["vlBufferSize"].value == hca["vlBufferSize"].value == 4200
        assert sw["outputBufferSize"].value == 4200
        assert hca["mtu"].value == 1024 and hca["headerSize"].value == 26
        assert {(ln.width, ln.speed) for ln in load_fabric(str(TOPOLOGIES / name)).links} == {("1x", "SDR")}

    def test_header_documents_the_generation(self, shipped):
        name, _ = shipped
        switches, cycles, seed = SHIPPED[name]
        head = (TOPOLOGIES / name).read_text().split("\nnetwork ")[0]
        assert "GENERATED" in head and f"kim2007({switches}, {cycles}, ports=5, seed={seed})" in head
        assert f"{cycles} independent cycles" in " ".join(head.replace("//", " ").split())

    def test_routes_deadlock_free_with_updn(self, shipped):
        _, f = shipped
        r = check_routes(updn.compute(f.with_lids(), {}))
        assert r.ok, r.summary(f)


class TestKim2007Generator:
    @pytest.mark.parametrize("switches, cycles, ports, seed", [(15, 9, 5, 0), (15, 0, 5, 3), (30, 17, 5, 1), (8, 5, 4, 2), (15, 16, 5, 4), (1, 0, 5, 0)])
    def test_as_requested(self, switches, cycles, ports, seed):
        f = kim2007(switches, cycles, ports=ports, seed=seed)
        g = switch_graph(f)
        assert len(f.switches) == switches and g.number_of_edges() == switches - 1 + cycles
        assert nx.is_connected(g) and nx.number_of_edges(nx.Graph(g)) == g.number_of_edges()
        assert max(d for _, d in g.degree()) <= ports - 1 if switches > 1 else True
        assert len(f.cas) == switches * ports - 2 * g.number_of_edges()
        assert (f.peer_node[f.switches, 1 : ports + 1] >= 0).all()

    def test_deterministic_for_a_seed(self):
        assert to_ned(kim2007(15, 9, seed=5)) == to_ned(kim2007(15, 9, seed=5))
        assert to_ned(kim2007(15, 9, seed=5)) != to_ned(kim2007(15, 9, seed=6))

    @pytest.mark.parametrize(
        "args, message",
        [
            ((15, 17), r"'cycles' must be between 0 and 16 for 15 switches of 5 ports \(got 17\)"),
            ((15, -1), r"'cycles' must be between 0"),
            ((0, 0), "'switches' must be at least 1"),
        ],
    )
    def test_impossible_requests(self, args, message):
        with pytest.raises(ValueError, match=message):
            kim2007(*args)


class TestToNedParameters:
    def test_parameters_section(self):
        text = to_ned(kim2007(2, 0, ports=3), name="two", parameters={"**.numVLs": "15", "**.mtu": "1024B"})
        assert text.startswith("network two\n{\n    parameters:\n        **.numVLs = 15;\n        **.mtu = 1024B;\n    submodules:\n")
