"""``ibfabric routes --compare`` and ``--check`` with virtual layers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibfabric.cli import main
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.plugins.routing import minhop, sssp
from ibfabric.topologies.generators import fat_tree, to_ned, torus


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def tree_ned(tmp_path):
    path = tmp_path / "tree.ned"
    path.write_text(to_ned(fat_tree(4, 2), name="tree"))
    return str(path)


def row(out: str, engine: str) -> list[str]:
    line = next(ln for ln in out.splitlines() if ln.strip("│ ").startswith(engine + " "))
    return [c.strip() for c in line.strip().strip("│").split("│")]


class TestCompare:
    def test_one_row_per_engine_with_the_figures(self, capsys, tree_ned):
        code, out, err = run(capsys, "routes", tree_ned, "--compare", "minhop", "ftree", "dfsssp", "lash")
        assert code == 0, err
        ft, mh, df = row(out, "ftree"), row(out, "minhop"), row(out, "dfsssp")
        # engine, time, hops mean, hops max, routes max, mean, up, down, uniform, shift worst, shift mean, SLs, VLs, free
        assert ft[3] == "4" and ft[9] == "1" and ft[11:] == ["1", "1", "yes"]
        assert int(mh[4]) > int(ft[4]) and float(mh[8]) > float(ft[8])
        assert df[11] == "8" and df[13] == "yes"
        assert "up/down" in out

    def test_compare_and_check_say_which_pairs_their_hops_average(self, capsys, tree_ned):
        # the same engine, two means: CA-to-CA routes in --compare, every pair of endpoints in --check
        code, out, _ = run(capsys, "routes", tree_ned, "--compare", "minhop")
        assert code == 0
        assert "hops: links per route, over the routes between CAs only ('routes --check' counts every ordered" in out
        compare_mean = float(row(out, "minhop")[2])
        code, out, _ = run(capsys, "routes", tree_ned, "--routing", "minhop", "--check")
        (pairs,) = [ln for ln in out.splitlines() if ln.startswith("pairs:")]
        assert pairs.endswith("(ordered pairs of endpoints, switches included: the hops and loads below are over them)")
        check_mean = float(next(ln for ln in out.splitlines() if ln.startswith("hops:")).split()[2].rstrip(","))
        assert check_mean != compare_mean

    def test_an_engine_that_refuses_the_fabric_is_a_row_and_a_line(self, capsys, tmp_path):
        path = tmp_path / "ring.ned"
        path.write_text(to_ned(torus((5,)), name="ring"))
        code, out, _ = run(capsys, "routes", str(path), "--compare", "ftree", "minhop")
        assert code == 0
        assert row(out, "ftree")[-1] == "failed (below)"
        assert "ftree: routing engine 'ftree': not a fat-tree" in out
        assert row(out, "minhop")[-1] == "NO"

    def test_unknown_engine_is_a_one_line_error(self, capsys, tree_ned):
        assert run(capsys, "routes", tree_ned, "--compare", "minhop", "nosuch")[0] != 0


class TestCheckPerLayer:
    def test_dfsssp_is_checked_per_vl(self, capsys, tmp_path):
        path = tmp_path / "ring.ned"
        path.write_text(to_ned(torus((5,)), name="ring"))
        code, out, _ = run(capsys, "routes", str(path), "--routing", "dfsssp", "--check")
        assert code == 0 and "acyclic" in out and "virtual layers:" in out and "checked per VL" in out
        code, out, _ = run(capsys, "routes", str(path), "--routing", "sssp", "--check")
        assert code == 1 and "CYCLE" in out


class TestPathSLs:
    def test_tables_carry_path_sls_and_check_their_shape(self):
        g = torus((5,)).with_lids()
        t = sssp.compute_dfsssp(g, {})
        c = t.copy()
        assert (c.path_sl == t.path_sl).all() and c.sl2vl == t.sl2vl
        src = g.endpoint_of(g.index("h0_0"))
        dst = g.endpoint_of(g.index("h3_0"))
        assert t.sls(src, g.ep_lid[dst]) == t.path_sl[g.switch_row[g.index("sw0")], g.ep_lid[dst]]
        assert minhop.compute(g, {}).sls([src], [g.ep_lid[dst]]).tolist() == [0]
        with pytest.raises(ValueError, match="path_sl must have shape"):
            ForwardingTables(g, t.lft, path_sl=t.path_sl[:, :3], sl2vl=t.sl2vl)
        with pytest.raises(ValueError, match="needs sl2vl"):
            ForwardingTables(g, t.lft, path_sl=t.path_sl)


class TestEveryLid:
    def test_multipath_named_paths_are_checked_only_with_every_lid(self, capsys):
        # Kim's 15-switch fabric: the default route (SPF) alone is acyclic, the named paths around its triangles are not
        ned = str(Path(__file__).resolve().parents[2] / "topologies" / "kim2007_15.ned")
        code, out, _ = run(capsys, "routes", ned, "--routing", "multipath", "--lmc", "7", "--check")
        assert code == 0 and "acyclic" in out and out.splitlines()[1].startswith("pairs:")
        code, out, _ = run(capsys, "routes", ned, "--routing", "multipath", "--lmc", "7", "--check", "--every-lid")
        assert code == 1 and "CYCLE" in out and out.splitlines()[1].startswith("routes:")

    def test_path_sls_cannot_be_walked_per_lid(self, capsys, tmp_path):
        path = tmp_path / "ring.ned"
        path.write_text(to_ned(torus((5,)), name="ring"))
        code, _, err = run(capsys, "routes", str(path), "--routing", "dfsssp", "--check", "--every-lid")
        assert code != 0 and "--every-lid" in err and "Traceback" not in err
