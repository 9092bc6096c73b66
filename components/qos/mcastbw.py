"""Bandwidth allocation between multicast and unicast traffic (Kim et al. 2007 §3.6.2, Fig. 10f).

In an IBA switch bandwidth is given to virtual lanes, not to flows: the
VL arbiter of each output port serves its VLs in proportion to their
weights in the VLArbitrationTable, and the SL-to-VL tables decide which
traffic shares a VL.  A *bandwidth policy* is therefore a way for the
subnet manager to compute those tables (as it sets them with
SubnSet(SLtoVLMappingTable) and SubnSet(VLArbitrationTable) SMPs); it adds
nothing to the data path.  The subnet manager's ``multicastBandwidth``
parameter names one of the four of the paper:

``shared`` (the default; policy 1)
    Multicast packets travel on the SL of the traffic they belong to
    (real-time streams: ``realtimeSL``), sharing its VLs with unicast
    packets, and switches serve multicast copies before unicast packets
    ("we give multicast traffic higher priority over unicast traffic in
    reserving the output VLs", §5.2).  The tables stay as they are.
``separate`` (policy 2)
    Multicast packets get SLs of their own, mapped to VLs no unicast SL
    uses, and compete with unicast in VL arbitration (no priority): each
    multicast VL gets the weight of the reference unicast VL (the same
    bandwidth).
``linear`` (policy 3)
    As ``separate``, a group's VL weighted ``n`` times the reference,
    ``n`` the number of the group's members.
``logarithmic`` (policy 4)
    As ``separate``, weighted ``1 + ln n`` times the reference (the
    receiver-dependent logarithmic share of Legout et al., the paper's
    reference [23], whose linear share is ``n`` and receiver-independent
    share 1).

Options (``multicastBandwidthOptions``, ``key=value``):

``vls``
    Multicast VLs (default: one per group).  Group ``g`` owns the VLs
    ``i`` with ``i mod groups == g``; a group with several spreads its
    real-time streams over them (stream ``j`` on the ``j mod k``-th), as
    ``realtimeSLs`` spreads unicast streams.  Fewer VLs than groups: the
    groups share them in turn and a shared VL takes the largest weight of
    its groups.
``sl``
    The first multicast SL (default: the lowest SL from which ``vls``
    consecutive SLs carry no unicast traffic: no host's ``sl`` nor
    real-time SLs; SL 0, every packet's default, is never taken).
    Multicast SL ``s`` is mapped to VL ``s`` on every port, so every port
    needs more than ``sl + vls - 1`` data VLs.
``ref``
    The reference unicast SL whose VL weight is the unit (default: the
    real-time SL of the first host that sends real-time traffic, else SL 0).

The weight of a multicast VL at a port is ``round(w x f(n))`` (at least 1)
with ``w`` the weight of the reference VL in that port's table (high or
low priority; the multicast entries go in the same table); weights above
255 are split over several entries, as IBA tables allow.  Existing entries
of a multicast VL are replaced (the default table lists every data VL at
64).  Ports need the ``iba-vlarb`` arbiter (or one with ``set_tables``).
"""

from __future__ import annotations

import math

import attrs

from ibfabric.errors import ConfigError

__all__ = ["POLICIES", "BandwidthPlan", "plan", "weights_for", "apply"]

#: policy name -> the share of a group of n members, in units of the reference VL (None: shared VLs)
POLICIES = {
    "shared": None,
    "separate": lambda n: 1.0,
    "linear": lambda n: float(n),
    "logarithmic": lambda n: 1.0 + math.log(n),
}


@attrs.frozen
class BandwidthPlan:
    """What a policy sets: per group its SLs, per multicast SL its VL and weight factor.

    Attributes
    ----------
    policy : str
    priority : bool
        True: switches serve multicast copies before unicast (``shared``).
    group_sls : tuple of tuple of int
        Per group (declaration order), the SLs its packets use (empty: the sender's own SL).
    factors : dict
        Multicast VL -> its weight in units of the reference VL's.
    ref_sl : int
    """

    policy: str
    priority: bool
    group_sls: tuple[tuple[int, ...], ...]
    factors: dict[int, float]
    ref_sl: int = 0


def plan(policy: str, options: dict[str, str], groups, hcas, owner: str = "") -> BandwidthPlan:
    """The plan of *policy* for *groups* (MulticastGroup values) and the hosts *hcas*."""
    if policy not in POLICIES:
        raise ConfigError(f"{owner}: 'multicastBandwidth' must be one of {', '.join(POLICIES)} (got {policy!r})")
    bad = sorted(set(options) - {"vls", "sl", "ref"})
    if bad:
        raise ConfigError(f"{owner}: multicastBandwidthOptions has no option '{bad[0]}' (valid: ref, sl, vls)")
    share = POLICIES[policy]
    if share is None:
        if options:
            raise ConfigError(f"{owner}: multicastBandwidth 'shared' takes no options (got {' '.join(options)})")
        return BandwidthPlan(policy, True, tuple(() for _ in groups), {})
    ngroups = len(groups)
    used: set[int] = set()
    rt = None
    for h in hcas:
        if h.traffic:
            used.update(h.traffic_sls)
        if h.realtime_load > 0:
            used.update(range(h.realtime_sl, h.realtime_sl + h.realtime_sls))
            if rt is None:
                rt = h.realtime_sl
    k = _int(options.get("vls", str(ngroups)), "vls", 1, 15, owner)
    if "sl" in options:
        first = _int(options["sl"], "sl", 0, 15 - k, owner)
    else:
        first = next((s for s in range(1, 16 - k) if not used & set(range(s, s + k))), None)
        if first is None:
            raise ConfigError(f"{owner}: no {k} consecutive SLs are free of unicast traffic for multicast"
                              f" (unicast uses SLs {sorted(used)}); give 'vls' or 'sl'")
    mine = list(range(first, first + k))
    clash = sorted(used & set(mine))
    if clash:
        raise ConfigError(f"{owner}: multicast SL {clash[0]} also carries unicast traffic; multicast needs SLs"
                          f" of its own under policy '{policy}'")
    ref = _int(options["ref"], "ref", 0, 15, owner) if "ref" in options else (rt if rt is not None else 0)
    if ref in mine:
        raise ConfigError(f"{owner}: the reference SL {ref} is a multicast SL")
    group_sls = tuple(tuple(s for i, s in enumerate(mine) if i % ngroups == g) or (mine[g % k],)
                      for g in range(ngroups))
    factors: dict[int, float] = {}
    for g, sls in zip(groups, group_sls):
        f = share(len(g.member_hosts))
        for s in sls:
            factors[s] = max(factors.get(s, 0.0), f)
    return BandwidthPlan(policy, False, group_sls, factors, ref)


