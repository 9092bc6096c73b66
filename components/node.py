"""Common base of InfiniBand nodes (switches and channel adapters)."""

from __future__ import annotations

from ibfabric.errors import ConfigError
from ibfabric.kernel import Module

from .link import Link
from .packet import CREDIT_BYTES
from .routing.validate import lid_problem, lmc_problem, ports_problem

__all__ = ["IBNode", "parse_sl2vl", "parse_options", "parse_vlarb"]

#: Init stages of the IB components: 0 read parameters and build receive
#: sides; 1 build transmitters and wire them to their peers; 2 the subnet
#: manager assigns LIDs and installs forwarding tables; 3 traffic sources start.
STAGE_LOCAL, STAGE_WIRE, STAGE_SUBNET, STAGE_TRAFFIC = 0, 1, 2, 3


class IBNode(Module):
    """A switch or channel adapter: a module whose ``port[k]`` gates carry IB links.

    After stage 0, ``links`` maps each connected port number to
    ``(peer node, peer port, Link)``.  ``lid`` and ``lmc`` are those of
    port 0 (switches) or the first connected port (channel adapters), set by
    the topology or the subnet manager.
    """

    is_switch = False
    #: the subnet management agent (:mod:`ibfabric.components.sm.agent`), with a dynamic subnet manager only
    sma = None

    def num_init_stages(self) -> int:
        return STAGE_TRAFFIC + 1

    def read_common(self) -> None:
        """Read what switches and channel adapters share: ports, LID/LMC, ``numVLs``,
        ``vlBufferSize`` and ``sl2vl``."""
        self.read_ports()
        self.num_vls = self.int_param("numVLs", 1, 15)
        self.vl_buffer = self.int_param("vlBufferSize", CREDIT_BYTES, 1 << 30)
        self.sl2vl = parse_sl2vl(str(self.params["sl2vl"]), self.path)

    def link_vls(self, peer: "IBNode") -> int:
        """Operational data VLs of a link to *peer*: the smaller count of both ends."""
        return min(self.num_vls, int(peer.params["numVLs"]))

    def read_ports(self) -> None:
        """Collect the connected ports and check what is attached to them."""
        self.links: dict[int, tuple[IBNode, int, Link]] = {}
        num_ports = self.params["numPorts"]
        problem = ports_problem(num_ports)
        if problem:
            raise ConfigError(f"{self.path}: {problem}")
        for g in self.gate_vector("port"):
            if g.peer is None:
                continue
            where = f"{g.location}: " if g.location is not None else ""
            if g.index == 0:
                raise ConfigError(f"{where}{self.path}: port[0] is the management port and cannot be connected")
            peer = g.peer.owner
            if not isinstance(peer, IBNode):
                raise ConfigError(f"{where}{g.path} is connected to {g.peer.path}, which is not an InfiniBand node")
            if g.peer.name != "port":
                raise ConfigError(f"{where}{g.path} must connect to another node's port[], not {g.peer.path}")
            if not isinstance(g.channel, Link):
                raise ConfigError(f"{where}{g.path}: an InfiniBand port must be connected through a Link channel")
            self.links[g.index] = (peer, g.peer.index, g.channel)
        lid, lmc = self.params["lid"], self.params["lmc"]
        problem = lmc_problem(lmc) or lid_problem(lid, lmc=lmc)  # the rules every input meets (routing.validate)
        if problem:
            raise ConfigError(f"{self.path}: {problem}")
        self.lid, self.lmc = int(lid), int(lmc)

    def build_transmitters(self, make) -> None:
        """One transmitter per connected port, wired to the receiving side at the other end.

        ``make(port, link, nvl, arbiter, env)`` builds it; the operational
        data VLs are the receiver's, and its buffer sizes become the credits.
        """
        from ibfabric.plugins.arbiters import arbiter_for

        self.tx = {}
        for port, (peer, pp, link) in self.links.items():
            rx_peer = peer.rx[pp]
            nvl = rx_peer.nvl
            tx = make(port, link, nvl, arbiter_for(self, port, nvl), self.sim.env)
            tx.connect(rx_peer, rx_peer.capacities())
            rx_peer.upstream = tx
            self.tx[port] = tx

    def int_param(self, name: str, lo: int, hi: int) -> int:
        """The integer parameter *name*, which must lie in ``lo..hi``.

        Raises
        ------
        ConfigError
            If the value is not an integer (a whole float is taken) or lies outside the range.
        """
        v = self.params[name]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or not lo <= v <= hi:
            raise ConfigError(f"{self.path}: '{name}' must be an integer in {lo}..{hi} (got {v!r})")
        return int(v)


def parse_sl2vl(text: str, owner: str) -> list[int] | None:
    """``'0,1,0,1,...'`` (16 VLs for SL 0..15) -> list; '' -> None (SL mod VLs)."""
    text = text.strip()
    if not text:
        return None
    try:
        vls = [int(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise ConfigError(f"{owner}: 'sl2vl' must be 16 VL numbers (got {text!r})") from None
    if len(vls) != 16 or not all(0 <= v <= 15 for v in vls):
        raise ConfigError(f"{owner}: 'sl2vl' must be 16 VL numbers in 0..15 (got {text!r})")
    return vls


def parse_vlarb(text: str, owner: str, name: str) -> tuple[tuple[int, int], ...]:
    """``'0:32,1:64'`` -> ((0, 32), (1, 64)); at most 64 entries, weights 0..255, VLs 0..14."""
    entries = []
    for item in text.replace(";", ",").replace(" ", ",").split(","):
        if not item:
            continue
        vl, sep, w = item.partition(":")
        try:
            vl_i, w_i = int(vl), int(w)
        except ValueError:
            raise ConfigError(f"{owner}: '{name}' entries are 'vl:weight' (got {item!r})") from None
        if not sep or not 0 <= vl_i <= 14 or not 0 <= w_i <= 255:
            raise ConfigError(f"{owner}: '{name}' entry {item!r}: VL must be 0..14 and weight 0..255")
        entries.append((vl_i, w_i))
    if len(entries) > 64:
        raise ConfigError(f"{owner}: '{name}' has {len(entries)} entries; a VLArbitrationTable holds at most 64")
    return tuple(entries)


def parse_options(text: str, owner: str, name: str) -> dict[str, str]:
    """``'root=1 father=random'`` (or comma-separated) -> {'root': '1', 'father': 'random'}.

    A comma separates options only when every piece is a ``key=value``, so a
    value may hold commas: ``'fathers=6:3,10:6'`` is one option, as with
    ``ibfabric routes --set``.
    """
    out: dict[str, str] = {}
    items = []
    for word in text.split():
        pieces = word.split(",")
        items.extend(pieces if all("=" in piece for piece in pieces if piece) else [word])
    for item in filter(None, items):
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise ConfigError(f"{owner}: '{name}' must be 'key=value ...' (got {item!r})")
        out[k] = v
    return out
