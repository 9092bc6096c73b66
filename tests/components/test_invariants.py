"""Every data-path invariant, checked at every event on varied scenarios.

``check=True`` asserts, at every transmission, the credit invariant of the
link and VL it used, that a link starts a packet only once the previous one
has left it, and after every decision of any port that no sleeping
port could send a packet right now (no missed wake-up).  These scenarios mix
multiple VLs and SLs, segmentation, output buffers, speedup, small buffers
and every traffic pattern.
"""

from __future__ import annotations

import pytest

from ibfabric.simulation import Simulation
from ibfabric.topologies import shipped

SCENARIOS = {
    "uniform-saturated": {"**.traffic": "uniform", "**.load": "0.5"},
    "four-sls-two-vls": {"**.traffic": "uniform", "**.load": "0.2", "**.numVLs": "2", "**.sl": '"0..3"'},
    "hot-spot-output-buffers": {"**.traffic": "hot-spot", "**.load": "0.4", "**.numVLs": "4", "**.sl": '"0..7"',
                                "**.outputBufferSize": "4KiB", "**.crossbarSpeedup": "2"},
    "bit-reversal-big-packets": {"**.traffic": "bit-reversal", "**.load": "0.8", "**.outputBufferSize": "2KiB",
                                 "**.mtu": "1024B", "**.packetSize": "1050B"},
    "transpose-segmented-rr": {"**.traffic": "transpose", "**.load": "0.3", "**.numVLs": "2", "**.sl": '"0,1"',
                               "**.arbiter": "round-robin", "**.messageSize": "3000B"},
    "mixed-sizes-slow-crossbar": {"**.traffic": "uniform", "**.load": "0.6", "**.messageSize": "5000B",
                                  "**.outputBufferSize": "4KiB", "**.numVLs": "3", "**.sl": '"0..5"',
                                  "**.crossbarSpeedup": "1.5"},
    "shuffle-tiny-buffers": {"**.traffic": "shuffle", "**.load": "0.9", "**.messageSize": "700B", "**.mtu": "256B",
                             "**.vlBufferSize": "1KiB"},
    "constant-rate-high-priority": {"**.traffic": "uniform", "**.load": "0.4", "**.arrival": "constant",
                                    "**.numVLs": "2", "**.sl": '"0,1"', "**.vlArbHigh": '"1:8"',
                                    "**.vlArbLow": '"0:32"', "**.vlArbHighLimit": "1"},
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_invariants_hold_at_every_event(name):
    sim = Simulation(shipped("irregular16"), overrides=SCENARIOS[name], seed=3, check=True)
    s = sim.run("15us")
    assert s["conservation_ok"]
    assert s["packet_hops"] > 1000
    for node in sim.ib_nodes:
        if node.is_switch:
            for buf in node.buffers():
                assert buf.occ <= buf.capacity
