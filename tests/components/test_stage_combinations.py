"""Every switch stage combines with every other (DESIGN §3; issue 31, "How it is checked"): a property test.

Hypothesis draws a small fabric (a random irregular one, or the fixed star and two-switch fabrics for
the multicast engines), a combination of switch stages -- input organisation (FIFO, virtual output
queues, adaptive + escape split), route (one port, routing options chosen at lookup or arbitration,
Kim's SLID multipath, multicast copy sets with each replication engine), lookups (one per input port,
or one or two routing units shared by the switch), crossbar (FIFO or weighted round robin, with
speedup), output side (straight to the link or output VL buffers), watchers (an HLL dropper that
drops), 1 or 2 data VLs with traffic on several SLs, congestion control on or off -- and failures and
restores of links and nodes at random times.  Each case runs with the data path's audits on (``check=True``:
the credit invariant at every transmission, no port asleep while it could send) and must

- conserve packets: injected + multicast copies == delivered + dropped + in flight;
- keep credits within the buffers: every input buffer organisation holds at most its capacity (and
  exactly the credits of its packets), every output VL buffer's free credits lie in [0, its size],
  and every Active link's credits + returns on their way + what the receiver holds == its buffer;
- neither lose nor duplicate a multicast copy: no duplicates, complete + pending == sent, and the
  members reached plus the members still owed == the members each send had to reach;
- give the same run from the same seed (the summaries, but for wall-clock keys, are equal);
- not deadlock where the routes make that impossible: up*/down* routes, FA routing with up*/down*
  escape paths, escape space and the option chosen at arbitration time (Duato's condition: a blocked
  packet can always take its escape option), or a dropper whose lifetimes break any wait.

Routes that allow a deadlock (min-hop and SPF on fabrics with cycles, Kim's multipath without a
dropper) have their own property: a deadlock, if one happens, is a DeadlockError naming a cycle of
buffers, never a hang.  A run that takes over :data:`HANG_S` seconds of wall time fails as a hang.

A failing case prints its fabric, overrides, events and multicast sends (:func:`describe`), enough
to rebuild it with :func:`build`.  The examples are derandomized (a fixed set, the same on every run
and machine), so the suite's time stays put and a failure in CI fails the same way locally.
"""

from __future__ import annotations

import os
from functools import lru_cache

import attrs
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from ibfabric.components.portstate import PortState
from ibfabric.errors import ConfigError, DeadlockError
from ibfabric.scenario import Event
from ibfabric.simulation import Simulation
from ibfabric.testing import STAR_NED
from ibfabric.topologies.generators import irregular, to_ned

from .hang import hang_guard

#: payload MTU and header of every packet: the largest is 282 B, 5 credits (buffers hold whole ones)
MTU, HEADER = 256, 26
#: summary keys that measure the wall clock (tests/test_determinism.py)
TIMING = ("wall_s", "events_per_s", "packet_hops_per_s", "routing_time_s")
#: examples per route kind (:data:`ROUTES`) of the main property; a longer search than CI's:
#: ``IBFABRIC_STAGE_EXAMPLES=200 pytest tests/components/test_stage_combinations.py``
EXAMPLES = int(os.environ.get("IBFABRIC_STAGE_EXAMPLES", "8"))
#: wall-clock seconds after which a run counts as a hang (a case takes well under a second)
HANG_S = 30

TWO_NED = """
// two switches, two hosts each: h0, h1 on sw0, h2, h3 on sw1
network two
{
    submodules:
        sw[2]: Switch { numPorts = 3; }
        h[4]: HCA;
    connections:
        sw[0].port[3] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[1].port[3];
        h[0].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[0].port[1];
        h[1].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[0].port[2];
        h[2].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[1].port[1];
        h[3].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[1].port[2];
}
"""

