"""The assimilation timeline as text (what ``ibfabric run`` prints after the scenario log)."""

from __future__ import annotations

from typing import Any

from ibfabric.wording import counted

__all__ = ["timeline_lines"]

_STEPS = (("detected_ns", "detected"), ("started_ns", "exploration started"), ("explored_ns", "explored"),
          ("computed_ns", "computed"),
          ("distributed_ns", "distributed"), ("active_ns", "ports active"))


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