def weights_for(table, ref_vl: int, factors: dict[int, float]) -> tuple | None:
    """*table* (``(vl, weight)`` entries) with the multicast VLs of *factors* weighted from the
    reference VL's total weight in it, or None if the reference VL is not in *table*."""
    w = sum(wt for vl, wt in table if vl == ref_vl)
    if not w:
        return None
    out = [(vl, wt) for vl, wt in table if vl not in factors]
    for vl, f in sorted(factors.items()):
        total = max(1, round(w * f))
        while total > 0:
            out.append((vl, min(255, total)))
            total -= 255
    return tuple(out)


def apply(sim, bw: BandwidthPlan, owner: str = "") -> None:
    """Install *bw*: SL-to-VL tables of every switch and HCA port, their VL arbitration tables,
    multicast priority at the switches, the groups' SLs (``sim.multicast.sls``) and the HCAs'
    send-queue order (the multicast SLs right after the reference SL, unless the HCA's
    ``slPriority`` lists them all)."""
    if bw.priority:
        return
    vls = sorted(bw.factors)  # multicast SL s rides VL s
    for node in sim.ib_nodes:
        txs = list(node.tx.values())
        for tx in txs:
            if tx.nvl <= vls[-1]:
                raise ConfigError(f"{owner}: multicastBandwidth '{bw.policy}' puts multicast on VLs {vls[0]}.."
                                  f"{vls[-1]} but {node.path}.port[{tx.port}] has {tx.nvl} data VLs (raise"
                                  f" 'numVLs')")
        if node.is_switch:
            tables = {id(t): t for rx in node.rx.values() for t in rx.sl2vl_out if t is not None}.values()
        else:
            tables = [tx.sl2vl for tx in txs]
            listed = str(node.params["slPriority"]).replace(",", " ").split()
            if not set(map(str, vls)) <= set(listed):  # an explicit slPriority placing them wins
                order = [s for s in node.sl_order if s not in vls]
                at = order.index(bw.ref_sl) + 1 if bw.ref_sl in order else len(order)
                node.sl_order = order[:at] + vls + order[at:]
        for t in tables:
            for s in vls:
                t[s] = s
        for tx in txs:
            if node.is_switch:  # the reference SL's VL towards this port (from any input)
                t = next(rx.sl2vl_out[tx.port] for rx in node.rx.values() if rx.sl2vl_out[tx.port] is not None)
            else:
                t = tx.sl2vl
            _set_arbitration(tx, t[bw.ref_sl], bw, owner)
            if node.is_switch:
                tx.mprio = False
    for tx in (tx for n in sim.ib_nodes if n.is_switch for tx in n.tx.values()):
        engine = tx.engine
        if engine is not None and tx.obuf is None and not callable(getattr(engine, "offers", None)):
            raise ConfigError(f"{owner}: multicastBandwidth '{bw.policy}' needs a replication engine that lets"
                              f" multicast copies take part in VL arbitration, or output buffers ('{engine.name}' at"
                              f" {tx.node.path} cannot: its copies go first by design)")
    if sim.multicast is not None:
        sim.multicast.sls = [list(s) for s in bw.group_sls]


def _set_arbitration(tx, ref_vl: int, bw: BandwidthPlan, owner: str) -> None:
    arb = tx.arbiter
    if not (callable(getattr(arb, "set_tables", None)) and hasattr(arb, "high") and hasattr(arb, "low")):
        raise ConfigError(f"{owner}: multicastBandwidth '{bw.policy}' sets VL arbitration tables, but the arbiter"
                          f" of {tx.node.path}.port[{tx.port}] ({type(arb).__name__}) has none (use 'iba-vlarb')")
    high = weights_for(arb.high, ref_vl, bw.factors)
    low = weights_for(arb.low, ref_vl, bw.factors)
    if high is None and low is None:
        raise ConfigError(f"{owner}: the reference VL {ref_vl} (SL {bw.ref_sl}) is in neither VL arbitration"
                          f" table of {tx.node.path}.port[{tx.port}]")
    if high is None:
        high = tuple((vl, w) for vl, w in arb.high if vl not in bw.factors)
    if low is None:
        low = tuple((vl, w) for vl, w in arb.low if vl not in bw.factors)
    limit = 255 if arb.limit is None else arb.limit // 4096
    try:
        arb.set_tables(high, low, limit)
    except ConfigError as exc:
        raise ConfigError(f"{owner}: {tx.node.path}.port[{tx.port}]: {exc}") from None


def _int(text: str, name: str, lo: int, hi: int, owner: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = lo - 1
    if not lo <= v <= hi:
        raise ConfigError(f"{owner}: multicastBandwidthOptions '{name}' must be an integer {lo}..{hi} (got {text!r})")
    return v
