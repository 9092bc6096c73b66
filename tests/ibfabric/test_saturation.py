"""The saturation search takes its load range from [saturation]: the variable it searches need not be
listed in [iterations] too (issue 35, item 9)."""

from __future__ import annotations

import pytest

from ibfabric.errors import ConfigError
from ibfabric.experiment import Experiment
from ibfabric.saturation import saturation_search
from ibfabric.sweep import Sweep

from .test_measure import TREE32

TEXT = """
[experiment]
name = "tree"
topology = "tree32.ned"
time = "60us"
warmup = "20us"

[parameters]
"**.traffic" = "uniform"
"**.load" = "${load}"
"**.routing" = "minhop"
"**.outputBufferSize" = "${obuf}"

[iterations]
obuf = ["4KiB"]

[saturation]
variable = "load"
low = 0.05
high = 0.5
tolerance = 0.2
max_runs = 3
"""


def experiment(tmp_path, text=TEXT) -> Experiment:
    (tmp_path / "tree32.ned").write_text(TREE32)
    (tmp_path / "tree.toml").write_text(text)
    return Experiment.from_file(tmp_path / "tree.toml")


class TestSearchedVariable:
    def test_declared_by_saturation_alone(self, tmp_path):
        exp = experiment(tmp_path)
        assert exp.saturation["variable"] == "load"
        assert exp.variables == ["obuf", "load"] and exp.values("load") == [0.05, 0.5]  # a sweep runs the bounds
        assert exp.points(exclude=("load",)) == [{"obuf": "4KiB"}]
        (res,) = saturation_search(Sweep(exp, tmp_path / "out"))
        assert res["probes"] == 3 and res["status"] in ("ok", "max_runs reached", "saturated at low")
        assert res["saturation_load_low"] is None or 0.05 <= res["saturation_load_low"] < 0.5

    def test_the_same_as_listing_it(self, tmp_path):
        implicit = experiment(tmp_path)
        listed = Experiment.from_text(TEXT.replace('obuf = ["4KiB"]', 'obuf = ["4KiB"]\nload = [0.05, 0.5]'),
                                      "x.toml", base_dir=tmp_path)
        assert [r.run_id for r in implicit.runs()] == [r.run_id for r in listed.runs()]

    def test_a_variable_the_file_does_not_use_is_refused(self, tmp_path):
        with pytest.raises(ConfigError, match=r"unknown variable '\$\{load\}' \(iteration variables: obuf;"):
            experiment(tmp_path, TEXT.replace('variable = "load"', 'variable = "lod"'))
        with pytest.raises(ConfigError, match="'variable' must name an iteration variable \\(got 'lod'\\)"):
            experiment(tmp_path, TEXT.replace('variable = "load"', 'variable = "lod"').replace(
                'obuf = ["4KiB"]', 'obuf = ["4KiB"]\nload = [0.1]'))
