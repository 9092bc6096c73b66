"""What traffic sources need from the routing, shared among hosts (a mixin of :class:`~ibfabric.simulation.Simulation`).

Every source needs the DLID of every destination and, with some engines, the SL of each path
and the adaptive or multipath variants of the DLIDs.  Built per host these would be O(hosts^2)
in all; here they are built once per installed tables and shared, so a fabric of 4,096 hosts
holds one list of 4,096 DLIDs, not 4,096 of them (issue 13, ``python -m bench.memory``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["EndpointsMixin"]


class EndpointsMixin:
    """Host endpoints and the DLIDs, path SLs, adaptive DLIDs and path counts sources share.

    Uses the simulation's ``fabric``, ``tables``, ``hosts``, ``ib_nodes`` and ``_host_index``.
    """

    def host_endpoints(self) -> np.ndarray:
        """The fabric endpoint of each traffic host's first port, in :attr:`hosts` order (cached per fabric)."""
        fabric = self.fabric
        if getattr(self, "_host_eps", None) is None or self._host_eps_fabric is not fabric:
            index = {id(n): i for i, n in enumerate(self.ib_nodes)}
            self._host_eps = np.array(
                [fabric.endpoint_of(index[id(h)], h.first_port) for h in self.hosts], dtype=np.int64
            )
            self._host_eps_fabric = fabric
        return self._host_eps

    def dlids_from(self, hca) -> list[int]:
        """DLID of every traffic endpoint for packets sent by *hca* (per the routing's path choice), in
        :attr:`hosts` order, as a list of ints (indexed per packet).

        Unless the routing picks a destination's LID per source (a ``path_offset``: dr, hybrid), the
        list is the same for every source: all HCAs get one list object, built once per installed
        tables, so the traffic sources hold O(hosts) in all, not O(hosts) each.  Never modify it.
        """
        tables = self.tables
        eps = self.host_endpoints()
        if tables.path_offset is None:
            cache = self.__dict__.get("_shared_dlids")
            if cache is None or cache[0] is not tables or cache[1] is not eps:
                cache = self._shared_dlids = (tables, eps, tables.dlids(0, eps).astype(np.int64).tolist(), {})
            return cache[2]
        return tables.dlids(int(eps[self._host_index[id(hca)]]), eps).astype(np.int64).tolist()

    def _shared_derived(self, dlids, what: str, make):
        """``make(dlids)``, computed once for the shared list of :meth:`dlids_from` (else every time)."""
        cache = self.__dict__.get("_shared_dlids")
        if cache is None or cache[2] is not dlids:
            return make(dlids)
        if what not in cache[3]:
            cache[3][what] = make(dlids)
        return cache[3][what]

    def path_sls_from(self, hca, dlids) -> np.ndarray | None:
        """The SL of *hca*'s path to each of *dlids* (the path record of dfsssp, lash), None without path SLs.

        The SL depends on the source only through the switch it is attached to: with the shared DLIDs
        of :meth:`dlids_from`, the HCAs of one switch share one array (O(switches x hosts) in all).
        """
        tables = self.tables
        if tables.path_sl is None:
            return None
        src_ep = int(self.host_endpoints()[self._host_index[id(hca)]])
        cache = self.__dict__.get("_shared_dlids")
        if cache is None or cache[2] is not dlids:
            return np.asarray(tables.sls(src_ep, dlids), dtype=np.int64)
        by_switch = cache[3].setdefault("path_sls", {})
        if "attached" not in cache[3]:
            cache[3]["attached"] = tables.fabric.attachments()[0]
        sw = int(cache[3]["attached"][src_ep])
        if sw not in by_switch:
            by_switch[sw] = np.asarray(tables.sls(src_ep, dlids), dtype=np.int64)
        return by_switch[sw]

    def adaptive_dlids(self, dlids) -> list[int]:
        """The adaptive DLID (LSB set) of each DLID whose owner has a LID range of 2 or more; the
        DLID itself otherwise (routing options, :mod:`ibfabric.components.options`).  Shared like
        :meth:`dlids_from`'s list when *dlids* is that list."""

        def make(dlids):
            owner = self.fabric.lid_owner
            lmc = self.fabric.ep_lmc
            return [int(d) | 1 if d < len(owner) and owner[d] >= 0 and lmc[owner[d]] > 0 else int(d) for d in dlids]

        return self._shared_derived(dlids, "adaptive", make)

    def path_counts(self, dlids) -> list[int]:
        """Per DLID, the paths its owner's LID range names in Kim's layout (``2^(LMC - 1)``; 0 without
        a range): :mod:`ibfabric.plugins.routing.multipath`.  Shared like :meth:`dlids_from`'s list
        when *dlids* is that list."""

        def make(dlids):
            owner = self.fabric.lid_owner
            lmc = self.fabric.ep_lmc
            return [1 << (int(lmc[owner[d]]) - 1) if d < len(owner) and owner[d] >= 0 and lmc[owner[d]] > 0 else 0
                    for d in (int(x) for x in dlids)]

        return self._shared_derived(dlids, "path_counts", make)
