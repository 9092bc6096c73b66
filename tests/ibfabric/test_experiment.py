"""Experiment files: values, expansion into runs, seeds, run ids, topologies and located errors."""

from __future__ import annotations

import doctest
import hashlib
import importlib
import math
import pickle
import re
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric.errors import ConfigError
from ibfabric.experiment import Experiment, ExperimentError, RunSpec
from ibfabric.iterations import derive_seed, parse_values
from ibfabric.topologies import SHIPPED, load_network, shipped

HEAD = """\
[experiment]
name = "t"
topology = "irregular16"
time = "10us"
"""


def load(text: str, **kw) -> Experiment:
    return Experiment.from_text(text, "exp.toml", **kw)


def error(text: str, **kw) -> str:
    with pytest.raises(ExperimentError) as info:
        load(text, **kw)
    return str(info.value)


@pytest.mark.parametrize("module", ["ibfabric.experiment", "ibfabric.iterations"])
def test_doctests(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


class TestParseValues:
    def test_decimal_ranges_are_exact(self):
        values = parse_values("0.1..0.9 step 0.1")
        assert values == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
        assert all(type(v) is float for v in values)

    @pytest.mark.parametrize("text, values", [
        ("1..5", [1, 2, 3, 4, 5]),                 # step 1, ints when all three are written as integers
        ("0..10 step 5", [0, 5, 10]),
        ("1..10 step 4", [1, 5, 9]),               # 10 is not landed on
        ("-2..2 step 2", [-2, 0, 2]),
        ("3..3", [3]),
        ("0..1 step 0.25", [0.0, 0.25, 0.5, 0.75, 1.0]),
        ("0.5..2.5", [0.5, 1.5, 2.5]),
        ("1e-1..3e-1 step 1e-1", [0.1, 0.2, 0.3]),
        ("0..1 step 0.3333333333333", [0.0, 0.3333333333333, 0.6666666666666, 0.9999999999999]),  # lands within 1e-9
    ])
    def test_ranges(self, text, values):
        got = parse_values(text)
        assert got == values and [type(v) for v in got] == [type(v) for v in values]

    @pytest.mark.parametrize("value, values", [
        (["updn", "minhop"], ["updn", "minhop"]), ([1, 2.5, True], [1, 2.5, True]),
        (16, [16]), (0.5, [0.5]), (False, [False]), ("uniform", ["uniform"]), ("../b.ned", ["../b.ned"]),
    ])
    def test_lists_and_scalars(self, value, values):
        assert parse_values(value) == values

    @pytest.mark.parametrize("value, message", [
        ([], "empty list"), ("2..1", "empty"), ("0..1 step 0", "step must be positive"),
        ("0..1 step -0.5", "step must be positive"), ("0..1000000", "more than 100000 values"),
        ("0..1 step 1e-999999", "more than 100000 values"), ("1..2 stp 1", "expected 'a..b'"),
        ([[1, 2]], "strings, numbers or booleans"), ({"a": 1}, "got a table"),
    ])
    def test_errors(self, value, message):
        with pytest.raises(ExperimentError, match=message):
            parse_values(value, "f.toml:3:5")
        with pytest.raises(ExperimentError, match=r"^f\.toml:3:5: "):
            parse_values(value, "f.toml:3:5")


class TestExpansion:
    def test_cartesian_product_first_variable_slowest_repetition_innermost(self):
        exp = load(HEAD + 'repeat = 2\n[parameters]\n"**.a" = "${a}"\n"**.b" = "${b}"\n[iterations]\na = [1, 2]\nb = ["x", "y", "z"]\n')
        runs = exp.runs()
        assert len(exp) == len(runs) == 12
        assert [(dict(r.vars), r.repetition) for r in runs[:4]] == [
            ({"a": 1, "b": "x"}, 0), ({"a": 1, "b": "x"}, 1), ({"a": 1, "b": "y"}, 0), ({"a": 1, "b": "y"}, 1)]
        assert [dict(r.vars) for r in runs[::2]] == [{"a": a, "b": b} for a in (1, 2) for b in "xyz"]
        assert exp.variables == ["a", "b"] and exp.values("b") == ["x", "y", "z"]

    def test_together_zips_at_the_place_of_its_first_member(self):
        text = HEAD.replace('time = "10us"\n', 'time = "10us"\ntogether = [["buffer", "size"]]\n') + (
            '[iterations]\nsize = [256, 4096]\nload = [0.1, 0.2, 0.3]\nbuffer = ["1KiB", "16KiB"]\n')
        exp = load(text)
        assert len(exp) == 6
        assert exp.points() == [{"size": s, "load": x, "buffer": b} for s, b in [(256, "1KiB"), (4096, "16KiB")] for x in (0.1, 0.2, 0.3)]

    def test_together_needs_equal_lengths(self):
        text = HEAD + 'together = [["size", "buffer"]]\n[iterations]\nsize = [256, 4096]\nbuffer = ["1KiB"]\n'
        msg = error(text)
        assert msg.startswith("exp.toml:5:12: ") and "'size' has 2, 'buffer' has 1" in msg

    def test_points_exclude_and_deduplicate(self):
        exp = load(HEAD + "[iterations]\nload = [0.1, 0.2]\nrouting = ['updn', 'minhop']\n")
        assert exp.points(exclude=["load"]) == [{"routing": "updn"}, {"routing": "minhop"}]
        assert exp.points(exclude="routing") == [{"load": 0.1}, {"load": 0.2}]
        with pytest.raises(ExperimentError, match="no iteration variable 'x'"):
            exp.points(exclude=["x"])

    def test_equal_values_of_different_types_stay_distinct(self):
        assert len(load(HEAD + "[iterations]\nx = [1, 1.0, true, '1', 1]\n")) == 4

    def test_unused_variable_still_multiplies_runs(self):
        exp = load(HEAD + "repeat = 2\n[iterations]\nunused = [1, 2, 3]\n")
        assert len(exp) == 6 and len({r.run_id for r in exp.runs()}) == 2  # the same configuration, twice per repetition

    def test_run_with_a_value_outside_the_list(self):
        exp = load(HEAD + '[parameters]\n"**.load" = "${load}"\n[iterations]\nload = "0.1..0.3 step 0.1"\nrouting = ["updn"]\n')
        run = exp.run({"load": 0.55, "routing": "updn"}, 1)
        assert run.overrides == (("**.load", "0.55"),) and run.repetition == 1 and run.seed == derive_seed(1, 1)
        with pytest.raises(ExperimentError, match="needs a value for iteration variable 'routing'"):
            exp.run({"load": 0.5}, 0)
        with pytest.raises(ExperimentError, match="no iteration variable 'lod'"):
            exp.run({"load": 0.5, "routing": "updn", "lod": 1}, 0)
        with pytest.raises(ExperimentError, match="repetition must be a non-negative integer"):
            exp.run({"load": 0.5, "routing": "updn"}, -1)

    def test_simulation_with_overrides_and_plugins(self):
        """RunSpec.simulation(overrides=..., plugins=...): an override replaces the run's own value of its
        pattern (which the first-match rule would otherwise let shadow it, or leave unused) and the plugins are
        loaded besides the installed ones."""
        import types

        from ibfabric.plugins.arbiters import IBAVLArbiter
        from ibfabric.plugins.manager import hookimpl

        run = load(HEAD + '[parameters]\n"**.traffic" = "uniform"\n"**.load" = "0.1"\n"**.packetSize" = "128B"\n').runs()[0]
        assert run.simulation().hosts[0].load == 0.1
        plugin = types.SimpleNamespace(ibfabric_register_vl_arbiters=hookimpl(
            lambda register: register("iba-vlarb-again", IBAVLArbiter, description="iba-vlarb, again")))
        sim = run.simulation(overrides=[("**.load", 0.3), ("**.arbiter", "iba-vlarb-again")], plugins=[plugin])
        assert sim.hosts[0].load == 0.3
        assert "iba-vlarb-again" in sim.plugins.vl_arbiters

    def test_no_iterations_is_one_run_per_repetition(self):
        exp = load(HEAD + "repeat = 3\n")
        assert len(exp) == 3 and exp.points() == [{}] and exp.runs()[0].iterationvars == ""

    def test_defaults_and_saturation(self):
        exp = load(HEAD + "[iterations]\nload = [0.5]\n[saturation]\nvariable = 'load'\nlow = 0.1\nhigh = 1\n")
        run = exp.runs()[0]
        assert (exp.name, exp.repeat, exp.seed, exp.path) == ("t", 1, 1, None)
        assert (run.warmup, run.network, run.time, run.generator) == ("0ns", None, "10us", None)
        assert exp.saturation == {"variable": "load", "low": 0.1, "high": 1.0, "tolerance": 0.01, "max_runs": 8, "threshold": 0.95}


class TestSeeds:
    def test_derived_from_base_and_repetition_only(self):
        want = int(np.random.SeedSequence([7, 2]).generate_state(1, dtype=np.uint32)[0])
        assert derive_seed(7, 2) == want
        exp = load(HEAD + "seed = 7\nrepeat = 3\n[parameters]\n'**.load' = '${load}'\n[iterations]\nload = [0.1, 0.2]\n")
        seeds = {(dict(r.vars)["load"], r.repetition): r.seed for r in exp.runs()}
        assert seeds[0.1, 2] == seeds[0.2, 2] == want  # common random numbers across configurations
        assert len({seeds[0.1, r] for r in range(3)}) == 3

    def test_base_seed_changes_every_seed(self):
        assert {derive_seed(1, r) for r in range(5)}.isdisjoint({derive_seed(2, r) for r in range(5)})

    @pytest.mark.parametrize("base, rep", [(-1, 0), (0, -1), (True, 0), (1, True), (1.5, 0)])
    def test_bad_arguments(self, base, rep):
        with pytest.raises(ExperimentError):
            derive_seed(base, rep)


class TestRunId:
    TEXT = HEAD + 'warmup = "1us"\n[parameters]\n"**.load" = "${load}"\n"**.traffic" = "uniform"\n[iterations]\nload = [0.1, 0.2]\n'

    def test_stable(self):
        a, b = load(self.TEXT).runs(), load(self.TEXT).runs()
        assert [r.run_id for r in a] == [r.run_id for r in b]
        assert pickle.loads(pickle.dumps(a[0])).run_id == a[0].run_id
        assert re.fullmatch(r"[0-9a-f]{16}", a[0].run_id)

    def test_equal_when_only_names_differ(self):
        renamed = self.TEXT.replace('name = "t"', 'name = "other"').replace("${load}", "${x}").replace("load =", "x =")
        a, b = load(self.TEXT).runs()[0], load(renamed).runs()[0]
        assert a.run_id == b.run_id and a.config()["experiment"] != b.config()["experiment"]

    @pytest.mark.parametrize("old, new", [
        ('"uniform"', '"hotspot"'), ('time = "10us"', 'time = "11us"'), ('warmup = "1us"', 'warmup = "2us"'),
        ('name = "t"', 'name = "t"\nseed = 2'), ('"irregular16"', '"bermudez2006_fig1"'),
        ('"**.traffic"', '"**.pattern"'), ('name = "t"', 'name = "t"\nnetwork = "Irregular16"'),
    ])
    def test_differs_when_the_configuration_differs(self, old, new):
        assert load(self.TEXT).runs()[0].run_id != load(self.TEXT.replace(old, new)).runs()[0].run_id

    def test_distinct_across_points_and_repetitions(self):
        exp = load(self.TEXT.replace('name = "t"', 'name = "t"\nrepeat = 2'))
        assert len({r.run_id for r in exp.runs()}) == 4

    def test_file_content_is_part_of_the_id(self, tmp_path):
        topo = tmp_path / "net.ned"
        topo.write_text(shipped("irregular16").read_text())
        (tmp_path / "exp.toml").write_text(HEAD.replace('"irregular16"', '"net.ned"'))
        run = Experiment.from_file(tmp_path / "exp.toml").runs()[0]
        assert run.config()["topology"] == {"path": str(topo), "sha256": hashlib.sha256(topo.read_bytes()).hexdigest()}
        before = run.run_id
        topo.write_text(topo.read_text() + "\n// changed\n")
        assert run.run_id != before


class TestSubstitution:
    def test_whole_and_partial_strings(self):
        text = HEAD.replace('time = "10us"', 'time = "${t}us"\nwarmup = "${w}"') + (
            '[parameters]\n"**.load" = "${load}"\n"**.name" = "run${load}_${n}"\n"**.n" = "${n}"\n'
            '"**.flag" = "${flag}"\n"**.on" = true\n"**.k" = 3\n"**.x" = 2.5\n"**.r" = "${repetition}/${seed}"\n'
            '[iterations]\nload = "0.1..0.3 step 0.1"\nn = 4\nt = 20\nw = "100ns"\nflag = false\n')
        runs = load(text).runs()
        assert runs[2].overrides == (
            ("**.load", "0.3"), ("**.name", "run0.3_4"), ("**.n", "4"), ("**.flag", "false"), ("**.on", "true"),
            ("**.k", "3"), ("**.x", "2.5"), ("**.r", f"0/{derive_seed(1, 0)}"))
        assert (runs[0].time, runs[0].warmup) == ("20us", "100ns")
        assert runs[2].iterationvars == "$load=0.3, $n=4, $t=20, $w=100ns, $flag=False"

    def test_topology_from_a_variable(self):
        exp = load(HEAD.replace('"irregular16"', '"${topo}"') + '[iterations]\ntopo = ["irregular16", "bermudez2006_fig1"]\n')
        assert [r.topology for r in exp.runs()] == ["irregular16", "bermudez2006_fig1"]

    def test_unknown_variable_is_located(self):
        msg = error(HEAD + '[parameters]\n"**.load" = "${lod}"\n[iterations]\nload = [0.1]\n')
        assert msg.startswith("exp.toml:6:13: unknown variable '${lod}'") and "load" in msg


GEN = """\
[experiment]
name = "g"
topology = { generator = "irregular", switches = "${n}", links_per_switch = 4, hosts_per_switch = 1, seed = "${topo}", width = "1x", speed = "SDR" }
time = "10us"
[iterations]
n = [4, 6]
topo = "1..2"
"""


class TestGeneratedTopology:
    def test_arguments_keep_their_types_and_defaults_are_filled_in(self):
        run = load(GEN).runs()[0]
        assert run.topology is None
        assert run.generator == (("generator", "irregular"), ("hosts_per_switch", 1), ("links", None), ("links_per_switch", 4),
                                 ("num_ports", None), ("seed", 1), ("speed", "SDR"), ("switches", 4), ("width", "1x"))
        assert run.config()["topology"]["switches"] == 4

    def test_ned_text_elaborates_and_is_deterministic(self):
        runs = load(GEN).runs()
        text = runs[0].topology_source()
        assert text == load(GEN).runs()[0].topology_source()
        name = re.match(r"network (irregular_[0-9a-f]{8})\n", text).group(1)
        net = load_network(text)
        assert net.name == name
        assert len({r.topology_source() for r in runs}) == 4

    def test_mesh_dims_list_becomes_a_tuple(self):
        text = GEN.replace('{ generator = "irregular", switches = "${n}", links_per_switch = 4, hosts_per_switch = 1, seed = "${topo}", width = "1x", speed = "SDR" }',
                           '{ generator = "mesh", dims = [2, "${n}"] }')
        run = load(text).runs()[0]
        assert dict(run.generator)["dims"] == (2, 4)
        assert load_network(run.topology_source()).name.startswith("mesh_")

    def test_table_form(self):
        text = HEAD.replace('topology = "irregular16"\n', "") + "[experiment.topology]\ngenerator = 'hypercube'\ndimension = 2\n"
        assert dict(load(text).runs()[0].generator)["dimension"] == 2

    @pytest.mark.parametrize("old, new, col, message", [
        ('"irregular"', '"irreg"', 26, "unknown generator 'irreg'; did you mean 'irregular'? (valid: fattree, hypercube, irregular, kim2007, mesh, torus)"),
        ("links_per_switch = 4", "linksper = 4", 58, "generator 'irregular' has no parameter 'linksper'"),
        ("links_per_switch = 4", 'links_per_switch = "4"', 77, "'links_per_switch' of generator 'irregular' must be an integer"),
        ("links_per_switch = 4", "links_per_switch = 1", 12, "generator 'irregular': 'links_per_switch' must be at least 2"),
        ('switches = "${n}", ', "", 12, "generator 'irregular' needs 'switches'"),
        ('"${n}"', '"${m}"', 50, "unknown variable '${m}'"),
    ])
    def test_errors(self, old, new, col, message):
        msg = error(GEN.replace(old, new))
        assert msg.startswith(f"exp.toml:3:{col}: {message}")

    def test_error_names_the_assignment(self):
        assert error(GEN.replace("n = [4, 6]", "n = [4, 0]")).endswith("(with $n=0, $topo=1)")


class TestFileTopology:
    def test_relative_to_the_experiment_file(self, tmp_path):
        (tmp_path / "nets").mkdir()
        topo = tmp_path / "nets" / "irregular16"  # a file shadows the shipped name
        topo.write_text(shipped("irregular16").read_text())
        (tmp_path / "exp.toml").write_text(HEAD.replace('"irregular16"', '"nets/irregular16"'))
        exp = Experiment.from_file(tmp_path / "exp.toml")
        assert exp.path == tmp_path / "exp.toml"
        assert exp.runs()[0].topology == str(topo) == exp.runs()[0].topology_source()
        exp = load(HEAD.replace('"irregular16"', f'"{topo}"'))  # absolute
        assert exp.runs()[0].topology == str(topo)

    def test_shipped_name(self):
        run = load(HEAD).runs()[0]
        assert run.topology == "irregular16" and run.topology_source() == str(shipped("irregular16"))
        assert run.config()["topology"] == {"shipped": "irregular16", "sha256": hashlib.sha256(shipped("irregular16").read_bytes()).hexdigest()}

    def test_missing(self):
        msg = error(HEAD.replace('"irregular16"', '"nets/x.ned"'))
        assert msg == f"exp.toml:3:12: no such file or shipped topology 'nets/x.ned' (shipped: {', '.join(sorted(SHIPPED))})"


class TestErrors:
    @pytest.mark.parametrize("text, where, message", [
        # TOML syntax: tomllib's position
        (HEAD + "repeat = = 2\n", "5:10", "invalid value"),
        (HEAD + 'x = "unterminated\n', "5:18", "illegal character"),
        # structure
        ("[experiment]\nname = 'a'\n[experment]\n", "3:1", "unknown table [experment]; did you mean 'experiment'?"),
        ("[parameters]\n", "1:1", "missing table [experiment]"),
        ("[[experiment]]\nname = 'a'\n", "1:1", "[experiment] must be a table"),
        (HEAD + "nmae = 'x'\n", "5:1", "unknown key 'nmae' in [experiment]; did you mean 'name'? (valid: name, topology"),
        (HEAD.replace('time = "10us"\n', ""), "1:1", "missing key 'time' in [experiment]"),
        (HEAD.replace('name = "t"\n', ""), "1:1", "missing key 'name' in [experiment]"),
        # types and values of [experiment]
        (HEAD.replace('"t"', "3"), "2:8", "'name' must be a string (got an integer)"),
        (HEAD.replace('"t"', '"a b"'), "2:8", "bad name 'a b'"),
        (HEAD + "repeat = 0\n", "5:10", "'repeat' must be at least 1 (got 0)"),
        (HEAD + "repeat = 1.5\n", "5:10", "'repeat' must be an integer (got a float)"),
        (HEAD + "seed = -1\n", "5:8", "'seed' must be at least 0"),
        (HEAD.replace('"10us"', "true"), "4:8", "'time' must be a duration like \"10us\" (got a boolean)"),
        (HEAD.replace('"10us"', '"10 parsecs"'), "4:8", "bad time '10 parsecs'"),
        (HEAD.replace('"10us"', '"0us"'), "4:8", "the time must be positive"),
        (HEAD + 'warmup = "10us"\n', "5:10", "the warmup (10us) must end before the time (10us)"),
        (HEAD.replace('"irregular16"', "[1]"), "3:12", "'topology' must be a string or a generator table (got a list)"),
        (HEAD.replace('"irregular16"', "{ switches = 4 }"), "3:12",
         "a generated topology needs 'generator' (one of: fattree, hypercube, irregular, kim2007, mesh, torus)"),
        (HEAD + "together = 'a'\n", "5:12", "'together' must be a list of lists"),
        (HEAD + "together = [['a']]\n", "5:12", "'together' names 'a', not an iteration variable"),
        (HEAD + "together = [['a', 'a']]\n[iterations]\na = [1]\n", "5:12", "'together' names 'a' twice"),
        # [parameters]
        (HEAD + "[parameters]\n'**.x' = [1]\n", "6:10", "'**.x' must be a string, number or boolean (got a list)"),
        (HEAD + "[parameters]\n'**.x' = '${y'\n", "6:10", "unterminated '${'"),
        (HEAD + "[parameters]\n'**.x' = '${x=1,2}'\n", "6:10", "inline iterations like '${x=1,2}' are not supported"),
        (HEAD + "[parameters]\n'' = '1'\n", "6:1", "an empty parameter pattern"),
        # [iterations]
        (HEAD + "[iterations]\nload = '0.9..0.1 step 0.1'\n", "6:8", "bad range '0.9..0.1 step 0.1': empty"),
        (HEAD + "[iterations]\nx = []\n", "6:5", "empty list of values"),
        (HEAD + "[iterations]\nseed = [1, 2]\n", "6:1", "'seed' is a built-in variable"),
        (HEAD + "[iterations]\n'a-b' = [1, 2]\n", "6:1", "bad variable name 'a-b'"),
        (HEAD + "[iterations]\n  a = [\n    1,\n    [2],\n  ]\n", "6:7", "a list of values holds strings, numbers or booleans"),
        (HEAD + "repeat = 2\n[iterations]\na = '1..1000'\nb = '1..1000'\n", "6:1", "2000000 runs: more than 100000"),
        # [saturation]
        (HEAD + "[iterations]\nload = [0.1]\n[saturation]\nvariable = 'lod'\nlow = 0.1\nhigh = 1\n", "8:12", "'variable' must name an iteration variable (got 'lod')"),
        (HEAD + "[iterations]\nload = [0.1]\n[saturation]\nvariable = 'load'\nlow = 0.5\nhigh = 0.5\n", "10:8", "'high' must be greater than 'low'"),
        (HEAD + "[iterations]\nload = [0.1]\n[saturation]\nvariable = 'load'\nlow = 0\nhigh = 1\n", "9:7", "'low' must be greater than 0.0"),
        (HEAD + "[iterations]\nload = [0.1]\n[saturation]\nvariable = 'load'\nhigh = 1\n", "7:1", "missing key 'low' in [saturation]"),
        (HEAD + "[iterations]\nload = [0.1]\n[saturation]\nvariable = 'load'\nlow = 0.1\nhigh = 1\nthreshold = 1\n", "11:13", "'threshold' must be between 0.0 and 1.0"),
        (HEAD + "[iterations]\nload = [0.1]\n[saturation]\nvariable = 'load'\nlow = 0.1\nhigh = 1\nmax_runs = 1\n", "11:12", "'max_runs' must be at least 2"),
        (HEAD + "[saturation]\nvarable = 'load'\n", "6:1", "unknown key 'varable' in [saturation]; did you mean 'variable'?"),
        (HEAD + "[iterations]\na = [1]\nb = [1, 2]\n[experiment.topology]\n", "8:21", "cannot overwrite a value"),
        (HEAD + "foo = 1\n", "5:1", "unknown key 'foo' in [experiment]"),
        ("foo = 1\n" + HEAD, "1:1", "unknown top-level key 'foo' (valid tables: experiment, parameters, iterations, saturation)"),
        # a multi-line array's lines are not taken for table headers
        ("[experiment]\ntogether = [\n  ['a', 'b'],\n]\nname = 3\n", "5:8", "'name' must be a string"),
        # dotted keys at the top level are located too
        ('experiment.name = 3\n', "1:19", "'name' must be a string"),
    ])
    def test_located(self, text, where, message):
        msg = error(text)
        assert msg.startswith(f"exp.toml:{where}: {message}"), msg
        assert "\n" not in msg

    def test_is_a_config_error(self):
        assert issubclass(ExperimentError, ConfigError)

    def test_variable_values_are_named_in_run_errors(self):
        msg = error(HEAD.replace('"10us"', '"${t}"') + "[iterations]\nt = ['10us', '5 furlongs']\n")
        assert msg.startswith("exp.toml:4:8: bad time '5 furlongs'") and msg.endswith("(with $t=5 furlongs)")

    def test_files(self, tmp_path):
        with pytest.raises(ExperimentError, match=r"^.*nope\.toml: no such file$"):
            Experiment.from_file(tmp_path / "nope.toml")
        (tmp_path / "latin1.toml").write_bytes(b"[experiment]\nname = '\xe9'\n")
        with pytest.raises(ExperimentError, match=r"latin1\.toml:2:9: not UTF-8 text \(byte 0xe9\)$"):
            Experiment.from_file(tmp_path / "latin1.toml")
        (tmp_path / "bad.toml").write_text(HEAD + "repeat = [\n")
        with pytest.raises(ExperimentError, match=r"bad\.toml:6:1: "):
            Experiment.from_file(tmp_path / "bad.toml")


# ------------------------------------------------------------------ properties

VALUES = st.one_of(
    st.lists(st.integers(-1000, 1000), min_size=1, max_size=4, unique=True),
    st.tuples(st.integers(-50, 50), st.integers(0, 4), st.sampled_from(["1", "2", "0.5", "0.1", "0.25"])).map(
        lambda t: f"{t[0]}..{t[0] + t[1] * Decimal(t[2])} step {t[2]}"),  # at most 5 values
    st.lists(st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=5), min_size=1, max_size=3, unique=True),
)


