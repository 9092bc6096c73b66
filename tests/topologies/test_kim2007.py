"""The Kim et al. 2007 networks: the generators, the paper's kim2007_15.ned / kim2007_30.ned and the variants."""

from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibfabric.components.routing.routecheck import check_routes
from ibfabric.plugins.routing import multipath, updn
from ibfabric.plugins.routing.pathbits import find_cycles, multipath_table
from ibfabric.topologies import load_fabric, load_network
from ibfabric.topologies.generators import kim2007, kim2007_paper, kim2007_properties, to_ned

TOPOLOGIES = Path(__file__).parents[2] / "topologies"

#: variant file -> (switches, independent cycles, seed), as the files' headers say they were generated
SHIPPED = {"kim2007_15_29hosts.ned": (15, 9, 2007), "kim2007_30_58hosts.ned": (30, 17, 2007)}
#: the paper's networks: file -> (switches, independent cycles, seed of kim2007_paper)
PAPER = {"kim2007_15.ned": (15, 9, 2007), "kim2007_30.ned": (30, 17, 2007)}


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
        full = load_fabric(str(TOPOLOGIES / "kim2007_15_29hosts.ned"))
        one = load_fabric(str(TOPOLOGIES / "kim2007_15h1.ned"))
        assert {short(one.nodes[int(c)].name) for c in one.cas} == {f"h{s}_0" for s in range(15)}
        switch_links = [k for k in link_key(full) if k[0].startswith("sw") and k[2].startswith("sw")]
        assert [k for k in link_key(one) if k[0].startswith("sw") and k[2].startswith("sw")] == switch_links
        assert set(link_key(one)) < set(link_key(full))

    def test_15_switch_numbers(self):
        f = load_fabric(str(TOPOLOGIES / "kim2007_15_29hosts.ned"))
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


def gf2_rank(cycles, g) -> int:
    """Rank over GF(2) of the cycles' edge sets: the number of path bits that name something."""
    index = {frozenset(e): k for k, e in enumerate(g.edges())}
    basis = []
    for c in cycles:
        v = 0
        for x, y in zip(c, c[1:]):
            v ^= 1 << index[frozenset((x, y))]
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
    return len(basis)


def check_paper_properties(f, switches, cycles):
    """Everything Kim et al. 2007 state of their networks (§4, §5.1), measured without the generator's code."""
    g = nx.Graph(switch_graph(f))
    assert len(f.switches) == switches and len(f.cas) == switches
    assert all(f.nodes[int(s)].num_ports == 5 for s in f.switches)
    # one host per switch, at most four switch links (five ports)
    hosts = {int(s): 0 for s in f.switches}
    for ln in f.links:
        for a, b in ((ln.a, ln.b), (ln.b, ln.a)):
            if f.is_switch[a] and not f.is_switch[b]:
                hosts[a] += 1
    assert set(hosts.values()) == {1}
    assert max(d for _, d in g.degree()) <= 4
    assert nx.is_connected(g) and switch_graph(f).number_of_edges() == g.number_of_edges() == switches - 1 + cycles
    assert not nx.has_bridges(g)
    # Algorithm 2 from the multipath engine's default root: `cycles` independent cycles, all path bits kept
    found = find_cycles(g, root=min(g))
    assert len(found) == cycles and gf2_rank(found, g) == cycles
    on = {s: sum(s in c for c in found) for s in g}
    assert set(on.values()) == {1, 2}
    # §3.3's table size, 2^(cycles containing the switch) x switches: §5.1's "30 or 60" for 15 switches
    assert {switches * 2 ** k for k in on.values()} == {2 * switches, 4 * switches}
    return g, found, on


@pytest.fixture(scope="module", params=sorted(PAPER))
def paper(request):
    return request.param, load_fabric(str(TOPOLOGIES / request.param))


