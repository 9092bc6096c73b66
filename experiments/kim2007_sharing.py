"""Kim et al. 2007, Figs. 7-8: where the path selectors put best effort, as real time meets it.

Only best effort has path options (real time and control take the shortest
path), so a selector (LFU, Max-Credit, LFU counting the port) can change real
time's latency only through where it puts best effort: a switch output port
that serves a best-effort packet while a real-time VL of the port is ready
makes that real-time packet wait (the VL arbiter serves the data VLs round
robin).  This script runs the runs of a Kim experiment file (those with the
``name=value`` given; ``scheme=mp+lfu+drop,mp+credit+drop`` takes either)
with the VL arbiters replaced by a counting one (``iba-vlarb`` registered
under another name, which records its choices and nothing else) and prints,
per run, at the switches' output ports: the real-time and best-effort
packets sent, how often a best-effort packet went while real time was ready
(per real-time packet sent), the share of best effort on the ports real
time uses (weighted by real time's packets there), and the mean latency of
real time, best effort and control::

    python experiments/kim2007_sharing.py experiments/kim2007_paper_selectors_fig7_cut.toml load=0.5 repetition=0

An argument ``**.parameter=value`` changes a parameter of every run (it
replaces the file's value of that pattern, and comes before the others:
the first match wins).  With real time in
the high-priority VLArbitrationTable best effort no longer takes a turn
while real time is ready, so whatever the selectors still do to real time
goes another way::

    python experiments/kim2007_sharing.py experiments/kim2007_paper_selectors_fig7_cut.toml load=0.5 repetition=0 \
        '**.vlArbHigh=4:64,5:64,6:64,7:64,8:64,9:64,10:64,11:64,12:64,13:64,14:64' \
        '**.vlArbLow=0:64,1:64,2:64,3:64' '**.vlArbHighLimit=255'

``--control`` prints instead where the control packets' time went: per
control packet, its wait at the source and at the switches' output ports
(from ready to its first bit on the link), and the part of the switches'
wait during which the link was sending a best-effort, real-time or control
packet (control, on VL15, goes before the data VLs but not before the
packet the link is already sending)::

    python experiments/kim2007_sharing.py experiments/kim2007_paper_control_fig7_cut.toml load=0.5 --control

With two schemes it then prints the first minus the second, run by run
(``--differences FILE`` prints that table from a ``--control`` table kept
in FILE).

The runs are those of ``ibfabric sweep`` (same parameters, seed and window;
the choices are the same, so the results are: the latencies printed with
each row equal the sweep's run's).
"""

from __future__ import annotations

import sys
import types
from collections import Counter

from ibfabric.measure import TRAFFIC_CLASSES
from ibfabric.plugins.arbiters import IBAVLArbiter
from ibfabric.plugins.manager import hookimpl

#: The best-effort VLs of the kim2007-traffic configuration (SLs = VLs 0-3); real time has the others.
BEST_EFFORT_VLS = range(4)
#: Per switch output port: real-time packets sent, best-effort packets sent, best-effort packets sent while a
#: real-time VL was ready.
PORTS: dict[str, Counter] = {}


class CountingArbiter(IBAVLArbiter):
    """``iba-vlarb`` that counts, per choice at a switch port, the class sent and whether real time was ready
    when best effort went."""

    def __init__(self, config):
        super().__init__(config)
        self.counts = PORTS.setdefault(config.port, Counter()) if ".sw" in config.port else None

    def select(self, ready: list) -> int:
        vl = self._select(ready)  # the table walk: the choice and the state select() and select_one() reach
        c = self.counts
        if c is not None:
            if vl in BEST_EFFORT_VLS:
                c["best effort"] += 1
                if any(p is not None for p in ready[BEST_EFFORT_VLS.stop:]):
                    c["best effort while real time ready"] += 1
            else:
                c["real time"] += 1
        return vl

    def select_one(self, ready: list, vl: int) -> int:
        """The data path's call when VL *vl* alone is ready: counted as any other choice."""
        return self.select(ready)


@hookimpl
def ibfabric_register_vl_arbiters(register) -> None:
    register("iba-vlarb-sharing", CountingArbiter,
             description="iba-vlarb, counting best effort beside real time (experiments/kim2007_sharing.py)")


#: The plugin the runs load: this module's hook.
plugin = types.SimpleNamespace(ibfabric_register_vl_arbiters=ibfabric_register_vl_arbiters)

