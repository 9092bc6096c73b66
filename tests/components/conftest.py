"""Small literal networks for data-path tests."""

from __future__ import annotations

import pytest

from ibfabric.components.packet import Packet
from ibfabric.simulation import Simulation

CHAIN = """
// host a -> n switches in a line -> host b, all links 1x SDR (4 ns per byte)
network chain
{
    parameters:
        int n = 1;
        double la @unit(m) = 2m;
        double lb @unit(m) = 7m;
    submodules:
        sw[n]: Switch { numPorts = 4; }
        a: HCA;
        b: HCA;
    connections:
        a.port[1] <--> Link { width = "1x"; speed = "SDR"; length = la; } <--> sw[0].port[1];
        for i=0..n-2 {
            sw[i].port[2] <--> Link { width = "1x"; speed = "SDR"; length = 3m; } <--> sw[i+1].port[1];
        }
        sw[n-1].port[2] <--> Link { width = "1x"; speed = "SDR"; length = lb; } <--> b.port[1];
}
"""

STAR = """
// k hosts on one switch
network star
{
    parameters:
        int k = 4;
    submodules:
        sw: Switch { numPorts = k; }
        h[k]: HCA;
    connections:
        for i=0..k-1 {
            h[i].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw.port[i+1];
        }
}
"""

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
        return Simulation(CHAIN, overrides=ov, check=True)

    return build
