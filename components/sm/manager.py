"""The dynamic subnet manager: sweeps, traps and change assimilation in simulated time.

With ``SubnetManager.dynamic = true`` the subnet manager module keeps a
:class:`DynamicSM` that lives in the simulation.  It runs on a channel
adapter (the module's ``node``; default the first one) and talks to the
agents of every node (:mod:`ibfabric.components.sm.agent`) with SMPs
(:mod:`ibfabric.components.sm.smp`) sent through that adapter's VL15 path.

An **assimilation** (one per detected change, and the initial one with
``initialSweep = "smp"``) runs the paper's three steps (Bermúdez et al.
2006, §1, §4.2), each in simulated time:

1. *exploration*: directed-route SubnGet(NodeInfo) and SubnGet(PortInfo)
   breadth-first from the SM's own node, at most ``maxWireSmps`` SMPs
   outstanding (OpenSM's ``max_wire_smps``); an SMP without a response
   after ``smpTimeout`` is sent again, at most ``smpRetries`` times, then
   its target counts as unreachable;
2. *computation*: the discovered fabric (LIDs kept, missing ones assigned
   as the static SM does: :meth:`FabricGraph.with_lids`) is routed by the
   routing plugin, and the SM waits the computation time of
   :mod:`ibfabric.components.sm.cost` (``smComputeTime``);
3. *distribution*: SubnSet(PortInfo) with the LID of every port whose LID
   changed, SubnSet(LinearForwardingTable) of every 64-entry block that
   differs from what the switch holds (all blocks of a switch never
   programmed: as OpenSM does), each installed by the switch when its SMP
   arrives (so tables are mixed while it lasts); then SubnSet(PortInfo)
   moves every port left in Init to Active.

With the ``hybrid`` engine, PIRa's tables (``info["provisional"]``) go
through steps 2-3 first, then the final tables are computed (their own
simulated time) and distributed block by block while traffic runs (§3.4).

Changes are detected by traps (a switch agent whose port goes Down or
comes up) and, with ``sweepInterval > 0``, by light sweeps: SubnGet(PortInfo)
of every switch port known, compared with what the last assimilation left.

The timeline of each assimilation is :attr:`DynamicSM.assimilations`
(``summary["assimilations"]``, :mod:`~ibfabric.components.sm.report`) and is emitted on the SM module's signals
``smDetected``, ``smExplored``, ``smComputed``, ``smDistributed``,
``smActive``, ``smPhase2Computed``, ``smPhase2Distributed`` (value: ns since
the change, or since detection when the change time is unknown).
"""

from __future__ import annotations

import time
from collections import Counter, deque
from typing import Any

import attrs
import numpy as np

from ibfabric.errors import ConfigError, PluginError

from ..node import parse_options
from ..portstate import PortState
from ..routing.fabric import FabricGraph, Link
from ..routing.tables import NO_PORT, ForwardingTables
from .agent import HcaAgent, SwitchAgent
from .report import summary_section
from .smp import (GET, LFT, LFT_BLOCK, NODE_INFO, NOTICE, PORT_INFO, RFT, RFT_BLOCK, SET, SWITCH_INFO, TRAP_REPRESS,
                  Smp, SmpPacket)

__all__ = ["DynamicSM", "attach", "SMP_LOST"]

DOWN, INIT, ARMED, ACTIVE = PortState.DOWN, PortState.INIT, PortState.ARMED, PortState.ACTIVE
#: The drop reason under which SMPs lost in the data path are counted (their own reasons: the SM's summary).
SMP_LOST = "smp-lost"


@attrs.define(eq=False)
class _Request:
    path: tuple[int, ...]
    method: str
    attr: str
    modifier: int
    data: Any
    cb: Any
    tid: int
    tries: int = 0
    timer: Any = None


def attach(module, tables: ForwardingTables, declared: FabricGraph) -> "DynamicSM":
    """Give the subnet manager *module* its dynamic part (called by
    :class:`~ibfabric.components.sm.subnet_manager.SubnetManager` at the end of its init stage)."""
    return DynamicSM(module, tables, declared)


