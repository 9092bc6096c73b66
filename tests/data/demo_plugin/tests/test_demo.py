"""The demo plugin's own tests: written against ibfabric's pytest fixtures only, as a plugin author's.

ibfabric's fixtures (``small_fabric``, ``fabric_chain``, ``make_simulation``,
``run_ibfabric``, ``table_walker``...) come from its ``pytest11`` entry point:
this directory has no conftest.py.  ``plugins=[ibfabric_demo]`` makes every
test work whether or not the package is installed (an installed plugin is
not loaded twice).
"""

import numpy as np
import pytest

import ibfabric_demo
from ibfabric import ConfigError
from ibfabric.testing import small_fabric_graph
from ibfabric_demo.routing import lowest_port_bfs
from ibfabric_demo.traffic import Neighbour

DEMO = [ibfabric_demo]


# ---------------------------------------------------------------- routing engine


def test_routes_deliver_every_pair_in_the_fewest_hops(small_fabric, table_walker):
    tables = lowest_port_bfs(small_fabric, {}, np.random.default_rng(0))
    report = table_walker.assert_delivers(tables)
    assert report.longer_than_minimum == 0


def test_a_chain_is_crossed_port_2_to_port_2(fabric_chain, table_walker):
    tables = lowest_port_bfs(fabric_chain, {}, np.random.default_rng(0))
    a, b = fabric_chain.index("chain.a"), fabric_chain.index("chain.b")
    path = table_walker.path(tables, fabric_chain.endpoint_of(a), fabric_chain.endpoint_of(b))
    assert [(fabric_chain.nodes[s].name, port) for s, port in path] == [
        ("chain.sw[0]", 2), ("chain.sw[1]", 2), ("chain.sw[2]", 2)]


def test_spread_gives_the_lids_of_a_destination_different_ports(table_walker):
    fabric = small_fabric_graph("fat-tree", lmc=1)
    tables = lowest_port_bfs(fabric, {"spread": "true"}, np.random.default_rng(0))
    table_walker.assert_delivers(tables)
    base = fabric.ep_lid[fabric.ep_lmc == 1]
    assert (tables.lft[:, base] != tables.lft[:, base + 1]).any()
    plain = lowest_port_bfs(fabric, {}, np.random.default_rng(0))
    assert (plain.lft[:, base] == plain.lft[:, base + 1]).all()


def test_an_unknown_routing_option_is_refused(fabric_star):
    with pytest.raises(ConfigError, match=r"no option 'root' \(valid: spread\)"):
        lowest_port_bfs(fabric_star, {"root": "1"}, np.random.default_rng(0))


def test_the_subnet_manager_runs_the_engine(run_ibfabric):
    s = run_ibfabric("chain", plugins=DEMO,
                     overrides={"**.routing": "demo-bfs", "**.traffic": "uniform", "**.load": "0.3"})
    assert s["routing"] == "demo-bfs"
    assert s["conservation_ok"] and s["packets_delivered"] > 0


# ---------------------------------------------------------------- VL arbiters

TWO_VLS = {"**.numVLs": "2", "**.sl": "0,1", "**.traffic": "uniform", "**.load": "0.95"}


def mean_latency_by_vl(summary):
    return [summary["by_sl"][str(sl)]["latency_ns"]["mean"] for sl in (0, 1)]


@pytest.mark.parametrize("table, faster", [("0:192,1:64", 0), ("0:64,1:192", 1)])
def test_the_lottery_favours_the_heavier_vl(run_ibfabric, table, faster):
    s = run_ibfabric("star", "200us", plugins=DEMO,
                     overrides={**TWO_VLS, "**.arbiter": "lottery", "**.vlArbLow": f'"{table}"'})
    latency = mean_latency_by_vl(s)
    assert latency[faster] < 0.7 * latency[1 - faster]  # equal weights: 0.8 to 1.5 over seeds 1-6
    assert s["conservation_ok"]


def test_the_lottery_is_reproducible_from_the_seed(run_ibfabric):
    over = {**TWO_VLS, "**.arbiter": "lottery"}
    a = run_ibfabric("star", "50us", plugins=DEMO, overrides=over, seed=3)
    b = run_ibfabric("star", "50us", plugins=DEMO, overrides=over, seed=3)
    c = run_ibfabric("star", "50us", plugins=DEMO, overrides=over, seed=4)
    assert a["latency_ns"] == b["latency_ns"] != c["latency_ns"]


def test_a_vl_without_weight_is_refused(make_simulation):
    with pytest.raises(ConfigError, match="VL 1 is operational but in neither VLArbitrationTable"):
        make_simulation("star", plugins=DEMO, overrides={**TWO_VLS, "**.arbiter": "lottery", "**.vlArbLow": '"0:64"'})


def test_strict_priority_serves_vl_0_first(run_ibfabric):
    s = run_ibfabric("star", "200us", plugins=DEMO, overrides={**TWO_VLS, "**.arbiter": "strict-priority"})
    latency = mean_latency_by_vl(s)
    assert latency[0] < latency[1] / 2


# ---------------------------------------------------------------- packet dropper


