"""Small literal networks for data-path tests."""

from __future__ import annotations

import pytest

from ibfabric.components.packet import Packet
from ibfabric.simulation import Simulation
from ibfabric.testing import CHAIN_NED, STAR_NED, build_simulation

# the chain and the star are ibfabric's exported test topologies (ibfabric.testing, also the fixtures
# plugin authors use); RING and RING_MIXED are the data path's own
CHAIN = CHAIN_NED
STAR = STAR_NED

RING = """
// a ring of n switches, one host each; host i on switch i
network ring
{
    parameters:
        int n = 5;
    submodules:
        sw[n]: Switch { numPorts = 3; }
        h[n]: HCA;
    connections:
        for i=0..n-1 {
            h[i].port[1] <--> Link { width = "1x"; speed = "SDR"; } <--> sw[i].port[3];
            sw[i].port[1] <--> Link { width = "1x"; speed = "SDR"; } <--> sw[(i+1) % n].port[2];
        }
}
"""


RING_MIXED = RING.replace(
    'sw[i].port[1] <--> Link { width = "1x"; speed = "SDR"; }',
    'sw[i].port[1] <--> Link { width = "1x"; speed = "SDR"; length = ((i * 7) % 13) * 1m; }',
)
assert RING_MIXED != RING


def send_at(sim: Simulation, t: float, src: str, dst: str, size: int, **kw) -> None:
    """Schedule one packet of *size* wire bytes from HCA *src* to HCA *dst* at time *t*."""
    a, b = sim.module(src), sim.module(dst)
    sim.call_at(t, lambda: a.send_packet(Packet.make(a.lid, b.lid, size, **kw)))


@pytest.fixture
def chain():
    def build(n=1, **overrides):
        ov = {"**.n": str(n)}
        ov.update(overrides)
        return build_simulation(CHAIN, overrides=ov, check=True)

    return build