class DynamicSM:
    """The subnet manager in simulated time (see the module docstring)."""

    def __init__(self, module, tables: ForwardingTables, declared: FabricGraph):
        sim = module.sim
        p = module.params
        self.module = module
        self.sim = sim
        where = module.path
        self.sma_delay = float(p["smaDelay"])
        self.smp_timeout = float(p["smpTimeout"])
        self.smp_retries = int(p["smpRetries"])
        self.sweep_interval = float(p["sweepInterval"])
        self.max_wire = int(p["maxWireSmps"])
        model = str(p["smComputeTime"])
        if model not in ("model", "work", "ops", "measured"):
            raise ConfigError(f"{where}: 'smComputeTime' must be \"model\", \"ops\" or \"measured\" (got {model!r})")
        self.model = {"measured": "measured", "ops": "ops"}.get(model, "work")
        step = float(p["smComputeStep"])
        self.step_ns = step if step > 0 else None
        self.initial = str(p["initialSweep"])
        if self.initial not in ("static", "smp"):
            raise ConfigError(f"{where}: 'initialSweep' must be \"static\" or \"smp\" (got {self.initial!r})")
        for name, v in (("smaDelay", self.sma_delay), ("sweepInterval", self.sweep_interval)):
            if v < 0:
                raise ConfigError(f"{where}: '{name}' must be >= 0 (got {v}ns)")
        if not self.smp_timeout > 0:
            raise ConfigError(f"{where}: 'smpTimeout' must be > 0 (got {self.smp_timeout}ns)")
        if self.smp_retries < 0 or self.max_wire < 1:
            raise ConfigError(f"{where}: 'smpRetries' must be >= 0 and 'maxWireSmps' >= 1")
        if str(p["multicastGroups"]).strip():
            raise ConfigError(f"{where}: the dynamic subnet manager does not handle multicast groups yet")
        self.engine = str(p["routing"])
        self.options = parse_options(str(p["routingOptions"]), where, "routingOptions")
        self.lmc = int(p["lmc"])
        nodes = self.nodes = sim.ib_nodes
        fabric = tables.fabric
        self.host = nodes[fabric.sm_node]
        if self.host.is_switch:
            raise ConfigError(f"{where}: the dynamic subnet manager runs on a channel adapter ('node' names a switch)")
        if self.host.first_port is None:
            raise ConfigError(f"{where}: the subnet manager's node {self.host.path} has no connected port")
        self.lid = int(self.host.lid)
        self.specs = declared.nodes  # names, GUIDs, descriptions: what NodeInfo/NodeDescription tell
        self.guids = [fabric.guid(i) for i in range(len(nodes))]
        self.by_guid = {g: i for i, g in enumerate(self.guids)}
        self.tables = tables
        self.tid = 0
        self.pending: deque[_Request] = deque()
        self.outstanding: dict[int, _Request] = {}
        self.on_idle = None
        self.busy = False
        self.deferred: list[dict] = []
        self.changes: list[float] = []
        self.assimilations: list[dict] = []
        self.rec: dict | None = None
        self.compute_end: float | None = None  # when the computation under way ends
        self.compute_after = 0.0  # the computation still to come after it (a hybrid's phase 2)
        self.smps_sent = 0
        self.retries = 0
        self.unreachable = 0
        self.traps = 0
        self.lost: Counter[str] = Counter()
        self.lft_blocks_sent: Counter[int] = Counter()  # per node index, every LinearForwardingTable Set
        self.rft_blocks_sent: Counter[int] = Counter()  # per node index, every RandomForwardingTable Set
        self.installed: dict[int, np.ndarray] = {}
        #: per switch routed by a random forwarding table: (default port, top, entry blocks) as sent
        self.rft_installed: dict[int, tuple] = {}
        self.activated: list[tuple[int, int]] = []
        self.drops_base: dict[str, int] = {}
        self.host_index = int(fabric.sm_node)
        self._attach_agents(fabric, declared)
        self._listen_drops()
        sim.dynamic_sm = self
        sim.add_summary_section("subnet_manager", lambda: summary_section(self))
        # what the SM knows: directed routes and port states (after an assimilation, or from the static setup)
        self.paths, self.known = self._static_knowledge(fabric)
        if self.initial == "smp":
            self._reset_for_initial_sweep()
            sim.call_at(0.0, self.assimilate, "initial", 0.0)
        else:
            full = tables.expanded()
            for row, i in enumerate(fabric.switches.tolist()):
                self.installed[i] = _padded(full[row])
                if tables.default_port[row] >= 0:  # the switch holds the random forwarding table as such
                    self._distribute_rft(tables, row, i, len(self.installed[i]), None)
        if self.sweep_interval > 0:
            sim.call_at(self.sweep_interval, self._sweep_tick)

    # ------------------------------------------------------------ setup

    def _attach_agents(self, fabric: FabricGraph, declared: FabricGraph) -> None:
        smp_mode = self.initial == "smp"
        source = declared if smp_mode else fabric  # in smp mode the agents know only the declared LIDs
        per_node: dict[int, dict[int, tuple[int, int]]] = {}
        for e in range(len(source.ep_lid)):
            per_node.setdefault(int(source.ep_node[e]), {})[int(source.ep_port[e])] = (
                int(source.ep_lid[e]), int(source.ep_lmc[e]))
        for i, n in enumerate(self.nodes):
            cls = SwitchAgent if n.is_switch else HcaAgent
            n.sma = cls(n, self, self.guids[i], per_node.get(i, {}))

    def _listen_drops(self) -> None:
        """SMPs lost in the data path count as ``smp-lost`` (their own reasons in the SM's summary)."""
        lost = self.lost

        def dropped(p, reason, node):
            if type(p) is SmpPacket:
                lost[reason] += 1
                return SMP_LOST
            return None

        self.sim.drop_listeners.append(dropped)

    def _static_knowledge(self, fabric: FabricGraph) -> tuple[dict, dict]:
        paths = {fabric.sm_node: ()}
        q = deque([fabric.sm_node])
        while q:
            x = q.popleft()
            if x != fabric.sm_node and not fabric.is_switch[x]:
                continue
            for port in range(1, int(fabric.num_ports[x]) + 1):
                y = int(fabric.peer_node[x, port])
                if y >= 0 and y not in paths:
                    paths[y] = paths[x] + (port,)
                    q.append(y)
        known = {}
        for i in paths:
            n = self.nodes[i]
            for port, tx in n.tx.items():
                known[(i, port)] = tx.state
        return paths, known

    def _reset_for_initial_sweep(self) -> None:
        """``initialSweep = "smp"``: switches start with empty tables and every port in Init."""
        from ..failures import set_state

        for n in self.nodes:
            if n.is_switch:
                n.install_lft([])
            for tx in n.tx.values():
                set_state(tx, INIT, 0.0)
        self.changes.clear()
        self.known = {k: INIT for k in self.known}

    # ------------------------------------------------------------ SMP transactions

    def next_tid(self) -> int:
        """A new transaction identifier: 1, 2, 3... in the order of the calls."""
        self.tid += 1
        return self.tid

    def request(self, path, method, attr, modifier=0, data=None, cb=None) -> None:
        """Queue a directed-route SMP and send it when fewer than ``maxWireSmps`` are outstanding.

        Parameters
        ----------
        path : sequence of int
            The output ports of the directed route from the SM's node; empty for
            the SM's own node (answered by its agent, with no wire).
        method, attr : str
            The MAD method (``SubnGet``, ``SubnSet``...) and attribute.
        modifier : int
            The attribute modifier (a port number for port attributes).
        data : optional
            The payload of a ``SubnSet``.
        cb : callable, optional
            Called as ``cb(data, request)`` with the response's data, or with None
            once the retries of an unanswered SMP are exhausted.
        """
        self.pending.append(_Request(tuple(path), method, attr, modifier, data, cb, self.next_tid()))
        self._pump()

    def _pump(self) -> None:
        while self.pending and len(self.outstanding) < self.max_wire:
            req = self.pending.popleft()
            self.outstanding[req.tid] = req
            self._transmit(req)

    def _transmit(self, req: _Request) -> None:
        sim = self.sim
        now = sim.now
        data = dict(req.data) if isinstance(req.data, dict) else req.data
        smp = Smp(req.method, req.attr, req.modifier, req.tid, data, path=req.path, hop=1 if req.path else 0)
        self.smps_sent += 1
        if not req.path:  # the SM's own node: its agent, no wire
            sim.call_at(now + self.sma_delay, self.host.sma.respond, smp, None, now + self.sma_delay)
            return
        self.host.sma.send_out(smp, req.path[0], now)
        req.timer = sim.call_at(now + self.smp_timeout, self._timeout, req, req.tries)

    def _timeout(self, req: _Request, tries: int) -> None:
        if self.outstanding.get(req.tid) is not req or req.tries != tries:
            return
        if req.tries < self.smp_retries:
            req.tries += 1
            self.retries += 1
            self._transmit(req)
            return
        del self.outstanding[req.tid]
        self.unreachable += 1
        self._complete(req, None)

    def on_response(self, smp: Smp) -> None:
        """A response reached the SM (late duplicates of retried requests are ignored)."""
        req = self.outstanding.pop(smp.tid, None)
        if req is None:
            return
        if req.timer is not None:
            req.timer.cancel()
        self._complete(req, smp.data)

    def _complete(self, req: _Request, data) -> None:
        if req.cb is not None:
            req.cb(data, req)
        self._pump()
        if not self.outstanding and not self.pending and self.on_idle is not None:
            then, self.on_idle = self.on_idle, None
            then()

    def lose(self, smp: Smp, reason: str) -> None:
        """An SMP an agent could not send on (no such port, a CA asked to forward...)."""
        self.lost[reason] += 1

    # ------------------------------------------------------------ changes

    def note_change(self, node, port: int, old: PortState, new: PortState, now: float) -> None:
        """A port changed state (every node's agent reports it; used for the timeline's ``change_ns`` only)."""
        if new == DOWN or old == DOWN:
            self.changes.append(now)

    def on_trap(self, smp: Smp, slid: int) -> None:
        """A trap reached the SM: repress it and assimilate the change if it is news."""
        self.traps += 1
        now = self.sim.now
        self.host.sma.send_out(Smp(TRAP_REPRESS, NOTICE, smp.modifier, smp.tid, lid_routed=True),
                               self.host.first_port, now, dlid=slid)
        self.smps_sent += 1
        if self.busy:
            self.deferred.append({**smp.data, "at": now})
        elif self._is_news(smp.data):
            self.assimilate("trap", now)

    def _is_news(self, notice: dict) -> bool:
        i = self.by_guid.get(notice["guid"])
        return self.known.get((i, notice["port"]), DOWN) != PortState(notice["state"])

    def _sweep_tick(self) -> None:
        now = self.sim.now
        self.sim.call_at(now + self.sweep_interval, self._sweep_tick)
        if self.busy:
            return
        self.busy = True
        state = {"changed": None}

        def check(data, req):
            key = (self._at_path_static[req.path], req.modifier)
            if state["changed"] is None and (data is None or self.known.get(key, DOWN) != data["state"]):
                # a change: the light sweep stops here and a heavy sweep starts (late responses are ignored)
                state["changed"] = self.sim.now
                for r in self.outstanding.values():
                    if r.timer is not None:
                        r.timer.cancel()
                self.outstanding.clear()
                self.pending.clear()
                self.on_idle = None
                done()

        def done():
            self.busy = False
            if state["changed"] is not None:
                self.deferred = []
                self.assimilate("sweep", state["changed"])
            else:
                self._after_busy()

        self._at_path_static = {path: i for i, path in self.paths.items()}
        self.on_idle = done
        ports = [(i, port) for (i, port) in sorted(self.known) if self.nodes[i].is_switch and i in self.paths]
        if not ports:
            self.on_idle = None
            done()
            return
        for i, port in ports:
            self.request(self.paths[i], GET, PORT_INFO, port, cb=check)

    # ------------------------------------------------------------ assimilation

    def assimilate(self, trigger: str, detected: float) -> None:
        """Explore, compute, distribute and activate (see the module docstring)."""
        if self.busy:
            self.deferred.append({"trigger": trigger, "at": detected})
            return
        self.busy = True
        now = self.sim.now
        change = min(self.changes) if self.changes else (0.0 if trigger == "initial" else None)
        self.changes = []
        drops0 = self.drops_base  # discards count from the end of the previous assimilation (losses at the failure too)
        rec = self.rec = {"trigger": trigger, "change_ns": change, "detected_ns": detected, "started_ns": now,
                          "explored_ns": None,
                          "computed_ns": None, "distributed_ns": None, "active_ns": None, "engine": self.engine,
                          "nodes": 0, "links": 0, "unreachable": 0, "lft_blocks": 0, "rft_blocks": 0,
                          "switch_infos": 0, "lid_sets": 0, "port_sets": 0, "smps": 0, "phase2": None, "discarded_until_active": None,
                          "discarded": None}
        rec["_drops0"] = drops0
        rec["_smps0"] = self.smps_sent
        rec["_unreach0"] = self.unreachable
        self.assimilations.append(rec)
        self._emit("smDetected", now)
        self._explore(self._explored)

    def _emit(self, signal: str, now: float) -> None:
        rec = self.rec
        ref = rec["change_ns"] if rec["change_ns"] is not None else rec["detected_ns"]
        self.module.emit(signal, now - ref)

    def _explore(self, then) -> None:
        self.found: dict[int, dict] = {}
        self.at_path: dict[tuple, int] = {}
        self.found_links: dict[tuple, tuple] = {}
        self.on_idle = then
        self.request((), GET, NODE_INFO, cb=self._got_node)

    def _got_node(self, data, req) -> None:
        if data is None:
            return
        i = self.by_guid.get(data["guid"])
        if i is None:
            return
        path = req.path
        if path:
            prev = self.at_path[path[:-1]]
            a, b = (prev, path[-1]), (i, int(data["local_port"]))
            self.found_links[min(a, b) + max(a, b)] = (prev, path[-1])
        if i in self.found:
            return
        self.found[i] = {"path": path, "info": data, "ports": {}, "in_port": data["local_port"]}
        self.at_path[path] = i
        first = 0 if data["is_switch"] else 1
        for port in range(first, int(data["num_ports"]) + 1):
            self.request(path, GET, PORT_INFO, port, cb=self._got_port)

    def _got_port(self, data, req) -> None:
        if data is None:
            return
        i = self.at_path[req.path]
        rec = self.found[i]
        port = req.modifier
        rec["ports"][port] = data
        forwards = rec["info"]["is_switch"] or not req.path  # switches, and the SM's own node
        if forwards and port and data["state"] != DOWN and port != rec["in_port"]:
            self.request(req.path + (port,), GET, NODE_INFO, cb=self._got_node)

    def discovered_fabric(self) -> tuple[FabricGraph, list[int]]:
        """The fabric the last exploration found (nodes in build order; LIDs as the agents reported
        them) and the node index of each of its nodes."""
        idx = sorted(self.found)
        pos = {i: k for k, i in enumerate(idx)}
        links = []
        connected: dict[int, list[int]] = {}
        for key, (i, port) in self.found_links.items():
            a, pa, b, pb = key
            if a not in pos or b not in pos:
                continue
            info = self.found[i]["ports"].get(port, {})
            links.append((a, pa, b, pb, info))
            connected.setdefault(a, []).append(pa)
            connected.setdefault(b, []).append(pb)
        links.sort(key=lambda x: x[:4])
        specs = []
        for i in idx:
            spec = self.specs[i]
            ports = self.found[i]["ports"]
            if spec.is_switch:
                lid, lmc = ports.get(0, {}).get("lid", 0), ports.get(0, {}).get("lmc", 0)
                extra = {}
            else:
                cps = sorted(connected.get(i, []))
                lids = {p: (ports.get(p, {}).get("lid", 0), ports.get(p, {}).get("lmc", 0)) for p in cps}
                lid, lmc = lids[cps[0]] if cps else (0, spec.lmc)
                extra = {p: lids[p][0] for p in cps[1:] if lids[p][0]}
            specs.append(attrs.evolve(spec, lid=int(lid), lmc=int(lmc), port_lids=extra))
        flinks = [Link(pos[a], pa, pos[b], pb, width=info.get("width", "4x"), speed=info.get("speed", "QDR"),
                       rate=float(info.get("rate", 0.0))) for a, pa, b, pb, info in links]
        return FabricGraph(specs, flinks, sm_node=pos[self.host_index], name=self.tables.fabric.name), idx

    def _explored(self) -> None:
        sim = self.sim
        now = sim.now
        rec = self.rec
        rec["explored_ns"] = now
        self._emit("smExplored", now)
        fabric, idx = self.discovered_fabric()
        fabric, _ = fabric.with_lmc(self.lmc)  # (the static set-up already warned about LIDs it moved)
        rec["nodes"], rec["links"] = len(idx), len(fabric.links)
        reg = sim.plugins.routing_engines.get(self.engine)
        t0 = time.process_time()
        tables = reg.create(fabric, self.options, self.module.rng)
        cpu = time.process_time() - t0
        if not isinstance(tables, ForwardingTables):
            raise PluginError(f"routing engine '{self.engine}' returned {type(tables).__name__}, not ForwardingTables")
        hybrid = "provisional" in tables.info
        first = tables.info["provisional"] if hybrid else tables
        t1 = self._cost(tables, cpu, "provisional" if hybrid else None)
        t2 = self._cost(tables, cpu, "final") + self._cost(tables, cpu, "coexistence") if hybrid else 0
        self.compute_end, self.compute_after = now + t1, t2  # (a run ending sooner says how long it has to go)
        sim.call_at(now + t1, self._computed, idx, tables, first, t2)

    def _cost(self, tables, cpu: float, phase: str | None) -> int:
        from .cost import compute_time_ns

        if self.model == "measured":
            if phase is None:
                return compute_time_ns(tables, "measured", measured_s=cpu)
            phases = tables.info.get("work_phases") or {}
            total = sum(phases.values()) or 1
            return compute_time_ns(tables, "measured", measured_s=cpu * phases.get(phase, 0) / total)
        return compute_time_ns(tables, self.model, self.step_ns, phase=phase)

    def _computed(self, idx, tables, first, t2) -> None:
        now = self.sim.now
        self.rec["computed_ns"] = now
        self._emit("smComputed", now)
        self._distribute(first, idx, lambda: self._distributed(idx, tables, t2), self.rec, lids=True)

    def _distributed(self, idx, tables, t2) -> None:
        now = self.sim.now
        self.rec["distributed_ns"] = now
        self._emit("smDistributed", now)
        self._activate(lambda: self._active(idx, tables, t2))

    def _active(self, idx, tables, t2) -> None:
        now = self.sim.now
        rec = self.rec
        rec["active_ns"] = now
        rec["discarded_until_active"] = self.discarded(rec)
        self._emit("smActive", now)
        if "provisional" in tables.info:
            rec["phase2"] = {"engine": str(tables.info.get("final_engine", "final")), "started_ns": now,
                             "computed_ns": None, "distributed_ns": None, "lft_blocks": 0, "rft_blocks": 0,
                             "switch_infos": 0,
                             "coexist": bool(tables.info.get("coexist", True))}
            self.compute_end, self.compute_after = now + t2, 0.0
            self.sim.call_at(now + t2, self._computed2, idx, tables)
        else:
            self._finish(tables)

    def _computed2(self, idx, tables) -> None:
        now = self.sim.now
        self.rec["phase2"]["computed_ns"] = now
        self._emit("smPhase2Computed", now)
        self._distribute(tables, idx, lambda: self._distributed2(tables), self.rec["phase2"], lids=False)

    def _distributed2(self, tables) -> None:
        now = self.sim.now
        self.rec["phase2"]["distributed_ns"] = now
        self._emit("smPhase2Distributed", now)
        self._finish(tables)

    def _finish(self, tables) -> None:
        rec = self.rec
        rec["smps"] = self.smps_sent - rec.pop("_smps0")
        rec["unreachable"] = self.unreachable - rec.pop("_unreach0")
        rec["discarded"] = self.discarded(rec)
        del rec["_drops0"]
        self.drops_base = dict(self.sim.stats.dropped)
        self.tables = tables
        self.paths = {i: self.found[i]["path"] for i in self.found}
        known = {}
        for i, f in self.found.items():
            for port, info in f["ports"].items():
                if port:
                    known[(i, port)] = PortState(info["state"])
        for key in self.activated:
            known[key] = ACTIVE
        self.known = known
        self.busy = False
        self._after_busy()

    def _after_busy(self) -> None:
        """Assimilate what was detected while the SM was busy, if its last exploration did not see it."""
        deferred, self.deferred = self.deferred, []
        news = [d for d in deferred if "trigger" in d or self._is_news(d)]
        if news:
            self.assimilate(news[0].get("trigger", "trap"), min(d["at"] for d in news))

    def discarded(self, rec: dict) -> dict[str, int]:
        """Data packets discarded since the change of assimilation *rec*, by reason (SMPs lost are not in it)."""
        now, before = self.sim.stats.dropped, rec["_drops0"]
        return {k: n - before.get(k, 0) for k, n in sorted(now.items()) if k != SMP_LOST and n - before.get(k, 0)}

    # ------------------------------------------------------------ distribution

    def _distribute(self, tables: ForwardingTables, idx: list[int], then, rec: dict, lids: bool) -> None:
        fabric = tables.fabric
        self.on_idle = then
        if lids:  # ports whose LID the agents do not have yet
            for e in range(len(fabric.ep_lid)):
                i = idx[int(fabric.ep_node[e])]
                port = int(fabric.ep_port[e])
                lid, lmc = int(fabric.ep_lid[e]), int(fabric.ep_lmc[e])
                info = self.found[i]["ports"].get(port, {})
                if (info.get("lid"), info.get("lmc")) != (lid, lmc):
                    rec["lid_sets"] += 1
                    self.request(self.found[i]["path"], SET, PORT_INFO, port, {"lid": lid, "lmc": lmc})
        full = tables.expanded()
        for row, k in enumerate(fabric.switches.tolist()):
            i = idx[k]
            if tables.default_port[row] >= 0:  # a random forwarding table (PIRa): few entries + a default port
                self._distribute_rft(tables, row, i, len(_padded(full[row])), rec)
                continue
            self.rft_installed.pop(i, None)
            new = _padded(full[row])
            old = self.installed.get(i)
            width = len(new) if old is None else max(len(new), len(old))
            new = _padded(new, width)
            if old is not None:
                old = _padded(old, width)
            for b in range(width // LFT_BLOCK):
                blk = new[b * LFT_BLOCK:(b + 1) * LFT_BLOCK]
                if old is None or not np.array_equal(blk, old[b * LFT_BLOCK:(b + 1) * LFT_BLOCK]):
                    rec["lft_blocks"] += 1
                    self.lft_blocks_sent[i] += 1
                    self.request(self.found[i]["path"], SET, LFT, b, tuple(blk.tolist()), cb=self._block_done)
            self.installed[i] = new
        if not self.pending and not self.outstanding:
            self.on_idle = None
            then()

    def _distribute_rft(self, tables: ForwardingTables, row: int, i: int, top: int, rec: dict) -> None:
        """Random forwarding table of switch row *row* (node *i*): SubnSet(SwitchInfo) with the default
        port and the table's top when they change (which clears the switch's entries), then the
        SubnSet(RandomForwardingTable) blocks of 16 explicit entries that differ (all after a
        SwitchInfo).  The SM's record of the switch's linear view follows, for a later LFT."""
        default = int(tables.default_port[row])
        lft = tables.lft[row]
        entries = [(lid, int(p)) for lid, p in enumerate(lft.tolist()) if p != NO_PORT]
        blocks = [tuple(entries[j:j + RFT_BLOCK]) for j in range(0, len(entries), RFT_BLOCK)]
        if rec is None:  # the static set-up at time 0: installed directly, no SMPs
            sw = self.nodes[i]
            sw.set_default_port(default, top)
            for b, blk in enumerate(blocks):
                sw.install_rft_block(b, blk)
            self.rft_installed[i] = (default, top, blocks)
            self.installed[i] = np.frombuffer(sw.lft_ports, dtype=np.uint8).copy()
            return
        old = self.rft_installed.get(i)
        path = self.found[i]["path"]
        if old is None or old[:2] != (default, top):
            rec["switch_infos"] += 1
            self.request(path, SET, SWITCH_INFO, 0, {"default_port": default, "top": top}, cb=self._block_done)
            old = (default, top, [])
        for b, blk in enumerate(blocks):
            if b >= len(old[2]) or old[2][b] != blk:
                rec["rft_blocks"] += 1
                self.rft_blocks_sent[i] += 1
                self.request(path, SET, RFT, b, blk, cb=self._block_done)
        for b in range(len(blocks), len(old[2])):  # blocks no longer used: cleared
            rec["rft_blocks"] += 1
            self.rft_blocks_sent[i] += 1
            self.request(path, SET, RFT, b, (), cb=self._block_done)
        self.rft_installed[i] = (default, top, blocks)
        view = np.full(top, default, dtype=np.uint8)
        for lid, p in entries:
            view[lid] = p
        self.installed[i] = view

    def _block_done(self, data, req) -> None:
        pass  # the SM's copy already holds the block (OpenSM, too, resends what differs at the next sweep)

    def _activate(self, then) -> None:
        """Ports left in Init go to Armed, then, once every one is Armed, to Active (two passes, as
        IBA's state machine and OpenSM do): switch ports first, channel adapters last in each."""
        in_links = set()
        for key, (i, port) in self.found_links.items():
            a, pa, b, pb = key
            in_links.update(((a, pa), (b, pb)))
        todo = []
        # switch ports first, channel adapters last: a host's traffic starts once its paths are Active
        for i, f in sorted(self.found.items(), key=lambda kv: (not self.nodes[kv[0]].is_switch, kv[0])):
            for port, info in sorted(f["ports"].items()):
                if port and (i, port) in in_links and info["state"] in (INIT, ARMED):
                    todo.append((i, port, f["path"], info["state"]))
        self.activated = [(i, port) for i, port, _, _ in todo]
        arm = [t for t in todo if t[3] == INIT]
        self._set_states(arm, ARMED, lambda: self._set_states(todo, ACTIVE, then))

    def _set_states(self, todo: list, state: PortState, then) -> None:
        self.on_idle = then
        for i, port, path, _ in todo:
            self.rec["port_sets"] += 1
            self.request(path, SET, PORT_INFO, port, {"state": int(state)})
        if not self.pending and not self.outstanding:
            self.on_idle = None
            then()


def _padded(row, width: int | None = None) -> np.ndarray:
    """*row* as a uint8 array padded with NO_PORT to *width* (default: a whole number of blocks)."""
    row = np.asarray(row, dtype=np.uint8)
    if width is None:
        width = -(-len(row) // LFT_BLOCK) * LFT_BLOCK
    if len(row) >= width:
        return row
    return np.concatenate([row, np.full(width - len(row), NO_PORT, dtype=np.uint8)])