#: Packet classes (:data:`ibfabric.measure.TRAFFIC_CLASSES`): what a control packet's wait is spent behind.
CLASS_NAMES = {i: name.replace("_", " ") for i, name in enumerate(TRAFFIC_CLASSES)}
CONTROL = TRAFFIC_CLASSES.index("control")
#: Control packets' waits (``--control``), summed over the control packets created in the window:
#: ``packets``; per place (``source``: the source HCA's port, ``switch``: the switches' output ports) the
#: wait from ready (created at the source, routed at a switch) to its first bit on the link, and the part of
#: it the port's link spent sending a packet of each class (``source behind best effort``, ...).
CONTROL_WAITS: Counter = Counter()


def watch_control(tx, waits: Counter, history: int = 16) -> None:
    """Wrap output port *tx*'s ``launch`` (as congestion control's marker does) to add to *waits*, for each
    control packet it sends, the wait since the packet was ready there and how long the link sent each class
    meanwhile (from the port's last *history* transmissions: more than a wait can span)."""
    from collections import deque

    launch = tx.launch
    sent: deque = deque(maxlen=history)
    place = "switch" if ".sw" in tx.name_ else "source"

    def counting_launch(p, vl: int, now: float, end: float) -> None:
        if p.cls == CONTROL and p.created >= tx.window:
            ready = p.ready_at if place == "switch" else p.created
            waits[place] += now - ready
            if place == "source":
                waits["packets"] += 1
            for start, stop, cls in sent:
                overlap = min(stop, now) - max(start, ready)
                if overlap > 0:
                    waits[f"{place} behind {CLASS_NAMES[cls]}"] += overlap
        sent.append((now, end, p.cls))
        launch(p, vl, now, end)

    tx.launch = counting_launch


@hookimpl
def ibfabric_simulation_built(simulation) -> None:
    for tx in simulation.ports:
        watch_control(tx, CONTROL_WAITS)


#: The plugin of ``--control`` runs: the counting arbiter and the control packets' waits.
control_plugin = types.SimpleNamespace(ibfabric_register_vl_arbiters=ibfabric_register_vl_arbiters,
                                       ibfabric_simulation_built=ibfabric_simulation_built)


def run(spec, extra: list[tuple[str, object]] = (), control: bool = False) -> dict:
    """The run with the counting arbiter and the ``**.parameter=value`` changes *extra* (each replacing the
    file's value of its pattern: :meth:`~ibfabric.runspec.RunSpec.simulation`); *control*: the control
    packets' waits too (:data:`CONTROL_WAITS`)."""
    overrides = [*extra, ("**.arbiter", "iba-vlarb-sharing")]
    plugins = [control_plugin if control else plugin]
    return spec.simulation(overrides=overrides, plugins=plugins).run(spec.time)


def control_waits(waits: Counter) -> dict[str, float]:
    """:data:`CONTROL_WAITS` per control packet (ns): the source's and the switches' waits and the parts of
    them spent behind each class's packets on the link; ``other``: what the switches' wait leaves (crossing,
    an input's crossbar connection busy)."""
    n = waits["packets"]
    if not n:
        return {"packets": 0}
    out = {"packets": n, **{k: v / n for k, v in waits.items() if k != "packets"}}
    out["switch other"] = out.get("switch", 0.0) - sum(v for k, v in out.items() if k.startswith("switch behind"))
    return out


def sharing(ports: dict[str, Counter]) -> dict[str, float]:
    """The counts of all switch ports: totals, best effort passing ready real time per real-time packet, and
    the best-effort share of a port's packets averaged over real time's packets."""
    rt = sum(c["real time"] for c in ports.values())
    be = sum(c["best effort"] for c in ports.values())
    passed = sum(c["best effort while real time ready"] for c in ports.values())
    share = sum(c["real time"] * c["best effort"] / (c["real time"] + c["best effort"])
                for c in ports.values() if c["real time"]) / rt if rt else 0.0
    return {"real time": rt, "best effort": be, "passed": passed / rt if rt else 0.0, "share": share}


