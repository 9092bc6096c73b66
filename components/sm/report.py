"""What the dynamic subnet manager reports: its summary sections (``summary["assimilations"]``,
``summary["subnet_manager"]``), the assimilation timeline as text (what ``ibfabric run`` prints after
the scenario log), and the warning of a run that ends while an assimilation is under way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ibfabric.wording import counted

if TYPE_CHECKING:  # pragma: no cover
    from .manager import DynamicSM

__all__ = ["summary", "summary_section", "timeline_lines", "unfinished_warning"]

_STEPS = (("detected_ns", "detected"), ("started_ns", "exploration started"), ("explored_ns", "explored"),
          ("computed_ns", "computed"),
          ("distributed_ns", "distributed"), ("active_ns", "ports active"))


def summary_section(sm: DynamicSM) -> dict[str, Any]:
    """The summary's ``assimilations`` and ``subnet_manager`` of *sm*, and a warning if the run ended while
    the SM was still recovering (the SM's summary section)."""
    out = summary(sm)
    recovering = unfinished_warning(out, sm.sim.now, sm.compute_end, sm.compute_after)
    if recovering:
        sm.sim.warn(recovering)
    return out


def summary(sm: DynamicSM) -> dict[str, Any]:
    """``summary["assimilations"]`` and ``summary["subnet_manager"]`` of *sm*."""
    out = []
    for rec in sm.assimilations:
        r = {k: v for k, v in rec.items() if not k.startswith("_")}
        if "_smps0" in rec:  # still running
            r["smps"] = sm.smps_sent - rec["_smps0"]
            r["discarded"] = sm.discarded(rec)
        if r["active_ns"] is None or (r["phase2"] is not None and r["phase2"]["distributed_ns"] is None):
            r["status"] = "deadlock" if sm.sim.deadlock is not None else "in progress"
        else:
            r["status"] = "done"
        out.append(r)
    return {
        "assimilations": out,
        "subnet_manager": {
            "node": sm.host.path, "initial_sweep": sm.initial, "smps_sent": sm.smps_sent,
            "smp_retries": sm.retries, "unreachable": sm.unreachable, "traps": sm.traps,
            "smps_lost_by_reason": dict(sorted(sm.lost.items())),
        },
    }


def _us(t) -> str:
    return "-" if t is None else f"{t / 1000:,.3f} us"


def timeline_lines(summary: dict[str, Any]) -> list[str]:
    """One block of lines per assimilation of ``summary["assimilations"]``."""
    out = []
    for k, a in enumerate(summary.get("assimilations") or (), 1):
        change = a["change_ns"]
        out.append(f"assimilation {k} ({a['trigger']}, {a['engine']}, {a.get('status', '')}):"
                   f" {counted(a['nodes'], 'node')}, {counted(a['links'], 'link')}, {counted(a['smps'], 'SMP')},"
                   f" {counted(a['lft_blocks'], 'LFT block')},"
                   + (f" {counted(a['rft_blocks'], 'RFT block')}," if a.get("rft_blocks") else "")
                   + f" {a['unreachable']} unreachable")
        out.append(f"    {'change':<30} {_us(change)}")
        ref = change if change is not None else a["detected_ns"]
        for key, label in _STEPS:
            t = a[key]
            since = "" if t is None else f"  (+{(t - ref) / 1000:,.3f} us)"
            out.append(f"    {label:<30} {_us(t)}{since}")
        p2 = a.get("phase2")
        if p2 is not None:
            for key, label in (("computed_ns", f"phase 2 computed ({p2['engine']})"),
                               ("distributed_ns", f"phase 2 distributed ({counted(p2['lft_blocks'], 'LFT block')})")):
                t = p2[key]
                since = "" if t is None else f"  (+{(t - ref) / 1000:,.3f} us)"
                out.append(f"    {label:<30} {_us(t)}{since}")
    sm = summary.get("subnet_manager")
    if sm:
        lost = sum(sm["smps_lost_by_reason"].values())
        out.append(f"subnet manager on {sm['node']}: {counted(sm['smps_sent'], 'SMP')} sent, {sm['smp_retries']} retried,"
                   f" {lost} lost, {counted(sm['traps'], 'trap')}")
    return out


def _time(ns: float) -> str:
    """*ns* as ``--time`` takes it, in the largest unit that keeps it at least 1 (``1.2ms``, ``300us``)."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g}{unit}"
    return f"{ns:.3g}ns"


def unfinished_warning(summary: dict[str, Any], now: float, compute_end: float | None,
                       compute_after: float = 0.0) -> str | None:
    """The warning of a run that ends while the dynamic subnet manager is still assimilating a change,
    or None: how long it has been at it, the step it is in, when a computation under way ends, and a
    longer ``--time`` to try (twice the time it is known to need).

    Parameters
    ----------
    summary : dict
        The run's summary, with ``assimilations``.
    now : float
        The time the run ended, in ns.
    compute_end : float or None
        When the computation under way, if any, ends (``DynamicSM.compute_end``).
    compute_after : float
        The computation still to come once the tables are distributed (the ns of a hybrid's
        phase 2, ``DynamicSM.compute_after``), counted in the time it needs.
    """
    pending = [(k, a) for k, a in enumerate(summary.get("assimilations") or (), 1) if a.get("status") == "in progress"]
    if not pending:
        return None
    k, a = pending[-1]
    start = a["change_ns"] if a["change_ns"] is not None else a["detected_ns"]
    p2 = a.get("phase2")
    need = now
    if p2 is None and compute_after > 0:
        need += compute_after
    if a["explored_ns"] is None:
        step = f"still exploring the subnet ({_us(now - a['started_ns'])} so far)"
    elif a["computed_ns"] is None:
        step = "computing its routes"
        if compute_end is not None:
            step += f" until {_us(compute_end)}, then distributing them"
            need = compute_end + compute_after
        if compute_after > 0:
            step += f" (and {_us(compute_after)} of computation for its final routes after that)"
    elif a["active_ns"] is None:
        step = f"distributing its tables and activating ports (since {_us(a['computed_ns'])})"
    elif p2 is not None and p2["computed_ns"] is None:
        step = "computing its final routes (phase 2)"
        if compute_end is not None:
            step += f" until {_us(compute_end)}, then distributing them"
            need = compute_end
    else:
        step = "distributing its final tables (phase 2)"
    return (f"the run ended while the dynamic subnet manager was still recovering: assimilation {k} ({a['trigger']},"
            f" {a['engine']}) has been at it for {_us(now - start)} since the change at {_us(start)} and is {step};"
            f" the routes measured were changing: run longer, e.g. --time {_time(2 * need)}")

