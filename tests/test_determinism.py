"""The same seed gives the same results, in separate processes with different hash seeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

TIMING = ("wall_s", "events_per_s", "packet_hops_per_s", "routing_time_s")


def summary(hashseed: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    proc = subprocess.run([sys.executable, "-m", "ibfabric", "run", "--json", "--no-progress", *args],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    for key in TIMING:
        s.pop(key, None)
    return s


def test_default_scenario_across_hash_seeds():
    a = summary("0", "--time", "60us")
    b = summary("12345", "--time", "60us")
    assert a == b and a["packets_delivered"] > 1000


def test_multi_sl_generated_fabric_across_hash_seeds(tmp_path):
    ned = tmp_path / "g.ned"
    from ibfabric.cli import main

    assert main(["topo", "generate", "irregular", "--switches", "12", "--links-per-switch", "3",
                 "--hosts-per-switch", "2", "--seed", "4", "-o", str(ned)]) == 0
    args = (str(ned), "--routing", "dr", "--time", "40us", "--load", "0.3", "--set", '**.sl="0..3"',
            "--set", "**.numVLs=4", "--seed", "9")
    assert summary("1", *args) == summary("999", *args)
