"""Smoke test of the Alfaro et al. 2001 reproduction script (a short delay run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_alfaro2001_delay_run(tmp_path):
    out = tmp_path / "res.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "alfaro2001.py"), "--quick", "--only", "delay",
         "--topology", "irregular", "--packet-size", "256", "--jobs", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (job,) = json.loads(out.read_text())["jobs"]
    assert job["kind"] == "delay" and job["conservation_ok"]
    assert 0 < job["established"] <= job["tried"]
    # Figs. 8-9: the two lowest-bandwidth SLs see delays far below their inter-arrival time
    for sl in ("0", "1"):
        assert job["per_sl"][sl]["packets"] > 0
        assert job["per_sl"][sl]["delay_under"]["IAT/32"] == 1.0
    assert "Figs. 8-9" in proc.stdout


def test_congestion_control_quick_run():
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "congestion_control.py"), "--quick"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| two-switch") or line.startswith("| fattree")]
    assert len(rows) == 4  # each fabric with congestion control off and on
    # the two-switch victim gains with congestion control even in this short run
    off, on = (float(r.split("|")[3]) for r in rows[:2])
    assert on > 1.5 * off
