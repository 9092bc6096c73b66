"""Scripted scenarios: link and node failures, restores, traffic changes, running until a condition.

::

    sim = ibfabric.load("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.2"})
    sim.fail_link("sw3", "sw7", at="50us")          # the link between two nodes
    sim.fail_link("sw3.port[2]", at="50us")         # or the link at a port
    sim.restore_link("sw3.port[2]", at="120us", training="2us")
    sim.fail_node("sw5", at="60us")                 # a switch or an HCA: all its links
    sim.set_traffic("**", at="150us", load=0.4, pattern="bit-reversal")
    summary = sim.run_until(lambda s: s.stats.injected > 10_000, limit="1ms")
    summary["scenario"]                              # what happened, in time order

Every action is scheduled with :meth:`Simulation.call_at
<ibfabric.simulation.Simulation.call_at>` and recorded, when it happens, in
:attr:`Simulation.scenario_log <ibfabric.simulation.Simulation.scenario_log>`
(the summary's ``"scenario"``: ``{time_ns, action, target, result, ...}``).
Targets are checked when the action is scheduled, so a typo fails at once.

The same actions come from files: an experiment's ``[[events]]`` array of
tables or a scenario file of just ``[[events]]`` (``ibfabric run --scenario``),
read by :func:`parse_events` / :func:`load_scenario` into :class:`Event`
values that :meth:`Simulation.apply_events
<ibfabric.simulation.Simulation.apply_events>` schedules through the same
methods, so a file and the Python API give the same run::

    [[events]]
    at = "50us"
    action = "fail-link"
    target = "sw3.port[2]"        # or ["sw3", "sw7"]

What a failure does to the packets and ports is in
:mod:`ibfabric.components.failures` and ``docs/scenarios.md``.  Routes are
not recomputed: with the static subnet manager they stay stale after a
failure, and packets routed into a dead port are discarded (``port-down``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from ibfabric.checks import MAX_LOAD
from ibfabric.components.portstate import PortState
from ibfabric.errors import ConfigError, PluginError, did_you_mean
from ibfabric.units import UnitError, parse_duration

__all__ = ["ACTIONS", "Event", "ScenarioMixin", "event_templates", "events_of_run", "load_scenario", "parse_events",
           "retarget", "scenario_from_text"]

#: Actions of ``[[events]]`` entries and the keys each takes besides ``at``, ``action`` and ``target``.
ACTIONS: dict[str, tuple[str, ...]] = {
    "fail-link": (),
    "restore-link": ("training",),
    "fail-node": (),
    "restore-node": ("training",),
    "set-traffic": ("load", "pattern", "options"),
}
_PORT = re.compile(r"^(.+)\.port\[\s*(\d+)\s*\]$")


# ------------------------------------------------------------------ events


@attrs.frozen
class Event:
    """One scheduled action of a scenario (from a file, or built by hand).

    ``target`` is a node name, ``"node.port[k]"``, a host pattern
    (``set-traffic``), or a pair of node names / ports for a link.  ``where``
    is the ``file:line:col`` of the entry, put in front of errors found
    when the event is applied (``target_where``, that of its target, in
    front of those about the target).
    """

    at: float
    action: str
    target: Any
    training: float = 0.0
    load: float | None = None
    pattern: str | None = None
    options: str | None = None
    where: str = attrs.field(default="", eq=False)
    target_where: str = attrs.field(default="", eq=False)

    def config(self) -> dict:
        """The event as JSON-able data (what a run id hashes)."""
        out = {"at": self.at, "action": self.action,
               "target": list(self.target) if isinstance(self.target, tuple) else self.target}
        for key in ("training", "load", "pattern", "options"):
            v = getattr(self, key)
            if v is not None and not (key == "training" and v == 0.0):
                out[key] = v
        return out

    def apply(self, sim) -> None:
        """Schedule this event on *sim* (errors carry :attr:`where`)."""
        try:
            a = self.action
            if a in ("fail-link", "restore-link"):
                ends = self.target if isinstance(self.target, tuple) else (self.target,)
                if a == "fail-link":
                    sim.fail_link(*ends, at=self.at)
                else:
                    sim.restore_link(*ends, at=self.at, training=self.training)
            elif a == "fail-node":
                sim.fail_node(self.target, at=self.at)
            elif a == "restore-node":
                sim.restore_node(self.target, at=self.at, training=self.training)
            else:
                sim.set_traffic(self.target, at=self.at, load=self.load, pattern=self.pattern, options=self.options)
        except ConfigError as exc:
            if not self.where:
                raise
            names = self.target if isinstance(self.target, tuple) else (self.target,)
            about_target = self.target_where and any(f"'{_node_name(n)}'" in str(exc) for n in names)
            raise type(exc)(f"{self.target_where if about_target else self.where}: {exc}") from None


def event_locations(lines: list[str], filename: str) -> list[dict[str, tuple[int, int, int]]]:
    """Per ``[[events]]`` entry of a TOML text, ``{key: (line, key column, value column)}`` (1-based;
    ``""`` is the header).  A light scan, like :class:`ibfabric.tomlpos.Locator`."""
    out: list[dict] = []
    cur: dict | None = None
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if s.startswith("["):
            cur = None
            if re.match(r"^\[\[\s*events\s*\]\]\s*(#.*)?$", s):
                cur = {"": (n, line.index("[") + 1, line.index("[") + 1)}
                out.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"^(\s*)([A-Za-z0-9_-]+|\"[^\"]*\")\s*=\s*", line)
        if m:
            key = m.group(2).strip('"')
            cur.setdefault(key, (n, len(m.group(1)) + 1, m.end() + 1))
    return out


def parse_events(entries: Any, filename: str, lines: list[str] | None = None) -> list[Event]:
    """Check ``[[events]]`` entries (the TOML data) and turn them into :class:`Event` values.

    Errors are :class:`~ibfabric.errors.ConfigError`, one line starting with
    ``file:line:col:`` at the entry or value at fault when *lines* (the
    file's text) are given.
    """
    locs = event_locations(lines, filename) if lines is not None else []

    def at(i: int, key: str = "", value: bool = False) -> str:
        loc = locs[i] if i < len(locs) else {}
        line, kcol, vcol = loc.get(key) or loc.get("") or (1, 1, 1)
        return f"{filename}:{line}:{vcol if value else kcol}"

    if not isinstance(entries, list):
        raise ConfigError(f"{filename}:1:1: 'events' must be an array of tables ([[events]] entries)")
    events = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise ConfigError(f"{at(i)}: event {i + 1} must be a table (an [[events]] entry)")
        for key in ("at", "action"):
            if key not in e:
                raise ConfigError(f"{at(i)}: event {i + 1} has no '{key}'")
        action = e["action"]
        if action not in ACTIONS:
            raise ConfigError(f"{at(i, 'action', True)}: unknown action {action!r}{did_you_mean(action, ACTIONS)}"
                              f" (valid: {', '.join(ACTIONS)})")
        valid = ("at", "action", "target") + ACTIONS[action]
        for key in e:
            if key not in valid:
                raise ConfigError(f"{at(i, key)}: unknown key '{key}' for action '{action}'{did_you_mean(key, valid)}"
                                  f" (valid: {', '.join(valid)})")
        t = _duration(e["at"], at(i, "at", True), "at")
        kw: dict[str, Any] = {}
        target = e.get("target", "**" if action == "set-traffic" else None)
        where_t = at(i, "target", True)
        if target is None:
            raise ConfigError(f"{at(i)}: event {i + 1} ('{action}') has no 'target'")
        if action.endswith("-link"):
            if isinstance(target, list):
                if len(target) != 2 or not all(isinstance(x, str) and x for x in target):
                    raise ConfigError(f"{where_t}: a link target is \"node.port[k]\" or two node names,"
                                      f" e.g. [\"sw3\", \"sw7\"] (got {target!r})")
                target = tuple(target)
            elif not isinstance(target, str) or not target:
                raise ConfigError(f"{where_t}: a link target is \"node.port[k]\" or two node names,"
                                  f" e.g. [\"sw3\", \"sw7\"] (got {target!r})")
            elif not _PORT.match(target):
                raise ConfigError(f"{where_t}: a link target is \"node.port[k]\" or two node names,"
                                  f" e.g. [\"sw3\", \"sw7\"] (got {target!r})")
        elif not isinstance(target, str) or not target:
            what = "a host name or pattern" if action == "set-traffic" else "a node name"
            raise ConfigError(f"{where_t}: 'target' must be {what} (got {target!r})")
        if "training" in e:
            kw["training"] = _duration(e["training"], at(i, "training", True), "training")
        if action == "set-traffic":
            if "load" not in e and "pattern" not in e:
                raise ConfigError(f"{at(i)}: 'set-traffic' needs 'load' or 'pattern'")
            if "load" in e:
                v = e["load"]
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= MAX_LOAD:
                    raise ConfigError(f"{at(i, 'load', True)}: 'load' must be a number in [0, {MAX_LOAD:g}] (got {v!r}):"
                                      " 1 is the link's data rate, more is overload")
                kw["load"] = float(v)
            for key in ("pattern", "options"):
                if key in e:
                    if not isinstance(e[key], str):
                        raise ConfigError(f"{at(i, key, True)}: '{key}' must be a string (got {e[key]!r})")
                    kw[key] = e[key]
        events.append(Event(t, action, target, where=at(i), target_where=where_t if "target" in e else "", **kw))
    return events


def _node_name(ref: str) -> str:
    """The node of a target: ``sw3`` of ``"sw3.port[2]"``."""
    m = _PORT.match(ref) if isinstance(ref, str) else None
    return m.group(1) if m else ref


def event_templates(events: Any, error, check_template) -> list[dict]:
    """The ``[[events]]`` of an experiment file before substitution: tables whose values are checked by
    *check_template* (types, known ``${var}``); *error(path, message)* makes the located error."""
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise error(("events",), "'events' must be an array of tables ([[events]] entries)")
    for key, v in ((k, v) for e in events for k, v in e.items()):
        check_template(("events", key), v, (str, int, float, bool, list))
    return events


def events_of_run(templates: list[dict], substitute, locator, context: str = "") -> tuple:
    """The :class:`Event` values of one run of an experiment: *templates* with *substitute* applied,
    checked; an error names the run's variables (*context*) after its ``file:line:col``."""
    from ibfabric.runspec import ExperimentError

    if not templates:
        return ()
    try:
        return tuple(parse_events([{k: substitute(v) for k, v in e.items()} for e in templates],
                                  locator.filename, locator.lines))
    except ConfigError as exc:
        raise ExperimentError(f"{exc} (with {context})" if context else str(exc)) from None


def _duration(v: Any, where: str, key: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ConfigError(f"{where}: '{key}' must be a duration like \"50us\" (got {v!r})")
    try:
        return parse_duration(v, numbers=False)
    except UnitError as exc:
        raise ConfigError(f"{where}: bad '{key}' {v!r}: {exc}") from None


def load_scenario(path: str | Path) -> list[Event]:
    """Read a scenario file: a TOML file of ``[[events]]`` entries only."""
    from ibfabric.tomlpos import read_file

    return scenario_from_text(read_file(path), str(path))


def scenario_from_text(text: str, filename: str = "<scenario>") -> list[Event]:
    """Parse the text of a scenario file (see :func:`load_scenario`)."""
    from ibfabric.tomlpos import load_only

    events, loc = load_only(text, filename, "events", "scenario", "[[events]] entries")
    if events is None or events == []:  # (an empty list: a scenario that does nothing is a mistake)
        where = loc.at(("events",), value=True) if events == [] else f"{filename}:1:1"
        raise ConfigError(f"{where}: no [[events]] entries")
    return parse_events(events, filename, loc.lines)


# ------------------------------------------------------------------ the API


class ScenarioMixin:
    """The scenario methods of :class:`~ibfabric.simulation.Simulation` (see the module docstring)."""

    @property
    def scenario_log(self) -> list[dict]:
        """What the scenario did so far: ``{time_ns, action, target, result, ...}`` in time order."""
        return self.__dict__.setdefault("_scenario_log", [])

    @property
    def failed_nodes(self) -> set:
        """The nodes that failed and are not restored."""
        return self.__dict__.setdefault("_failed_nodes", set())

    def _log(self, action: str, target: str, result: str, **extra) -> None:
        entry = {"time_ns": self.now, "action": action, "target": target, "result": result, **extra}
        self.scenario_log.append(entry)
        self.plugins.pm.hook.ibfabric_scenario_event(simulation=self, event=dict(entry))

    def _at(self, at) -> float:
        from ibfabric.simulation import parse_time

        return self.now if at is None else parse_time(at)

    def _rel(self, m) -> str:
        prefix = self.root.path + "."
        return m.path[len(prefix):] if m.path.startswith(prefix) else m.path

    def _node(self, name):
        from ibfabric.components.node import IBNode

        if not isinstance(name, str):
            raise ConfigError(f"a node is named by a string (got {name!r})")
        try:
            m = self.module(name)
        except KeyError:
            raise ConfigError(f"no node '{name}' in network '{self.root.path}'") from None
        if not isinstance(m, IBNode):
            raise ConfigError(f"'{name}' is not a switch or channel adapter")
        return m

    def _port(self, ref):
        """``(node, port)`` of ``"node.port[k]"`` or ``(node, k)``."""
        if isinstance(ref, (tuple, list)) and len(ref) == 2 and isinstance(ref[1], int):
            node, port = self._node(ref[0]), ref[1]
        else:
            m = _PORT.match(ref) if isinstance(ref, str) else None
            if m is None:
                raise ConfigError(f"a port is \"node.port[k]\" or (node, k) (got {ref!r})")
            node, port = self._node(m.group(1)), int(m.group(2))
        if port not in node.links:
            raise ConfigError(f"{self._rel(node)}.port[{port}] is not connected")
        return node, port

    def _link(self, a, b=None):
        """``(node, port)`` of one end of the link named by *a* (and *b*): a port, or two nodes or ports."""
        if b is None:
            return self._port(a)
        ends = []
        for ref in (a, b):
            if isinstance(ref, str) and not _PORT.match(ref):
                ends.append((self._node(ref), None))
            else:
                ends.append(self._port(ref))
        (na, pa), (nb, pb) = ends
        ports = [p for p, (peer, pp, _l) in sorted(na.links.items())
                 if peer is nb and (pa is None or p == pa) and (pb is None or pp == pb)]
        if not ports:
            raise ConfigError(f"no link joins {self._rel(na)}{'' if pa is None else f'.port[{pa}]'} and"
                              f" {self._rel(nb)}{'' if pb is None else f'.port[{pb}]'}")
        if len(ports) > 1:
            raise ConfigError(f"{self._rel(na)} and {self._rel(nb)} are joined by {len(ports)} links (ports"
                              f" {', '.join(map(str, ports))} of {self._rel(na)}): name the port, e.g."
                              f" '{self._rel(na)}.port[{ports[0]}]'")
        return na, ports[0]

    def _link_name(self, node, port) -> str:
        peer, pp, _l = node.links[port]
        return f"{self._rel(node)}.port[{port}]<->{self._rel(peer)}.port[{pp}]"

    # ---------------------------------------------------------------- failures

    def fail_link(self, a, b=None, *, at=None):
        """Fail a link at time *at* (default: now): ``fail_link("sw3", "sw7")``, ``fail_link("sw3.port[2]")``
        or ``fail_link(("sw3", 2))``.  Both ends go Down; what was on the link is lost (``link-down``)."""
        node, port = self._link(a, b)
        return self.call_at(self._at(at), self._do_fail_link, node, port)

    def _do_fail_link(self, node, port) -> None:
        from ibfabric.components.failures import fail_link, link_ends

        ends = link_ends(node, port)
        name = self._link_name(node, port)
        if all(tx.state == PortState.DOWN for tx in ends):
            self._log("fail-link", name, "already down", lost=0)
            return
        self._log("fail-link", name, "down", lost=fail_link(ends, self.now))

    def restore_link(self, a, b=None, *, at=None, training=0.0):
        """Bring a failed link back at *at*: its ends come up *training* later (link training) with
        full credits, and go Active at once (the static subnet manager has nothing to configure)."""
        from ibfabric.simulation import parse_time

        node, port = self._link(a, b)
        return self.call_at(self._at(at), self._do_restore_link, node, port, parse_time(training, "training"))

    def _do_restore_link(self, node, port, training: float) -> None:
        from ibfabric.components.failures import link_ends

        ends = link_ends(node, port)
        name = self._link_name(node, port)
        down = [n for n in (node, node.links[port][0]) if n in self.failed_nodes]
        if down:
            self._log("restore-link", name, f"refused: node {self._rel(down[0])} is down")
        elif all(tx.state == PortState.ACTIVE for tx in ends):
            self._log("restore-link", name, "already up")
        else:
            self._up([ends], name, training, "restore-link")

    def _up(self, links: list, name: str, training: float, action: str, **extra) -> None:
        """Bring up *links* (pairs of transmitters) after *training*, logging *action* on *name*."""
        from ibfabric.components.failures import bring_up

        if training <= 0:
            for ends in links:
                bring_up(ends, self.now, activate=self.__dict__.get("dynamic_sm") is None)
            self._log(action, name, "active" if self.__dict__.get("dynamic_sm") is None else "init", **extra)
            return
        self._log(action, name, f"training until {self.now + training:g} ns", **extra)

        def done():
            up = [ends for ends in links
                  if all(tx.node not in self.failed_nodes and tx.peer_rx.node not in self.failed_nodes for tx in ends)]
            for ends in up:
                bring_up(ends, self.now, activate=self.__dict__.get("dynamic_sm") is None)
            self._log("link-up" if action == "restore-link" else "node-up", name,
                      "active" if self.__dict__.get("dynamic_sm") is None else "init", **extra)

        self.call_at(self.now + training, done)

    def fail_node(self, name, *, at=None):
        """Fail a switch or an HCA at *at*: all its links fail; packets in its buffers are lost
        (``node-down``); an HCA keeps its send queues."""
        node = self._node(name)
        return self.call_at(self._at(at), self._do_fail_node, node)

    def _do_fail_node(self, node) -> None:
        from ibfabric.components.failures import fail_node

        if node in self.failed_nodes:
            self._log("fail-node", self._rel(node), "already down", lost=0)
            return
        self.failed_nodes.add(node)
        self._log("fail-node", self._rel(node), "down", lost=fail_node(node, self.now))

    def restore_node(self, name, *, at=None, training=0.0):
        """Bring a failed node back at *at* with empty buffers; its links to live nodes come up
        *training* later."""
        from ibfabric.simulation import parse_time

        return self.call_at(self._at(at), self._do_restore_node, self._node(name), parse_time(training, "training"))

    def _do_restore_node(self, node, training: float) -> None:
        from ibfabric.components.failures import link_ends

        if node not in self.failed_nodes:
            self._log("restore-node", self._rel(node), "already up")
            return
        self.failed_nodes.discard(node)
        links = [link_ends(node, port) for port in sorted(node.links) if node.links[port][0] not in self.failed_nodes]
        self._up(links, self._rel(node), training, "restore-node", links_up=len(links))

    # ---------------------------------------------------------------- traffic

    def set_traffic(self, target: str = "**", *, at=None, load: float | None = None, pattern: str | None = None,
                    options: str | None = None):
        """Change the offered load and/or the traffic pattern of the hosts matching *target* (a name or
        a wildcard path such as ``"**"`` or ``"h[0..3]"``) at *at*.  A load of 0 stops their traffic;
        messages due but not created are dropped with the old source, queued ones stay."""
        from ibfabric.ned_like import match

        from ibfabric.argcheck import check_string

        check_string("set_traffic's target", target)
        check_string("set_traffic's pattern", pattern, none=True)
        check_string("set_traffic's options", options, none=True)
        if load is None and pattern is None:
            raise ConfigError("set_traffic needs a load or a pattern")
        if load is not None and (isinstance(load, bool) or not isinstance(load, (int, float))
                                 or not math.isfinite(load) or not 0 <= load <= MAX_LOAD):
            raise ConfigError(f"the load must be a number in [0, {MAX_LOAD:g}] (got {load!r})")
        if pattern:
            try:
                self.plugins.traffic_patterns.get(pattern)
            except PluginError as exc:  # an unknown name: the message lists the valid ones
                raise ConfigError(str(exc)) from None
        try:
            hosts = [self.module(target)]
        except KeyError:
            full = f"{self.root.path}.{target}"
            try:
                hosts = [h for h in self.hosts if match(target, h.path) or match(full, h.path)]
            except Exception as exc:  # a malformed pattern
                raise ConfigError(f"bad host pattern {target!r}: {exc}") from None
        hosts = [h for h in hosts if h in self.hosts]
        if not hosts:
            raise ConfigError(f"no traffic host matches {target!r}")
        return self.call_at(self._at(at), self._do_set_traffic, target, hosts, load, pattern, options)

    def _do_set_traffic(self, target, hosts, load, pattern, options) -> None:
        for h in hosts:
            retarget(h, self.now, load, pattern, options)
        what = ", ".join(x for x in (f"load {load:g}" if load is not None else "",
                                     f"pattern {pattern}" if pattern is not None else "") if x)
        self._log("set-traffic", target, f"{what} on {len(hosts)} host(s)")

    # ---------------------------------------------------------------- files and running

    def apply_events(self, events) -> None:
        """Schedule :class:`~ibfabric.scenario.Event` values (from :func:`~ibfabric.scenario.parse_events` or
        :func:`~ibfabric.scenario.load_scenario`)."""
        if isinstance(events, (str, bytes, Mapping)) or not isinstance(events, Iterable):
            raise ConfigError(f"apply_events takes a list of ibfabric.scenario.Event (got {events!r})")
        events = list(events)
        bad = next((e for e in events if not isinstance(e, Event)), None)
        if bad is not None:
            raise ConfigError(f"apply_events takes a list of ibfabric.scenario.Event (got {bad!r} in it)")
        for e in events:
            e.apply(self)

    def run_until(self, condition: Callable[[Any], bool], limit, *, every="1us", progress=False) -> dict:
        """Run until ``condition(sim)`` is true or simulation time *limit*, whichever comes first.

        The condition is checked every *every* of simulated time (one event each; 1 us by default) and
        once at the start.  Returns the summary; ``summary["stopped_by_condition"]`` says why it ended.
        """
        from ibfabric.argcheck import check_callable
        from ibfabric.simulation import parse_time

        check_callable("run_until's condition", condition)
        end = parse_time(limit, "run limit")
        step = parse_time(every, "check interval")
        if step <= 0:
            raise ConfigError("the check interval of run_until must be > 0")
        state: dict[str, Any] = {"met": False, "handle": None}

        def check():
            if condition(self):
                state["met"] = True
                self.portloop.stop()  # the current run returns at this time
            else:
                state["handle"] = self.call_at(self.now + step, check)

        state["handle"] = self.call_at(self.now, check)
        try:
            summary = self.run(end, progress=progress)
        finally:
            if state["handle"] is not None:
                state["handle"].cancel()
        summary["stopped_by_condition"] = state["met"]
        return summary


def retarget(hca, now: float, load: float | None, pattern: str | None, options: str | None) -> None:
    """Give *hca* a new pattern traffic source from *now* on, with *load* and/or *pattern* (its CBR and
    real-time sources stay).  Its generator carries on, so the run stays deterministic."""
    import numpy as np

    from ibfabric.components.hca.sources import MergedSource, SplitSource, TrafficSource

    if hca.first_port is None:
        return
    tx = hca.tx[hca.first_port]
    if load is not None:
        hca.load = float(load)
    if pattern is not None:
        hca.traffic = pattern
    if options is not None:
        hca.scenario_traffic_options = options
    old = tx.source
    members = old.sources if isinstance(old, MergedSource) else [old]
    keep = [s for s in members if s is not None and not isinstance(s, (TrafficSource, SplitSource))]
    if hca.traffic and hca.load > 0:
        sim = hca.sim
        if hca.arrival not in ("poisson", "constant"):
            raise ConfigError(f"{hca.path}: 'arrival' must be 'poisson' or 'constant' (got {hca.arrival!r})")
        src = sim.traffic_index(hca)
        opts = getattr(hca, "scenario_traffic_options", None)
        pat = sim.traffic_pattern(hca.traffic, str(hca.params["trafficOptions"]) if opts is None else opts)
        if pat.active(src):
            dlids = sim.dlids_from(hca)
            hca.path_sls = sim.path_sls_from(hca, dlids)
            if hca.path_sls is None:
                hca.source_sls = hca.traffic_sls
            else:
                hca.source_sls = sorted(set(np.delete(hca.path_sls, src).tolist()))
            hca.traffic_start = now
            cls = TrafficSource if len(hca.source_sls) == 1 or hca.path_sls is not None else SplitSource
            keep.append(cls(hca, tx, pat, src, dlids, hca.rng))
            for sl in hca.source_sls:
                tx.use_sl(sl)
    tx.source = None if not keep else keep[0] if len(keep) == 1 else MergedSource(*keep)
    tx.poke(now)