#: the fixed fabrics of the multicast cases: (NED text, nodes, link ports, a port every switch has)
FIXED = {
    "star": (STAR_NED, ("sw", "h[0]", "h[1]", "h[2]", "h[3]"), tuple(f"sw.port[{i}]" for i in range(1, 5)), 1),
    "two": (TWO_NED, ("sw[0]", "sw[1]", "h[0]", "h[1]", "h[2]", "h[3]"),
            ("sw[0].port[1]", "sw[0].port[2]", "sw[0].port[3]", "sw[1].port[1]", "sw[1].port[2]"), 1),
}
RING_NED = """
// a ring of n switches, a host on each (h[i] on sw[i].port[3]), 4x QDR links: min-hop routes have a
// channel-dependency cycle each way round
network ring
{
    parameters:
        int n = 5;
    submodules:
        sw[n]: Switch { numPorts = 3; }
        h[n]: HCA;
    connections:
        for i=0..n-1 {
            h[i].port[1] <--> Link <--> sw[i].port[3];
            sw[i].port[1] <--> Link <--> sw[(i+1) % n].port[2];
        }
}
"""

#: the multicast groups of the fixed fabrics (4 hosts each): every host sends to "a"; 0..2 to "b"
GROUPS = "a: 0 1 2 3 senders=*; b: 1 2 senders=0,1,2"
GROUP_MEMBERS = {"a": {0, 1, 2, 3}, "b": {1, 2}}
ENGINES = ("asynchronous", "synchronous", "central-buffer", "replicated-unicast")


