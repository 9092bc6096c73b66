"""Named model configurations (ibfabric.configs): the shipped ones run, ``extends`` chains, override order, errors."""

from __future__ import annotations

import doctest
import json
import textwrap

import pytest

import ibfabric
from ibfabric import configs
from ibfabric.cli import build_parser, main
from ibfabric.cli import run as run_cli
from ibfabric.errors import ConfigError
from ibfabric.experiment import Experiment
from ibfabric.simulation import Simulation
from ibfabric.topologies.generators import mesh, to_ned

SHIPPED = sorted(configs.shipped())
# 4 switches in a 2 x 2 mesh, 2 hosts each: every module type a configuration sets a parameter of
SMALL = to_ned(mesh((2, 2), hosts_per_switch=2), name="small")


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("configs") / "small.ned"
    path.write_text(SMALL)
    return str(path)


def write(tmp_path, text: str, name: str = "mine.toml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_doctests():
    assert doctest.testmod(configs, raise_on_error=True).failed == 0


class TestShipped:
    def test_the_papers_are_all_there(self):
        assert {"kim2007", "bermudez2006", "alfaro2001", "martinez2003", "omnetpp-ib"} <= set(SHIPPED)

    @pytest.mark.parametrize("name", SHIPPED)
    def test_builds_and_runs(self, name):
        sim = ibfabric.load(SMALL, optional_overrides=configs.overrides(name),
                            overrides={"**.traffic": "uniform", "**.load": "0.3"}, seed=1)
        # every parameter the configuration sets reaches the model: no pattern is a silent no-op
        assert set(configs.overrides(name).items()) <= set(sim.parameters_set())
        summary = sim.run("30us")
        assert summary["packets_injected"] > 0 and summary["conservation_ok"]

    @pytest.mark.parametrize("name", SHIPPED)
    def test_every_value_has_a_source(self, name):
        cfg = configs.get(name)
        assert cfg.description
        for param, _ in cfg.params():
            assert param.source, f"{name}: {param.pattern} has no source"

    def test_the_papers_switches(self):
        # Kim et al.'s Table 1 and Martinez et al.'s section 5.1: input *and* output buffers per VL, with
        # the papers' routing options, lifetimes and replication on the same switch
        import ibfabric

        kim = ibfabric.load("kim2007_15", optional_overrides=configs.overrides("kim2007"), overrides={
            "**.routing": "multipath", "**.sm.lmc": "7", "**.optionBits": "7", "**.optionsWhen": '"slid"',
            "**.adaptiveBy": '"slid"', "**.adaptive": "0.5", "**.pathSelector": '"lfu"', "**.dropper": '"hll"',
            "**.dropperOptions": '"hv=0"', "**.traffic": "uniform", "**.load": "0.2",
            "**.multicastGroups": '"g: 0 5 senders=*"', "**.realtimeMulticast": "0.5", "**.realtimeLoad": "0.05"},
            seed=1, check=True)
        sw = next(n for n in kim.ib_nodes if n.is_switch)
        assert (sw.input_queues, sw.out_buffer, sw.vl_buffer, sw.option_bits) == ("fifo", 4200, 4200, 7)
        s = kim.run("300us")
        assert s["conservation_ok"] and s["packets_delivered"] > 100 and s["multicast"]["groups"]["g"]["complete"] > 0
        fa = ibfabric.load("irregular16", optional_overrides=configs.overrides("martinez2003-fa"), overrides={
            "**.traffic": "uniform", "**.load": "0.1", "**.adaptive": "1", "**.packetSize": "276B"}, seed=1, check=True)
        sw = next(n for n in fa.ib_nodes if n.is_switch)
        assert (sw.input_queues, sw.out_buffer, sw.escape_buffer) == ("split", 1024, 512)
        s = fa.run("50us")
        assert s["conservation_ok"] and s["packets_delivered"] > 100

    def test_kims_traffic_on_table1_vls(self):
        # control on VL15 (section 4), real time on SLs = VLs 4-14 and best effort on SLs = VLs 0-3 (the reading
        # of Fig. 10f's 11 real-time VLs), real time first at the HCAs, on the paper's switch
        ov = configs.overrides("kim2007-traffic")
        assert (ov["**.realtimeSL"], ov["**.realtimeSLs"], ov["**.sl"]) == ("4", "11", "0..3")
        assert (ov["**.outputBufferSize"], ov["**.vlBufferSize"], ov["**.numVLs"]) == ("4200B", "4200B", "15")
        sim = ibfabric.load("kim2007_15", optional_overrides=ov, overrides={"**.load": "0.03", "**.realtimeLoad": "0.07"},
                            seed=1, check=True)
        s = sim.run("2ms")
        assert s["conservation_ok"]
        for node in sim.ib_nodes:
            tables = ([t for rx in node.rx.values() for t in rx.sl2vl_out if t is not None] if node.is_switch
                      else [tx.sl2vl for tx in node.tx.values()])
            assert tables and all(list(t[:15]) == list(range(15)) for t in tables)  # SL s on VL s
        assert all(h.sl_order[:15] == [*range(4, 15), *range(4)] for h in sim.hosts)
        log = sim.stats.arrays()
        by_class = {c: set(log["sl"][log["cls"] == c].tolist()) for c in (0, 2)}
        assert by_class == {0: {0, 1, 2, 3}, 2: set(range(4, 15))}  # best effort, real time: every VL of its share

    def test_the_papers_values(self):
        kim = configs.overrides("kim2007")
        assert (kim["**.dataRate"], kim["**.numVLs"], kim["**.vlBufferSize"], kim["**.outputBufferSize"],
                kim["**.mtu"], kim["**.headerSize"]) == ("2.5Gbps", "15", "4200B", "4200B", "1024B", "26B")
        ber = configs.overrides("bermudez2006")
        assert (ber["**.width"], ber["**.numVLs"], ber["**.vlBufferSize"], ber["**.outputBufferSize"],
                ber["**.mtu"]) == ("1x", "2", "4096B", "4096B", "256B")

    def test_omnetpp_ib_is_the_models_switch(self):
        """Issue 31: round robin, an internal bus 7.2x the link, the release's output FIFO of 78 flits of 64 B,
        50 + 50 ns (experiments/README.md, "omnetpp_ib", compares it with the C++ model)."""
        o = configs.overrides("omnetpp-ib")
        assert (o["**.crossbarArbiter"], o["**.crossbarSpeedup"], o["**.outputBufferSize"], o["**.vlBufferSize"],
                o["**.mtu"], o["**.numVLs"], o["**.inputQueues"]) == ("wrr", "7.2", "4992B", "64KiB", "2048B", "2", "voq")
        sim = ibfabric.load(SMALL, optional_overrides=o, overrides={"**.traffic": "uniform", "**.load": "0.05"}, seed=1)
        switches = [n for n in sim.ib_nodes if n.is_switch]
        assert switches and all(
            (sw.routing_delay, sw.arbitration_delay, sw.speedup, sw.xbar_arbiter, sw.out_buffer, sw.input_queues,
             sw.plan.out_credits) == (50.0, 50.0, 7.2, "wrr", 4992, "voq", 78) for sw in switches)
        s = sim.run("20us")
        # zero load through one switch: 100 ns wire + 50 + 50 ns + 100 ns wire + 256 B at 4 B/ns
        assert s["network_latency_ns"]["min"] == pytest.approx(364.0)


class TestExtends:
    FILE = """\
        [config.base]
        description = "the base"
        parameters = { "**.mtu" = { value = "512B", source = "a book" }, "**.numVLs" = "2" }

        [config.middle]
        extends = "base"
        [config.middle.parameters]
        "**.numVLs" = "4"
        "**.routingDelay" = "10ns"

        [config.top]
        extends = "middle"
        [config.top.parameters]
        "**.routingDelay" = "20ns"

        [config.onkim]
        extends = "kim2007"
        parameters = { "**.vlBufferSize" = "8400B" }
        """

    def test_chain_and_override_order(self, tmp_path):
        path = write(tmp_path, self.FILE)
        top = configs.get(f"{path}:top")
        assert top.chain() == ["top", "middle", "base"]
        assert top.overrides() == {"**.routingDelay": "20ns", "**.numVLs": "4", "**.mtu": "512B"}
        assert [(p.pattern, who) for p, who in top.params()] == [
            ("**.routingDelay", "top"), ("**.numVLs", "middle"), ("**.mtu", "base")]
        assert top.params()[2][0].source == "a book"

    def test_a_user_config_extends_a_shipped_one(self, tmp_path):
        path = write(tmp_path, self.FILE)
        ov = configs.overrides(f"{path}:onkim")
        assert ov["**.vlBufferSize"] == "8400B" and ov["**.dataRate"] == "2.5Gbps"
        assert configs.get("martinez2003-fa").chain() == ["martinez2003-fa", "martinez2003"]

    def test_relative_files_and_a_file_of_one(self, tmp_path):
        write(tmp_path, '[config.only]\nparameters = { "**.mtu" = "1024B" }\n', "one.toml")
        assert configs.overrides("one.toml", base_dir=tmp_path) == {"**.mtu": "1024B"}
        with pytest.raises(ConfigError, match="holds 4 configs"):
            configs.get(write(tmp_path, self.FILE))


def one_line_error(fn, *args, **kw) -> str:
    with pytest.raises(ConfigError) as info:
        fn(*args, **kw)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


class TestErrors:
    def test_cycle(self, tmp_path):
        path = write(tmp_path, """\
            [config.a]
            extends = "b"
            [config.b]
            extends = "c"
            [config.c]
            extends = "a"
            """)
        msg = one_line_error(configs.get, f"{path}:a")
        assert msg == f"{path}: config 'a': extends cycle a -> b -> c -> a"

    def test_extends_itself(self, tmp_path):
        path = write(tmp_path, '[config.a]\nextends = "a"\n')
        assert one_line_error(configs.get, f"{path}:a") == f"{path}: config 'a': extends cycle a -> a"

    def test_unknown_extends(self, tmp_path):
        path = write(tmp_path, '[config.a]\nextends = "kim2008"\n')
        msg = one_line_error(configs.get, f"{path}:a")
        assert msg.startswith(f"{path}: config 'a': extends 'kim2008': no config 'kim2008'")
        assert "did you mean 'kim2007'" in msg

    def test_unknown_name(self):
        msg = one_line_error(configs.get, "kim2008")
        assert msg.startswith("no config 'kim2008'; did you mean 'kim2007'? (valid:") and "omnetpp-ib" in msg

    def test_unknown_parameter(self, tmp_path):
        path = write(tmp_path, '[config.a]\nparameters = { "**.vlBuferSize" = "4096B" }\n')
        msg = one_line_error(configs.get, f"{path}:a")
        assert msg.startswith(f"{path}:2:")
        assert "config 'a': unknown parameter 'vlBuferSize'" in msg and "did you mean 'vlBufferSize'" in msg

    @pytest.mark.parametrize("text, message", [
        ("[config.a]\ncolour = 1\n", "unknown key 'colour'"),
        ("[config.a]\nparameters = { \"**.mtu\" = [1] }\n", "must be a string, number or boolean"),
        ("[config.a]\nparameters = { \"**.mtu\" = { source = \"x\" } }\n", "must be a value or"),
        ("[other]\n", "unknown key 'other'"),
        ("[config.a\n", "mine.toml:1:"),
    ])
    def test_bad_files(self, tmp_path, text, message):
        assert message in one_line_error(configs.get, f"{write(tmp_path, text)}:a")

    def test_missing_file(self, tmp_path):
        assert "no such config file" in one_line_error(configs.get, f"{tmp_path}/none.toml:a")


class TestCommandLine:
    def test_configs_lists_them_all(self, capsys):
        code, out, _ = cli(capsys, "configs")
        assert code == 0
        for name in SHIPPED:
            assert name in out
        assert "extends" in out and "description" in out

    def test_configs_name_shows_every_parameter_and_its_source(self, capsys):
        code, out, _ = cli(capsys, "configs", "martinez2003-fa")
        assert code == 0
        assert "martinez2003-fa -> martinez2003" in out and "**.width" in out and "1x" in out and "Section 5.1" in out

    def test_configs_of_a_file(self, capsys, tmp_path):
        path = write(tmp_path, TestExtends.FILE)
        code, out, _ = cli(capsys, "configs", path)
        assert code == 0 and "middle" in out and "onkim" in out
        code, out, _ = cli(capsys, "configs", f"{path}:top")
        assert code == 0 and "top -> middle -> base" in out and "a book" in out

    def test_unknown_config_is_one_line(self, capsys, small):
        for argv in (["configs", "kim2008"], ["run", small, "--config", "kim2008", "--time", "5us"]):
            code, out, err = cli(capsys, *argv)
            assert code == 2 and err.startswith("ibfabric: error: no config 'kim2008'") and err.count("\n") == 1

    def test_set_and_options_beat_the_config(self, small):
        args = build_parser().parse_args(["run", small, "--config", "kim2007", "--packet-size", "512",
                                          "--set", "**.mtu=2048B"])
        topology, sets, soft, weak, _, _ = run_cli.scenario(args)
        sim = Simulation(topology, overrides=sets, optional_overrides=soft, defaults=weak)
        got = dict(sim.parameters_set())
        assert got["**.mtu"] == "2048B"  # --set
        assert got["**.packetSize"] == "512B"  # --packet-size
        assert got["**.vlBufferSize"] == "4200B" and got["**.numVLs"] == "15"  # the config, over the file

    def test_run_with_a_config(self, capsys, small):
        code, out, err = cli(capsys, "run", small, "--config", "bermudez2006", "--time", "20us", "--json")
        assert code == 0, err
        assert json.loads(out)["packets_injected"] > 0


class TestExperimentFiles:
    def test_config_below_the_files_parameters(self, small, tmp_path):
        exp = Experiment.from_text(textwrap.dedent(f"""\
            [experiment]
            name = "cfg"
            topology = "{small}"
            time = "10us"
            config = "kim2007"
            [parameters]
            "**.mtu" = "2048B"
            """))
        (run,) = exp.runs()
        ov = dict(run.overrides)
        assert list(ov)[0] == "**.mtu" and ov["**.mtu"] == "2048B"
        assert ov["**.vlBufferSize"] == "4200B"
        sim = Simulation(run.topology_source(), overrides=list(run.overrides))
        assert dict(sim.parameters_set())["**.mtu"] == "2048B"

    def test_a_user_config_relative_to_the_experiment(self, small, tmp_path):
        write(tmp_path, TestExtends.FILE)
        exp = Experiment.from_text(textwrap.dedent(f"""\
            [experiment]
            name = "cfg"
            topology = "{small}"
            time = "10us"
            config = "mine.toml:top"
            """), base_dir=tmp_path)
        assert dict(exp.runs()[0].overrides)["**.routingDelay"] == "20ns"

    def test_unknown_config_points_at_the_key(self, small):
        with pytest.raises(ConfigError) as info:
            Experiment.from_text(f'[experiment]\nname = "x"\ntopology = "{small}"\ntime = "1us"\nconfig = "kim2008"\n',
                                 filename="e.toml")
        assert str(info.value).startswith("e.toml:5:10: no config 'kim2008'")


def test_the_docs_list_every_shipped_config():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "configs.md").read_text()
    for name in SHIPPED:
        assert f"| `{name}` |" in text, f"docs/configs.md does not describe '{name}'"