class TestPaperNetworks:
    def test_the_papers_stated_properties(self, paper):
        name, f = paper
        switches, cycles, _ = PAPER[name]
        check_paper_properties(f, switches, cycles)

    def test_15_switch_tables_of_section_5_1(self):
        f = load_fabric(str(TOPOLOGIES / "kim2007_15.ned"))
        g, found, on = check_paper_properties(f, 15, 9)
        assert sorted(15 * 2 ** k for k in on.values()) == [30] * 3 + [60] * 12
        # the tables the paper's algorithms build never need more entries per destination than the
        # switch's own cycles tell apart (§3.3: only the bits of those cycles are examined)
        for s in g:
            entries = multipath_table(g, s, found)
            per = {t: sum(e.destination == t for e in entries) for t in g if t != s}
            assert 1 <= min(per.values()) and max(per.values()) <= 2 ** on[s]

    def test_the_variants_do_not_have_them(self):
        for name, (switches, cycles, _) in SHIPPED.items():
            p = kim2007_properties(load_fabric(str(TOPOLOGIES / name)))
            assert p["bridges"] and p["independent"] < cycles and len(p["cycles"]) == cycles
            assert min(p["on_cycles"].values()) == 0 and max(p["on_cycles"].values()) > 2

    def test_regenerating_gives_the_shipped_links(self, paper):
        name, f = paper
        switches, cycles, seed = PAPER[name]
        assert link_key(f) == link_key(kim2007_paper(switches, cycles, seed=seed))

    def test_header_documents_the_generation(self, paper):
        name, _ = paper
        switches, cycles, seed = PAPER[name]
        head = (TOPOLOGIES / name).read_text().split("\nnetwork ")[0]
        assert "GENERATED" in head and f"kim2007_paper({switches}, {cycles}, seed={seed})" in head

    def test_table1_parameters(self, paper):
        name, f = paper
        net = load_network(str(TOPOLOGIES / name))
        sw, hca = net.module(f"{name[:-4]}.sw0").params, net.module(f"{name[:-4]}.h0_0").params
        assert sw["numVLs"].value == hca["numVLs"].value == 15
        assert sw["vlBufferSize"].value == 4200 and sw["outputBufferSize"].value == 4200
        assert hca["mtu"].value == 1024
        assert {(ln.width, ln.speed) for ln in f.links} == {("1x", "SDR")}

    def test_routes_deadlock_free_with_updn(self, paper):
        _, f = paper
        r = check_routes(updn.compute(f.with_lids(), {}))
        assert r.ok, r.summary(f)

    def test_the_multipath_engine_finds_all_cycles_and_keeps_six(self):
        # all 9 cycles are independent, but a DLID holds at most 6 path bits (LMC 7 with the enable bit)
        t = multipath.compute(load_fabric(str(TOPOLOGIES / "kim2007_15.ned")).with_lids(lmc=7), {})
        assert (t.info["cycles_found"], t.info["bits"], t.info["dropped_cycles"]) == (9, 6, 3)


class TestKim2007PaperGenerator:
    @settings(max_examples=25, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1), size=st.sampled_from([(15, 9), (30, 17), (12, 7), (20, 12)]))
    def test_every_seed_gives_the_properties(self, seed, size):
        switches, cycles = size
        check_paper_properties(kim2007_paper(switches, cycles, seed=seed), switches, cycles)

    def test_deterministic_for_a_seed(self):
        assert to_ned(kim2007_paper(15, 9, seed=5)) == to_ned(kim2007_paper(15, 9, seed=5))
        assert to_ned(kim2007_paper(15, 9, seed=5)) != to_ned(kim2007_paper(15, 9, seed=6))

    def test_draws_are_rejected_until_the_properties_hold(self):
        # a single draw seldom has them (in a diamond, both back edges can give the same triangle)
        failed = 0
        for seed in range(20):
            try:
                kim2007_paper(30, 17, seed=seed, tries=1)
            except ValueError as e:
                assert str(e) == (f"no fabric of 30 switches with 17 cycles, each switch on one or two of them, in 1"
                                  f" draws from seed {seed} (try another seed or more tries)")
                failed += 1
        assert failed >= 15

    @pytest.mark.parametrize(
        "args, message",
        [
            ((15, 12), r"no tree of triangles, squares and diamonds has 15 switches and 12 cycles"),
            ((15, 3), r"no tree of triangles, squares and diamonds has 15 switches and 3 cycles"),
            ((2, 0), r"'switches' must be at least 3"),
        ],
    )
    def test_impossible_requests(self, args, message):
        with pytest.raises(ValueError, match=message):
            kim2007_paper(*args)

    def test_properties_of_a_fabric_with_a_bridge(self):
        p = kim2007_properties(kim2007(4, 0, ports=3, seed=0))
        assert p["cycles"] == [] and p["independent"] == 0 and len(p["bridges"]) == 3
        assert set(p["on_cycles"].values()) == {0} and set(p["table_sizes"].values()) == {4}


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
