"""A fat-tree routed by ftree carries uniform traffic like a single crossbar of the same hosts."""

from __future__ import annotations

import json

from ibfabric.cli import main
from ibfabric.topologies.generators import fat_tree, to_ned


def accepted(tmp_path, name, fabric, routing):
    path = tmp_path / f"{name}.ned"
    path.write_text(to_ned(fabric, name=name))
    out = tmp_path / f"out_{name}_{routing}"
    assert main(["run", str(path), "--routing", routing, "--load", "0.5", "--time", "60us", "--seed", "3",
                 "--out", str(out)]) == 0
    return json.loads((out / "summary.json").read_text())["accepted_load"]


def test_4ary_3tree_at_half_load_accepts_what_a_crossbar_does(tmp_path, capsys):
    # 64 hosts: the 4-ary 3-tree (48 switches of 8 ports) against one 128-port switch
    crossbar = accepted(tmp_path, "xbar", fat_tree(64, 1), "minhop")
    tree = accepted(tmp_path, "tree", fat_tree(4, 3), "ftree")
    assert crossbar > 0.45
    assert tree >= 0.95 * crossbar
    # minhop on the same tree concentrates routes and saturates well below
    assert accepted(tmp_path, "tree", fat_tree(4, 3), "minhop") < 0.9 * crossbar