def print_control(specs, extra) -> int:
    """``--control``: per run, the control packets' latency and where their waits went (:func:`control_waits`)."""
    print("| load | scheme | repetition | control packets | latency (us) | source wait (ns) "
          "| switches' wait (ns) | of it behind best effort | behind real time | behind control | other |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for spec in specs:
        v = dict(spec.vars)
        PORTS.clear()
        CONTROL_WAITS.clear()
        summary = run(spec, extra, control=True)
        w = control_waits(CONTROL_WAITS)
        lat = summary["by_class"]["control"]["latency_ns"]["mean"] / 1e3
        cells = [w.get(k, 0.0) for k in ("source", "switch", "switch behind best effort", "switch behind real time",
                                         "switch behind control", "switch other")]
        row = (f"| {v.get('load')} | {v.get('scheme')} | {spec.repetition} | {w['packets']:,} | {lat:.2f} | "
               + " | ".join(f"{c:,.0f}" for c in cells) + " |")
        rows.append(row)
        print(row, flush=True)
    diff = control_differences(read_control_table(rows))
    if diff:
        print("\n" + "\n".join(diff))
    return 0


#: The columns of ``--control``'s table after load, scheme and repetition.
CONTROL_COLUMNS = ("packets", "latency", "source", "switch", "behind best effort", "behind real time",
                   "behind control", "other")


def read_control_table(lines) -> list[dict]:
    """The rows of a table ``--control`` printed: load, scheme, repetition and :data:`CONTROL_COLUMNS` (latency
    in ns, from the table's us)."""
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 + len(CONTROL_COLUMNS) or not cells[2].isdigit():
            continue  # the header, its rule, anything else
        values = [float(c.replace(",", "")) for c in cells[3:]]
        values[1] *= 1e3
        rows.append({"load": cells[0], "scheme": cells[1], "repetition": int(cells[2]),
                     **dict(zip(CONTROL_COLUMNS, values))})
    return rows


def control_differences(rows: list[dict]) -> list[str]:
    """Per load and repetition, the first scheme of *rows* minus the second, column by column (ns): a table.
    The latency's difference against the sum of the waits' says whether the waits measured hold it."""
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    if len(schemes) < 2:
        return []
    a, b = schemes[:2]
    by = {(r["load"], r["repetition"], r["scheme"]): r for r in rows}
    cols = CONTROL_COLUMNS[1:]
    out = [f"| load | repetition | {a} minus {b} (ns): latency | source wait | switches' wait | behind best effort "
           "| behind real time | behind control | other |", "|---" * (2 + len(cols)) + "|"]
    for load, rep in dict.fromkeys((r["load"], r["repetition"]) for r in rows):
        if (load, rep, a) in by and (load, rep, b) in by:
            d = [by[load, rep, a][c] - by[load, rep, b][c] for c in cols]
            out.append(f"| {load} | {rep} | " + " | ".join(f"{x:+,.0f}" for x in d) + " |")
    return out if len(out) > 2 else []


def main(argv: list[str]) -> int:
    if argv[:1] == ["--differences"] and len(argv) == 2:
        from pathlib import Path

        print("\n".join(control_differences(read_control_table(Path(argv[1]).read_text().splitlines()))))
        return 0
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    from ibfabric.experiment import Experiment

    control = "--control" in argv[1:]
    args = [a for a in argv[1:] if a != "--control"]
    exp = Experiment.from_file(argv[0])
    extra = [(k, int(v) if v.isdigit() else v) for k, v in (a.split("=", 1) for a in args if a.startswith("**."))]
    want = {k: v.split(",") for k, v in (a.split("=", 1) for a in args if not a.startswith("**."))}
    specs = [s for s in exp.runs() if all(str({**dict(s.vars), "repetition": s.repetition}.get(k)) in v
                                          for k, v in want.items())]
    if not specs:
        print(f"no run of {argv[0]} has {' '.join(f'{k}={v}' for k, v in want.items())}", file=sys.stderr)
        return 1
    if control:
        return print_control(specs, extra)
    print("| load | scheme | repetition | real-time packets sent | best-effort packets sent "
          "| best effort sent while real time was ready, per real-time packet "
          "| best-effort share of the ports real time uses | latency: real time / best effort / control (us) |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in specs:
        v = dict(spec.vars)
        PORTS.clear()
        summary = run(spec, extra)
        s = sharing(PORTS)
        lat = {cls: summary["by_class"][cls]["latency_ns"]["mean"] / 1e3
               for cls in ("real_time", "best_effort", "control")}
        print(f"| {v.get('load')} | {v.get('scheme')} | {spec.repetition} | {s['real time']:,} | "
              f"{s['best effort']:,} | {s['passed']:.4f} | {s['share']:.4f} | "
              f"{lat['real_time']:.1f} / {lat['best_effort']:.1f} / {lat['control']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