@attrs.frozen
class Fabric:
    """A fabric by what makes it: ``irregular(switches, links_per_switch, hosts, links, seed)`` (4x SDR
    links: 1 byte per ns), a ``ring`` of *switches* switches, or a fixed one by name (``star``, ``two``)."""

    kind: str
    switches: int = 0
    links_per_switch: int = 0
    hosts: int = 0
    links: int = 0
    seed: int = 0

    def graph(self):
        return irregular(self.switches, links_per_switch=self.links_per_switch, hosts_per_switch=self.hosts,
                         links=self.links, seed=self.seed, width="4x", speed="SDR")

    def ned(self) -> str:
        if self.kind == "ring":
            return RING_NED.replace("int n = 5;", f"int n = {self.switches};")
        return FIXED[self.kind][0] if self.kind in FIXED else _irregular_ned(self)

    def targets(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(nodes, link ports)``: what failures may hit (every link named at one of its switch ports)."""
        if self.kind in FIXED:
            return FIXED[self.kind][1], FIXED[self.kind][2]
        if self.kind == "ring":
            n = range(self.switches)
            return (*(f"sw[{i}]" for i in n), *(f"h[{i}]" for i in n)), tuple(
                f"sw[{i}].port[{k}]" for i in n for k in (1, 3))
        g = self.graph()
        nodes = tuple(nd.name for nd in g.nodes)
        ports = []
        for ln in g.links:
            a, pa = (ln.a, ln.port_a) if g.nodes[ln.a].is_switch else (ln.b, ln.port_b)
            ports.append(f"{g.nodes[a].name}.port[{pa}]")
        return nodes, tuple(ports)

    def common_port(self) -> int:
        """A port every switch has connected (the first host port of an irregular fabric's switches)."""
        return FIXED[self.kind][3] if self.kind in FIXED else self.links_per_switch + 1


@lru_cache(maxsize=64)
def _irregular_ned(fabric: Fabric) -> str:
    return to_ned(fabric.graph(), name="f")


@attrs.frozen
class Case:
    """One drawn configuration: a fabric, overrides (pattern -> value), scripted failures and restores
    ``(action, target, at ns, training ns)``, multicast sends ``(at ns, host, group, wire bytes, SL)``,
    the run's length and seed, and whether its routes rule deadlocks out."""

    fabric: Fabric
    overrides: dict
    events: tuple = ()
    sends: tuple = ()
    until: int = 20_000
    seed: int = 1
    deadlock_free: bool = True


def describe(case: Case) -> str:
    """The case in words that rebuild it (:func:`build`)."""
    lines = [f"fabric = {case.fabric!r}", "overrides = {"]
    lines += [f"    {k!r}: {v!r}," for k, v in case.overrides.items()]
    lines += ["}", f"events = {list(case.events)!r}", f"sends = {list(case.sends)!r}",
              f"until = {case.until} ns, seed = {case.seed}, deadlock_free = {case.deadlock_free}"]
    return "\n".join(lines)


def build(case: Case) -> Simulation:
    """The simulation of *case*, audited (``check=True``), with its events and sends scheduled."""
    sim = Simulation(case.fabric.ned(), overrides=case.overrides, seed=case.seed, check=True,
                     deadlock_interval="2us")
    sim.apply_events([Event(float(at), action, target, training=float(training))
                      for action, target, at, training in case.events])
    for at, host, group, size, sl in case.sends:
        sim.call_at(float(at), lambda h=sim.hosts[host], g=group, n=size, s=sl: h.send_multicast(g, n, sl=s))
    return sim


def run(case: Case) -> tuple[Simulation, dict, DeadlockError | None]:
    """Build and run *case*: ``(simulation, summary, the DeadlockError or None)``."""
    sim = build(case)
    with hang_guard(describe(case), HANG_S):
        try:
            return sim, sim.run(case.until), None
        except DeadlockError as exc:
            return sim, sim.summary(), exc


# ------------------------------------------------------------------ strategies


@st.composite
def irregular_fabrics(draw) -> Fabric:
    """2-5 switches, 1-2 hosts each, a spanning tree plus a few extra links."""
    switches = draw(st.integers(2, 5))
    d = draw(st.integers(2, 3))
    most = min(switches * d // 2, switches * (switches - 1) // 2)
    links = draw(st.integers(switches - 1, most))
    return Fabric("irregular", switches, d, draw(st.integers(1, 2)), links, draw(st.integers(0, 999)))


@st.composite
def scripted_events(draw, fabric: Fabric, until: int) -> tuple:
    """0-3 failures and restores of links and nodes, at random times in the run."""
    nodes, ports = fabric.targets()
    out = []
    for _ in range(draw(st.integers(0, 3))):
        action = draw(st.sampled_from(["fail-link", "restore-link", "fail-node", "restore-node"]))
        target = draw(st.sampled_from(ports if action.endswith("link") else nodes))
        at = draw(st.integers(0, until // 100 - 1)) * 100
        training = draw(st.sampled_from([0, 500])) if action.startswith("restore") else 0
        out.append((action, target, at, training))
    return tuple(sorted(out, key=lambda e: e[2]))


#: the route kinds, each its own run of the property: one output port (up*/down*), routing options (FA,
#: at lookup or arbitration), Kim's SLID multipath, and multicast copy sets with each replication engine
ROUTES = ("updn", "fa", "multipath", *ENGINES)


@st.composite
def cases(draw, route: str) -> Case:
    """A case whose route stage is *route* (:data:`ROUTES`), everything else drawn."""
    mcast = route in ENGINES
    fabric = Fabric(draw(st.sampled_from(sorted(FIXED)))) if mcast else draw(irregular_fabrics())
    until = draw(st.integers(10, 40)) * 1000
    vl_buffer = draw(st.sampled_from([640, 1024, 2048]))
    options = route in ("fa", "multipath")
    organisation = draw(st.sampled_from(["fifo", "voq", "split"] if options else ["fifo", "voq"]))
    xbar = draw(st.sampled_from(["fifo", "wrr"]))
    obuf = draw(st.sampled_from([0, 0, 320, 640, 1024]))
    ov = {"**.traffic": draw(st.sampled_from(["uniform", "hot-spot"]))}
    if ov["**.traffic"] == "hot-spot":
        ov["**.trafficOptions"] = "fraction=0.5 hotspot=0"  # half of all traffic to host 0: congestion
    ov.update({
        "**.load": draw(st.sampled_from(["0.3", "0.6", "0.9"])),
        "**.mtu": f"{MTU}B",
        "**.headerSize": f"{HEADER}B",
        "**.messageSize": draw(st.sampled_from(["0B", "600B"])),  # 0: 256 B packets; 600 B: 282 B and 114 B
        "**.numVLs": draw(st.sampled_from(["1", "2"])),
        "**.sl": draw(st.sampled_from(["0", "0,1"])),
        "**.vlBufferSize": f"{vl_buffer}B",
        "**.inputQueues": "fifo" if organisation == "split" else organisation,
        "**.outputBufferSize": f"{obuf}B",
        "**.crossbarArbiter": xbar,
        "**.crossbarSpeedup": draw(st.sampled_from(["1", "1.25", "2"])),
        "**.routingUnits": draw(st.sampled_from(["0", "0", "1", "2"])),
        "**.crossbarSetup": draw(st.sampled_from(["0ns", "0ns", "50ns"])),
    })
    if xbar == "wrr" and draw(st.booleans()):
        ov["**.crossbarWeights"] = f"{fabric.common_port()}:3"
    hll = draw(st.booleans())
    if hll:
        ov["**.dropper"] = "hll"
        ov["**.dropperOptions"] = f"hv={draw(st.sampled_from([0, 1]))}"  # 4.1 or 8.2 us at the head of a queue
    if organisation == "split":
        ov["**.escapeBufferSize"] = f"{vl_buffer // 2}B"
    if options and obuf >= 640 and draw(st.booleans()):  # split output buffers: the adaptive part holds 282 B
        ov["**.outputEscapeBufferSize"] = f"{draw(st.sampled_from([64, obuf - 320]))}B"
    sends: tuple = ()
    deadlock_free = True
    if route == "updn":
        ov["**.routing"] = "updn"
    elif route == "fa":
        adaptive = draw(st.sampled_from(["0", "0.5", "1"]))
        select_at = draw(st.sampled_from(["lookup", "arbitration"]))
        ov.update({"**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1", "**.adaptive": adaptive,
                   "**.selectAt": select_at,
                   "**.pathSelector": draw(st.sampled_from(["max-credit", "random", "lfu", "first", "shortest"]))})
        # Duato's condition: a blocked packet can always take its up*/down* escape option -- with escape
        # space in every buffer, and the option chosen when the packet may cross (at lookup, a packet
        # committed to an adaptive option waits for it even when the credits seen at lookup are gone)
        deadlock_free = adaptive == "0" or (organisation == "split" and select_at == "arbitration")
    elif route == "multipath":
        bits = draw(st.integers(1, 2))
        adaptive = draw(st.sampled_from(["0", "0.5", "1"]))
        ov.update({"**.routing": "multipath", "**.routingOptions": f"bits={bits}", "**.sm.lmc": str(bits + 1),
                   "**.optionBits": str(bits + 1), "**.optionsWhen": "slid", "**.adaptiveBy": "slid",
                   "**.adaptive": adaptive, "**.randomPath": "0" if adaptive == "1" else "0.5",
                   "**.selectAt": draw(st.sampled_from(["lookup", "arbitration"])),
                   "**.pathSelector": draw(st.sampled_from(["max-credit", "lfu", "lfu-port", "first"]))})
        deadlock_free = False  # Kim's paths run through the fabric's cycles (SPF base routes too)
    else:
        ov.update({"**.routing": "updn", "**.multicastGroups": GROUPS, "**.replication": route})
        if route == "central-buffer":
            ov["**.replicationOptions"] = draw(st.sampled_from(
                ["size=2048", "size=16384", "size=2048 fifo=vl", "size=16384 fifo=vl"]))
        n = draw(st.integers(1, 12))
        sends = tuple(sorted(
            (draw(st.integers(0, until // 100 - 1)) * 100, host, group,
             draw(st.sampled_from([64, 200, MTU + HEADER])), draw(st.sampled_from([0, 1])))
            for host, group in (draw(st.tuples(st.integers(0, 3), st.sampled_from(["a", "b"]))) for _ in range(n))
            if group == "a" or host != 3))  # host 3 does not send to "b"
    if hll:
        deadlock_free = True  # a head whose lifetime runs out is dropped: no wait lasts (docs/model.md)
    events = draw(scripted_events(fabric, until))
    seed = draw(st.integers(1, 1000))
    if draw(st.booleans()):  # congestion control (issue 33): FECN marking, CNPs, CCT throttling
        ov.update({"**.sm.congestionControl": "true", "**.sm.ccThreshold": draw(st.sampled_from(["8", "15"])),
                   "**.sm.ccCctiTimer": draw(st.sampled_from(["1", "10"]))})
    return Case(fabric, ov, events, sends, until, seed, deadlock_free)


# ------------------------------------------------------------------ the properties


def check_conservation(sim: Simulation, s: dict, why: str) -> None:
    copies = s["multicast"]["copies"] if "multicast" in s else 0
    assert s["conservation_ok"], f"conservation: packets lost or made up (summary's conservation_ok)\n{why}"
    counted = s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
    assert s["packets_injected"] + copies == counted, (
        f"conservation: injected {s['packets_injected']} + copies {copies} != delivered {s['packets_delivered']}"
        f" + dropped {s['packets_dropped']} + in flight {s['packets_in_flight']}\n{why}")
    assert sum(s["drops_by_reason"].values()) == s["packets_dropped"], (
        f"conservation: drops by reason {s['drops_by_reason']} do not add up to {s['packets_dropped']}\n{why}")
    assert s["packets_in_flight"] == sim.packets_in_network(), f"conservation: in flight miscounted\n{why}"


def check_credits(sim: Simulation, why: str) -> None:
    """No buffer holds more than its size, each holds the credits of its packets, and every Active link's
    credits add up."""
    for node in sim.ib_nodes:
        if not node.is_switch:
            continue
        for buf in node.buffers():
            held = sum(p.credits for p in buf.packets())
            assert 0 <= buf.occ <= buf.capacity, (
                f"credits: {buf!r} holds {buf.occ} credits, its capacity is {buf.capacity}\n{why}")
            assert buf.occ == held, f"credits: {buf!r} counts {buf.occ} credits, its packets take {held}\n{why}"
        for tx in node.tx.values():
            if tx.obuf is None:
                continue
            for vl, q in enumerate(tx.obuf):
                queued = sum(p.credits for p in q)
                assert 0 <= tx.ofree[vl] <= tx.ocap, (
                    f"credits: {tx.name_} output VL{vl} buffer has {tx.ofree[vl]} free of {tx.ocap}\n{why}")
                assert tx.oqueued[vl] == queued, (
                    f"credits: {tx.name_} output VL{vl} buffer counts {tx.oqueued[vl]} credits queued, its"
                    f" packets take {queued}\n{why}")
                assert tx.ofree[vl] <= tx.ocap - queued, (
                    f"credits: {tx.name_} output VL{vl} buffer: {tx.ofree[vl]} free but {queued} of {tx.ocap}"
                    f" queued\n{why}")
    for tx in sim.ports:
        peer = tx.peer_rx.node.tx[tx.peer_rx.port]
        if tx.state != PortState.ACTIVE or peer.state != PortState.ACTIVE:
            continue  # a Down port's credits mean nothing; link training sets them again
        for vl in range(tx.nvl):
            try:
                tx.check_credits(vl)
            except AssertionError as exc:
                raise AssertionError(f"credits: {exc}\n{why}") from None


def check_multicast(sim: Simulation, s: dict, case: Case, why: str) -> None:
    groups = s["multicast"]["groups"]
    owed = {g: 0 for g in groups}  # members still to reach, per group
    still = {g: 0 for g in groups}  # packets not complete
    for gi, _created, members, _t in sim.multicast.pending.values():
        name = sim.multicast.groups[gi].name
        owed[name] += len(members)
        still[name] += 1
    for name, g in groups.items():
        mine = [(host, group) for at, host, group, _n, _sl in case.sends if group == name and at <= sim.now]
        due = sum(len(GROUP_MEMBERS[name] - {host}) for host, _ in mine)
        assert g["duplicates"] == 0, f"multicast: {g['duplicates']} duplicate copies in group {name}\n{why}"
        assert g["packets"] == len(mine), f"multicast: group {name} counts {g['packets']} sent of {len(mine)}\n{why}"
        assert g["complete"] + still[name] == g["packets"], (
            f"multicast: group {name}: {g['complete']} complete + {still[name]} pending != {g['packets']} sent\n{why}")
        assert g["member_deliveries"] + owed[name] == due, (
            f"multicast: group {name}: {g['member_deliveries']} member copies delivered + {owed[name]} owed !="
            f" {due} due\n{why}")
    # a packet not complete has a copy dropped, in flight, or not sent yet (its source's port is down)
    if any(still.values()) and not s["packets_dropped"] and not s["packets_in_flight"]:
        at_sources = {(p.msg, p.seq) for h in sim.hosts for tx in h.tx.values()
                      for q in (*tx.sendq, *(vb.q for vb in tx.vbuf)) for p in q}
        lost = sorted(set(sim.multicast.pending) - at_sources)
        assert not lost, f"multicast: packets {lost} lost a copy without a drop\n{why}"


def comparable(s: dict) -> dict:
    return {k: v for k, v in s.items() if k not in TIMING}


def check_case(case: Case) -> tuple[DeadlockError | None, dict]:
    """Run *case* twice and assert every property (module docstring); return its deadlock, if any, and
    its summary."""
    why = describe(case)
    sim, s, deadlock = run(case)
    if deadlock is not None:
        assert not case.deadlock_free, f"deadlock on routes that rule it out: {deadlock}\n{why}"
        assert deadlock.cycle and s["deadlock"]["cycle"] == deadlock.cycle, f"deadlock without its cycle\n{why}"
    else:
        assert s["deadlock"] is None
    check_conservation(sim, s, why)
    check_credits(sim, why)
    if case.sends:
        check_multicast(sim, s, case, why)
    # the same seed gives the same run
    _, again, deadlock_again = run(case)
    assert (deadlock_again is None) == (deadlock is None), f"same seed, one run deadlocked, the other not\n{why}"
    if deadlock is not None:
        assert (deadlock_again.time, deadlock_again.cycle) == (deadlock.time, deadlock.cycle), (
            f"same seed, different deadlocks\n{why}")
    a, b = comparable(s), comparable(again)
    diff = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    assert not diff, f"same seed, different summaries (keys {diff})\n{why}"
    return deadlock, s


@pytest.mark.parametrize("route", ROUTES)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_stage_combination_conserves_credits_copies_and_runs(route, data):
    case = data.draw(cases(route), label="case")
    note(describe(case))
    deadlock, s = check_case(case)
    ov = case.overrides
    out = ("straight to the link" if ov["**.outputBufferSize"] == "0B" else
           "split output buffers" if "**.outputEscapeBufferSize" in ov else "output buffers")
    event(f"{'split' if '**.escapeBufferSize' in ov else ov['**.inputQueues']} input buffers, {out}")
    event("deadlock (allowed)" if deadlock else "no deadlock")
    if "**.sm.congestionControl" in ov:
        event(f"congestion control: {'BECNs' if s['congestion_control']['becn_received'] else 'no BECN'}")
    for reason in s["drops_by_reason"]:
        event(f"drops: {reason}")


# ------------------------------------------------------------------ deadlocks are reported, never hang


@st.composite
def cyclic_cases(draw) -> Case:
    """Routes with channel-dependency cycles on fabrics with cycles (a ring, or an irregular fabric with
    more links than a tree), small buffers, high load."""
    switches = draw(st.integers(3, 5))
    if draw(st.booleans()):
        fabric = Fabric("ring", switches + 1)
    else:
        d = draw(st.integers(2, 3))
        most = min(switches * d // 2, switches * (switches - 1) // 2)
        fabric = Fabric("irregular", switches, d, draw(st.integers(1, 2)), draw(st.integers(switches, most)),
                        draw(st.integers(0, 999)))
    until = draw(st.integers(20, 40)) * 1000
    ov = {
        "**.traffic": "uniform", "**.load": draw(st.sampled_from(["0.9", "1.0"])), "**.mtu": f"{MTU}B",
        "**.vlBufferSize": draw(st.sampled_from(["320B", "320B", "640B"])),
        "**.inputQueues": draw(st.sampled_from(["fifo", "voq"])),
        "**.outputBufferSize": draw(st.sampled_from(["0B", "0B", "320B"])),
        "**.crossbarArbiter": draw(st.sampled_from(["fifo", "wrr"])),
    }
    routing = draw(st.sampled_from(["minhop", "spf", "multipath"]))
    ov["**.routing"] = routing
    if routing == "multipath":
        ov.update({"**.routingOptions": "bits=1", "**.sm.lmc": "2", "**.optionBits": "2", "**.optionsWhen": "slid",
                   "**.adaptiveBy": "slid", "**.adaptive": "0.5", "**.randomPath": "0.5"})
    events = draw(scripted_events(fabric, until)) if draw(st.booleans()) else ()
    return Case(fabric, ov, events, (), until, draw(st.integers(1, 1000)), False)


def check_deadlock_case(case: Case) -> DeadlockError | None:
    """Run *case*: it ends, or a DeadlockError names a cycle of switch buffers that is still there."""
    why = describe(case)
    sim, s, deadlock = run(case)
    check_conservation(sim, s, why)
    check_credits(sim, why)
    if deadlock is None:
        assert s["deadlock"] is None
        return None
    cycle = deadlock.cycle
    assert len(cycle) >= 2, f"a deadlock names a cycle of buffers (got {cycle})\n{why}"
    switches = {n.path for n in sim.ib_nodes if n.is_switch}
    assert all(c.split(".port[")[0] in switches for c in cycle), f"a cycle of switch buffers (got {cycle})\n{why}"
    assert deadlock.time <= case.until and s["deadlock"] == {"time_ns": deadlock.time, "cycle": cycle}, why
    assert str(deadlock).startswith(f"at {deadlock.time:.0f} ns: {cycle[0]} -> "), why
    assert sim.find_deadlock() is not None, f"the reported deadlock is gone at once: not a deadlock\n{why}"
    return deadlock


@settings(max_examples=20, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cyclic_cases())
def test_a_deadlock_is_reported_with_its_cycle_never_a_hang(case):
    note(describe(case))
    event("deadlock" if check_deadlock_case(case) else "no deadlock")


# ------------------------------------------------------------------ the one rule


@pytest.mark.parametrize("over, message", [
    ({"**.inputQueues": "fifo"},
     "f.sw0: 'escapeBufferSize' (512B) splits the input buffers for the escape paths of routing options: it"
     " needs 'optionBits' > 0"),
    ({"**.inputQueues": "voq", "**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1"},
     "f.sw0: 'escapeBufferSize' (512B) splits one FIFO per input VL into adaptive and escape parts: it needs"
     " inputQueues = \"fifo\" (or \"auto\"), not \"voq\""),
])
def test_an_escape_split_without_options_or_with_voq_is_refused(over, message):
    """The one rule (components/switch/plan.py, docs/model.md "Switch"): an escape split needs routing
    options and one FIFO per input VL; the error names the parameter and what it needs."""
    ned = Fabric("irregular", 3, 2, 1, 3, 0).ned()
    with pytest.raises(ConfigError) as err:
        Simulation(ned, overrides={"**.escapeBufferSize": "512B", "**.vlBufferSize": "1024B", "**.mtu": "256B", **over})
    assert str(err.value).endswith(message) and "\n" not in str(err.value)


def test_an_escape_split_with_options_builds_its_fifo_by_default():
    # inputQueues = "auto" (the default) is a FIFO where an escape split asks for one
    sim = Simulation(Fabric("irregular", 3, 2, 1, 3, 0).ned(), overrides={
        "**.escapeBufferSize": "512B", "**.vlBufferSize": "1024B", "**.mtu": "256B", "**.routing": "fa",
        "**.sm.lmc": "1", "**.optionBits": "1"})
    assert {sw.input_queues for sw in sim.ib_nodes if sw.is_switch} == {"split"}


def test_the_one_rule_is_what_the_documentation_says():
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "model.md").read_text()
    model = " ".join(line.lstrip("> ").strip() for line in text.splitlines())
    assert ("`escapeBufferSize > 0` splits a FIFO for the escape paths of routing options, so it needs"
            " `optionBits > 0` and one FIFO per input VL") in model