def test_random_early_drop_drops_about_p_per_switch(run_ibfabric):
    over = {"**.traffic": "uniform", "**.load": "0.5", "**.dropper": "random-early", "**.dropperOptions": '"p=0.2"'}
    s = run_ibfabric("chain", "200us", plugins=DEMO, overrides=over)
    arrived = s["packets_delivered"] + s["packets_dropped"]
    assert s["drops_by_reason"] == {"dropper": s["packets_dropped"]}
    assert abs(s["packets_dropped"] / arrived - (1 - 0.8**3)) < 0.1  # a chain of 3 switches, each drops 20 %
    assert s["conservation_ok"]


@pytest.mark.parametrize("options, message", [
    ("p=2", r"'p' must be in 0\.\.1 \(got 2\.0\)"),
    ("p=often", "'p' must be a number"),
    ("rate=1", r"no option 'rate' \(valid: p\)"),
])
def test_bad_dropper_options_are_one_line_errors(make_simulation, options, message):
    with pytest.raises(ConfigError, match=message):
        make_simulation("star", plugins=DEMO,
                        overrides={"**.dropper": "random-early", "**.dropperOptions": f'"{options}"'})


# ---------------------------------------------------------------- path selector

ADAPTIVE = {"**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1", "**.adaptive": "1",
            "**.escapeBufferSize": "2048B", "**.mtu": "256B", "**.traffic": "uniform", "**.load": "0.5"}


def test_the_credit_lottery_takes_escape_and_adaptive_options(make_simulation):
    sim = make_simulation("fat-tree", plugins=DEMO, overrides={**ADAPTIVE, "**.pathSelector": '"credit-lottery"'})
    s = sim.run("20us")
    assert s["conservation_ok"] and s["packets_dropped"] == 0 and s["packets_delivered"] > 500
    taken = {}
    for switch in sim.ib_nodes:
        for index, n in getattr(getattr(switch, "selector", None), "taken", {}).items():
            taken[index] = taken.get(index, 0) + n
    assert taken.get(0, 0) > 100 and taken.get(1, 0) > 100  # the escape option and the adaptive one


# ---------------------------------------------------------------- replication engine


@pytest.mark.parametrize("unicast", [{}, {"**.traffic": "uniform", "**.load": "0.3"}])
def test_from_input_gives_every_member_each_packet_once(make_simulation, unicast):
    sim = make_simulation("star", plugins=DEMO, overrides={
        "**.multicastGroups": '"g: 0 1 2 3 senders=0"', "**.replication": "from-input", **unicast})
    sender = sim.hosts[0]
    sim.call_at(0.0, lambda: [sender.send_multicast("g", 256) for _ in range(20)])
    s = sim.run("200us")
    g = s["multicast"]["groups"]["g"]
    assert g["packets"] == g["complete"] == 20 and g["duplicates"] == 0
    assert g["member_deliveries"] == 20 * 3
    assert s["conservation_ok"] and s["packets_in_flight"] == 0


# ---------------------------------------------------------------- traffic pattern


def test_neighbour_sends_distance_places_on():
    rng = np.random.default_rng(0)
    assert Neighbour(4, {"distance": "3"}, rng).destinations(1, rng, 3).tolist() == [0, 0, 0]
    with pytest.raises(ConfigError, match="sends every host to itself"):
        Neighbour(4, {"distance": "8"}, rng)
    with pytest.raises(ConfigError, match=r"no option 'hotspot' \(valid: distance\)"):
        Neighbour(4, {"hotspot": "1"}, rng)


def test_neighbour_traffic_runs(run_ibfabric):
    s = run_ibfabric("star", "50us", plugins=DEMO, overrides={"**.traffic": "neighbour", "**.load": "0.5"})
    assert s["conservation_ok"] and s["packets_delivered"] > 0


# ---------------------------------------------------------------- module type

COUNTED = """
import demo.*;
network counted
{
    submodules:
        sw: Switch { numPorts = 4; }
        h[4]: HCA;
        counter: DeliveryCounter { slowerThan = 2us; }
    connections:
        for i=0..3 { h[i].port[1] <--> Link <--> sw.port[i+1]; }
}
"""


def test_the_counter_counts_every_delivery(make_simulation):
    sim = make_simulation(COUNTED, plugins=DEMO, overrides={"**.traffic": "uniform", "**.load": "0.9"})
    s = sim.run("100us")
    counter = sim.module("counted.counter")
    assert counter.final == counter.count == s["packets_delivered"] > 0
    assert 0 < counter.slow < counter.count


def test_a_negative_bound_is_refused(make_simulation):
    with pytest.raises(ConfigError, match="'slowerThan' must be >= 0"):
        make_simulation(COUNTED, plugins=DEMO, overrides={"**.counter.slowerThan": "-1us"})


# ---------------------------------------------------------------- workload


def test_the_incast_runs_to_completion(make_simulation):
    from ibfabric.components.hca.workload import Workload
    from ibfabric.plugins.workloads import build_schedule
    from ibfabric_demo.workload import incast

    sim = make_simulation("star", plugins=DEMO, overrides={"**.traffic": '""'})
    schedule = build_schedule("incast", incast, 4, 10_000, reps=2, options={"root": "2"})
    workload = Workload(sim, schedule, stop=True)
    summary = sim.run("10ms")
    assert workload.complete and summary["workload"]["messages"] == 6
    assert summary["workload"]["bytes_delivered"] == 60_000


def test_the_root_must_be_a_rank():
    from ibfabric.plugins.workloads import build_schedule
    from ibfabric_demo.workload import incast

    with pytest.raises(ConfigError, match="root 9 is not a rank"):
        build_schedule("incast", incast, 4, 100, options={"root": "9"})
