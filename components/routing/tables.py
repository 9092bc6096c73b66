"""IBA forwarding tables of a whole subnet.

A :class:`ForwardingTables` holds one row per switch (in
:attr:`FabricGraph.switches` order) and one column per LID.  A linear
forwarding table (LFT) stores an output port for every LID; a random
forwarding table (RFT) stores explicit entries and a *default port* used for
every other LID (Bermúdez et al. 2006, §2.1, Fig. 3).  Both are represented
the same way: ``lft`` holds the explicit entries, ``default_port`` the RFT
default (-1 for an LFT), and :meth:`expanded` gives the port for every LID
with default ports applied, which is what the data path looks up.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .fabric import FabricGraph

__all__ = ["NO_PORT", "ForwardingTables"]

#: Table value meaning "no entry for this LID".
NO_PORT = 255


class ForwardingTables:
    """Forwarding tables for every switch of a fabric.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned.
    lft : ndarray of uint8, shape (num_switches, max_lid + 1), optional
        Explicit entries; :data:`NO_PORT` where a switch has none.
        Defaults to an empty table.
    default_port : ndarray of int, shape (num_switches,), optional
        RFT default port per switch, -1 for none (linear tables).
    engine : str
        Name of the routing engine that produced the tables.
    info : dict
        Engine-specific data (root switch, distances, timings...).
    path_offset : ndarray of int, shape (num_endpoints, num_endpoints), optional
        For engines that give one destination several LIDs (LMC > 0) and
        choose among them per source, as destination renaming does: the
        offset added to the destination's base LID by packets from endpoint
        ``i`` to endpoint ``j`` (what a path-record query would return).
        None means every source uses the base LID.
    path_sl : ndarray of uint8, shape (num_switches, max_lid + 1), optional
        For engines that keep routes deadlock-free with virtual layers
        (``dfsssp``, ``lash``): the SL of packets that enter the fabric at
        switch row ``r`` (from the switch itself or a CA attached to it)
        with DLID ``l`` -- what a path-record query returns.  Every source
        on one switch shares the switch's routes, hence its SLs.  None
        means the engine does not choose SLs.
    sl2vl : sequence of 16 int, optional
        The SL-to-VL table such an engine installs on every port (required
        with *path_sl*).
    """

    def __init__(
        self,
        fabric: FabricGraph,
        lft: np.ndarray | None = None,
        default_port: np.ndarray | None = None,
        *,
        engine: str = "",
        info: dict[str, Any] | None = None,
        path_offset: np.ndarray | None = None,
        path_sl: np.ndarray | None = None,
        sl2vl: tuple[int, ...] | None = None,
    ):
        s = len(fabric.switches)
        width = fabric.max_lid + 1
        self.fabric = fabric
        if lft is None:
            lft = np.full((s, width), NO_PORT, dtype=np.uint8)
        lft = np.asarray(lft)
        if lft.shape != (s, width):
            raise ValueError(f"lft must have shape {(s, width)} (switches x LIDs), got {lft.shape}")
        self.lft = lft.astype(np.uint8, copy=False)
        if default_port is None:
            default_port = np.full(s, -1, dtype=np.int64)
        self.default_port = np.asarray(default_port, dtype=np.int64)
        self.engine = engine
        self.info = dict(info or {})
        if path_offset is not None:
            path_offset = np.asarray(path_offset, dtype=np.int64)
            ne = len(fabric.ep_lid)
            if path_offset.shape != (ne, ne):
                raise ValueError(f"path_offset must have shape {(ne, ne)} (endpoints x endpoints)")
        self.path_offset = path_offset
        if path_sl is not None:
            path_sl = np.asarray(path_sl, dtype=np.uint8)
            if path_sl.shape != (s, width):
                raise ValueError(f"path_sl must have shape {(s, width)} (switches x LIDs), got {path_sl.shape}")
            if sl2vl is None or len(sl2vl) != 16 or any(not 0 <= int(v) <= 14 for v in sl2vl):
                raise ValueError("path_sl needs sl2vl: a data VL 0..14 for each of the 16 SLs")
            sl2vl = tuple(int(v) for v in sl2vl)
        self.path_sl = path_sl
        self.sl2vl = sl2vl
        from .mfts import MulticastTables

        #: The multicast forwarding tables (empty unless a multicast routing or a dump filled them).
        self.mft = MulticastTables(fabric)

    def dlid(self, src_ep: int, dst_ep: int) -> int:
        """The DLID a packet from endpoint *src_ep* to endpoint *dst_ep* carries."""
        return int(self.dlids(src_ep, dst_ep))

    def dlids(self, src_ep, dst_ep) -> np.ndarray:
        """:meth:`dlid` for arrays of endpoints (broadcast against each other)."""
        base = self.fabric.ep_lid[dst_ep]
        if self.path_offset is None:
            return base
        return base + self.path_offset[src_ep, dst_ep]

    def sls(self, src_ep, dlid) -> np.ndarray:
        """The path SL of packets from endpoints *src_ep* to DLIDs *dlid* (arrays broadcast; 0 without path SLs)."""
        src_ep, dlid = np.broadcast_arrays(np.asarray(src_ep, dtype=np.int64), np.asarray(dlid, dtype=np.int64))
        if self.path_sl is None:
            return np.zeros(src_ep.shape, dtype=np.int64)
        rows = self.__dict__.get("_src_row")
        if rows is None:
            g = self.fabric
            sw, _ = g.attachments()
            rows = self._src_row = np.where(sw >= 0, g.switch_row[np.where(sw >= 0, sw, 0)], -1)
        row = rows[src_ep]
        sl = self.path_sl[np.maximum(row, 0), dlid].astype(np.int64)
        return np.where(row >= 0, sl, 0)

    def vl_function(self):
        """``(vl, num_vls)`` for :func:`~ibfabric.components.routing.routecheck.check_routes`: each hop's VL is
        ``sl2vl[path SL]`` (the same on every hop), or ``(None, 1)`` without path SLs."""
        if self.path_sl is None:
            return None, 1
        table = np.array(self.sl2vl, dtype=np.int64)
        used = np.unique(self.path_sl)

        def vl(src, dst, hop, node, port):
            return table[self.sls(src, self.dlids(src, dst))]

        return vl, int(table[used].max()) + 1

    @property
    def is_random(self) -> bool:
        """True if any switch uses a default port (random forwarding tables)."""
        return bool((self.default_port >= 0).any())

    def expanded(self) -> np.ndarray:
        """The port for every (switch, LID): explicit entries, else the default port, else NO_PORT.

        LID 0 and LIDs no endpoint owns stay NO_PORT.
        """
        out = self.lft.copy()
        rows = np.flatnonzero(self.default_port >= 0)
        if len(rows):
            owned = self.fabric.lid_owner >= 0
            for r in rows:
                fill = (out[r] == NO_PORT) & owned
                out[r, fill] = self.default_port[r]
        return out

    def port(self, switch_node: int, lid: int) -> int:
        """The output port a switch uses for *lid* (NO_PORT if none)."""
        r = int(self.fabric.switch_row[switch_node])
        if r < 0:
            raise ValueError(f"{self.fabric.nodes[switch_node].name} is not a switch")
        p = int(self.lft[r, lid]) if lid < self.lft.shape[1] else NO_PORT
        if p == NO_PORT and self.default_port[r] >= 0 and lid < len(self.fabric.lid_owner) and self.fabric.lid_owner[lid] >= 0:
            p = int(self.default_port[r])
        return p

    def explicit_entries(self) -> np.ndarray:
        """Number of explicit entries per switch (what an RFT must store)."""
        return (self.lft != NO_PORT).sum(axis=1)

    def copy(self) -> "ForwardingTables":
        """A copy whose arrays (LFTs, default ports, path offsets and SLs, MFTs) can change
        without changing these; the fabric and the SL-to-VL table are shared.
        """
        t = ForwardingTables(
            self.fabric, self.lft.copy(), self.default_port.copy(), engine=self.engine, info=dict(self.info),
            path_offset=None if self.path_offset is None else self.path_offset.copy(),
            path_sl=None if self.path_sl is None else self.path_sl.copy(), sl2vl=self.sl2vl,
        )
        t.mft = self.mft.copy()
        return t