@st.composite
def experiments(draw):
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda n: n not in ("seed", "repetition")),
                          max_size=3, unique=True))
    values = [draw(VALUES) for _ in names]
    repeat = draw(st.integers(1, 3))
    lines = [HEAD + f"repeat = {repeat}", "[parameters]"]
    lines += [f'"**.{n}" = "${{{n}}}"' for n in names]
    lines += ["[iterations]"] + [f"{n} = {v!r}".replace("'", '"') for n, v in zip(names, values)]
    return "\n".join(lines) + "\n", [len(parse_values(v)) for v in values], repeat


class TestProperties:
    @settings(max_examples=100, deadline=5000)
    @given(experiments())
    def test_count_and_distinct_ids(self, case):
        text, lengths, repeat = case
        runs = load(text).runs()
        assert len(runs) == math.prod(lengths) * repeat
        keys = {(r.vars, r.repetition) for r in runs}
        assert len(keys) == len(runs) == len({r.run_id for r in runs})

    @settings(max_examples=200, deadline=5000)
    @given(st.text(max_size=200))
    def test_random_text_parses_or_fails_cleanly(self, text):
        try:
            load(text)
        except ExperimentError as exc:
            assert re.match(r"exp\.toml:\d+:\d+: \S", str(exc)), str(exc)

    VALID = HEAD + (
        'warmup = "1us"\nrepeat = 2\ntogether = [["a", "b"]]\n[parameters]\n"**.load" = "${load}"\n"**.x" = "${a}-${b}"\n'
        '[iterations]\nload = "0.1..0.3 step 0.1"\na = [1, 2]\nb = ["x", "y"]\n[saturation]\nvariable = "load"\nlow = 0.1\nhigh = 0.9\n')

    @settings(max_examples=200, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.sampled_from(list('=[]{}"\'.,#$\n 0123456789abz-_'))), max_size=4))
    def test_mutated_file_parses_or_fails_cleanly(self, edits):
        text = self.VALID
        for pos, action, char in edits:
            pos %= len(text) + 1
            if action == 0:
                text = text[:pos] + char + text[pos:]  # insert
            elif action == 1:
                text = text[:pos] + text[pos + 1 :]  # delete
            elif action == 2:
                text = text[:pos] + char + text[pos + 1 :]  # replace
            else:
                text = text[:pos] + text[pos:].replace("\n", "", 1)  # join two lines
        try:
            load(text)
        except ExperimentError as exc:
            assert re.match(r"exp\.toml:\d+:\d+: \S", str(exc)), str(exc)

    def test_the_unmutated_file_is_valid(self):
        assert len(load(self.VALID)) == 12


def test_runspec_is_a_frozen_value():
    run = load(HEAD).runs()[0]
    assert isinstance(run, RunSpec) and hash(run) == hash(load(HEAD).runs()[0])
    with pytest.raises(AttributeError):
        run.seed = 3


def test_an_integer_too_long_for_python_is_located():
    with pytest.raises(ExperimentError, match=r"^f\.toml:3:8: a number of more than 4300 digits is out of range$"):
        Experiment.from_text('[experiment]\nname = "x"\nseed = ' + "9" * 5000 + "\n", "f.toml")
