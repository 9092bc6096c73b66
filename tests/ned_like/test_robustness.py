"""Bad input to the NED-like language: each fuzzing find as a test, and the fuzzing itself.

Every test asserts a clean outcome: a one-line ``file:line:col: message``
(an :class:`~ibfabric.errors.IbfabricError`) in the file the user wrote, or
documented success.  The limits are described in ``docs/ned-language.md``,
section *Limits*.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ibfabric.ned_like.limits
from ibfabric.cli import main
from ibfabric.errors import ConfigError, IbfabricError
from ibfabric.ned_like import Limits, NedError, elaborate, load_network, parse, parse_value
from ibfabric.ned_like.limits import MAX_CONNECTION_NESTING, MAX_EXPRESSION_DEPTH, MAX_MODULE_DEPTH

from tests.components.conftest import CHAIN, RING, STAR

BIG = "1" + "0" * 5000  # a 5,001-digit integer: beyond Python's int/str conversion limit
DOC = Path(__file__).resolve().parents[2] / "docs" / "ned-language.md"
FIG1 = Path(__file__).resolve().parents[2] / "topologies" / "bermudez2006_fig1.ned"


def error_of(src: str, **kw) -> NedError:
    with pytest.raises(NedError) as info:
        elaborate(src, filename="t.ned", **kw)
    return info.value


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def one_cli_error(capsys, *argv) -> str:
    """The message of a command that must fail with one line on stderr and status 2."""
    code, _, err = cli(capsys, *argv)
    assert code == 2, err
    assert err.startswith("ibfabric: error: ") and len(err.splitlines()) == 1, err
    return err.removeprefix("ibfabric: error: ").rstrip("\n")


# ---------------------------------------------------------------- numbers


class TestNumbers:
    def test_huge_integer_literal(self):
        e = error_of(f"network n {{\n  submodules:\n    sw: Switch {{ lid = {BIG}; }}\n}}")
        assert str(e) == (
            "t.ned:3:24: integer 10000000000000000000...(5001 characters) is out of range"
            " (at most 9223372036854775807, a 64-bit integer)"
        )

    def test_huge_integer_anywhere(self):
        for src in (
            f"network n {{ submodules: sw[{BIG}]: Switch; }}",
            f"network n {{ submodules: h: HCA; connections: for i=0..{BIG} {{ }} }}",
            f"network n {{ parameters: int x = 1; **.lid = {BIG}; submodules: h: HCA; }}",
            f"network n {{ submodules: h: HCA {{ mtu = {BIG}B; }} }}",
        ):
            assert "is out of range" in error_of(src).message

    def test_leading_zeros_are_not_digits_of_range(self):
        net = elaborate("network n { submodules: sw: Switch { lid = " + "0" * 6000 + "7; } }")
        assert net.module("n.sw").params["lid"].value == 7

    def test_the_64_bit_bounds(self):
        assert parse_value("9223372036854775807").value == 2**63 - 1
        assert parse_value("-9223372036854775807").value == -(2**63) + 1
        assert "out of range" in str(pytest.raises(NedError, parse_value, "9223372036854775808").value)

    def test_huge_override_value(self):
        e = error_of("network n { submodules: h: HCA; }", overrides={"**.load": BIG})
        assert str(e) == (
            "<override **.load>:1:1: integer 10000000000000000000...(5001 characters) is out of range"
            " (at most 9223372036854775807, a 64-bit integer) (value for n.h.load)"
        )

    def test_huge_override_on_the_command_line(self, capsys, tmp_path):
        (tmp_path / "star.ned").write_text(STAR)
        msg = one_cli_error(capsys, "run", str(tmp_path / "star.ned"), "--set", f"**.load={BIG}", "--no-progress")
        assert msg.startswith("<override **.load>:1:1: integer 10000000000000000000...(5001 characters) is out of")

    def test_float_overflow(self):
        e = error_of("network n {\n  submodules:\n    h: HCA { load = 1e999; }\n}")
        assert str(e) == "t.ned:3:21: number 1e999 is out of range (beyond the largest double, about 1.8e308)"
        e = error_of("network n { submodules: sw: Switch { routingDelay = 1e308s; } }")
        assert e.message == "quantity 1e308s is out of range (beyond the largest double in ns)"
        e = error_of("network n { submodules: sw: Switch { routingDelay = 1e999999999ns; } }")
        assert e.message.startswith("quantity 1e999999999 is out of range")

    def test_arithmetic_overflow(self):
        assert error_of("network n { parameters: int x = 2 ^ 64; }").message == (
            "2 ^ 64 is out of the 64-bit integer range"
        )
        e = error_of("network n { parameters: int x = 9223372036854775807 + 1; }")
        assert e.message == (
            "the result 9223372036854775808 is out of the 64-bit integer range"
            " (-9223372036854775808..9223372036854775807)"
        )
        for expr in ("3037000500 * 3037000500", "int(1e300)", "floor(1e300)", "1e300 * 1e300",
                     'int("99999999999999999999")', "((2^62) * 2)", "-(-9223372036854775807 - 1)"):
            assert "out of" in error_of(f"network n {{ parameters: double x = {expr}; }}").message, expr

    def test_power_towers_do_not_compute_huge_numbers(self):
        assert error_of("network n { parameters: int x = 9 ^ 9 ^ 9 ^ 9; }").message == (
            "9 ^ 387420489 is out of range (not a finite number)"  # 9 ^ (9 ^ (9 ^ 9)), as a double
        )
        assert error_of("network n { parameters: int x = 3 ^ 1000; }").message == (
            "3 ^ 1000 is out of the 64-bit integer range"  # refused before 3 ** 1000 is computed
        )


# ---------------------------------------------------------------- nesting and cycles


class TestNesting:
    def test_module_contains_itself(self):
        e = error_of("network n {\n  submodules:\n    n2: n;\n}")
        assert str(e) == "t.ned:3:5: module type 'n' contains itself (n -> n, at n.n2)"

    def test_cycle_through_two_types(self):
        e = error_of("module A { submodules: b: B; }\nmodule B { submodules: a: A; }\nnetwork n { submodules: a: A; }")
        assert str(e) == "t.ned:2:24: module type 'A' contains itself (A -> B -> A, at n.a.b.a)"

    def test_cycle_under_a_condition_is_still_a_cycle(self):
        e = error_of("module T { parameters: int d = 0; submodules: t: T if d > 0 { d = d - 1; } }\n"
                     "network n { submodules: t: T { d = 3; } }")
        assert e.message == "module type 'T' contains itself (T -> T, at n.t.t)"

    def test_500_nested_for_loops(self):
        src = "network n { submodules: h: HCA; connections: " + "for i=0..0 { " * 500 + "}" * 500 + " }"
        e = error_of(src)
        assert e.message == (
            f"connections nested more than {MAX_CONNECTION_NESTING} levels deep (each 'for' variable and each 'if' is a level)"
        )
        assert (e.line, e.column) == (1, [m.start() for m in re.finditer("i=", src)][MAX_CONNECTION_NESTING] + 1)

    def test_nesting_up_to_the_limit_works(self):
        depth = MAX_CONNECTION_NESTING
        src = ("simple N { gates: output o[]; input i[]; }\nnetwork n { submodules: a: N; b: N; connections: "
               + "".join(f"for v{k}=0..0 {{ " for k in range(depth - 1)) + "if true { a.o++ --> b.i++; }"
               + "}" * (depth - 1) + " }")
        assert len(elaborate(src).root.connections) == 1

    def test_many_variables_of_one_loop_count_as_levels(self):
        src = "network n { submodules: h: HCA; connections: for " + ", ".join(f"v{k}=0..0" for k in range(60)) + " { } }"
        assert "nested more than" in error_of(src).message

    def test_1000_levels_of_extends_work(self):
        src = ("simple S0 { parameters: int x = 1; gates: inout port[x]; }\n"
               + "".join(f"simple S{i} extends S{i - 1} {{ }}\n" for i in range(1, 1001))
               + "network n { submodules: s: S1000 { x = 4; } }")
        net = elaborate(src)
        assert net.module("n.s").params["x"].value == 4 and net.module("n.s").gate("port").size == 4

    def test_extends_cycle_is_named(self):
        e = error_of("simple A extends B { }\nsimple B extends C { }\nsimple C extends B { }\n"
                     "network n { submodules: a: A; }")
        assert str(e) == "t.ned:2:8: type 'B' extends itself (B -> C -> B)"

    def test_deep_but_finite_module_nesting(self):
        def chain(levels: int) -> str:  # the network, levels - 2 compound modules, an HCA
            types = "".join(f"module M{k} {{ submodules: m: M{k + 1}; }}\n" for k in range(levels - 3))
            return types + f"module M{levels - 3} {{ submodules: h: HCA; }}\nnetwork n {{ submodules: m: M0; }}"

        net = elaborate(chain(MAX_MODULE_DEPTH))
        assert max(m.path.count(".") for m in net.modules()) == MAX_MODULE_DEPTH - 1
        e = error_of(chain(MAX_MODULE_DEPTH + 1))
        assert e.message.startswith(f"modules nested more than {MAX_MODULE_DEPTH} levels deep (at n.m.m.m.")

    def test_expression_depth(self):
        ok = "1+(" * (MAX_EXPRESSION_DEPTH - 1) + "1" + ")" * (MAX_EXPRESSION_DEPTH - 1)
        assert elaborate(f"network n {{ parameters: int x = {ok}; }}").root.params["x"].value == MAX_EXPRESSION_DEPTH
        assert parse_value("-(" * 5000 + "1" + ")" * 5000).value == 1  # folded into the literal as it is parsed
        deep = "abs(" * 5000 + "1" + ")" * 5000
        e = error_of(f"network n {{ parameters: int x = {deep}; }}")
        assert e.message == f"expression nested more than {MAX_EXPRESSION_DEPTH} levels deep"
        with pytest.raises(NedError, match="nested more than"):
            parse_value("!(" * 200 + "true" + ")" * 200)

    def test_long_flat_chains_are_not_deep(self):
        total = " + ".join(["1"] * 5000)
        assert elaborate(f"network n {{ parameters: int x = {total}; }}").root.params["x"].value == 5000

    @pytest.mark.parametrize("reverse", [False, True])
    def test_long_chains_of_defaults(self, reverse):
        n = 1500
        decls = [f"int p{i} = p{i - 1} + 1;" for i in range(1, n)] + ["int p0 = 0;"]
        src = "simple S { parameters: " + " ".join(reversed(decls) if reverse else decls) + " }\n"
        net = elaborate(src + "network n { submodules: s: S; }")
        assert net.module("n.s").params[f"p{n - 1}"].value == n - 1

    def test_cycle_of_defaults_is_still_named(self):
        e = error_of("simple S {\n  parameters:\n    int x = y + 1;\n    int y = x * 2;\n}\nnetwork n { submodules: s: S; }")
        assert str(e) == "t.ned:3:13: parameter 'x' of n.s (S) depends on itself (x -> y -> x)"


# ---------------------------------------------------------------- resource limits


class TestLimits:
    def test_a_million_switches_is_refused_before_building(self):
        e = error_of("network n {\n  submodules:\n    sw[1000000]: Switch;\n}")
        assert str(e) == (
            "t.ned:3:8: submodule vector 'sw' of 1000000 elements would give the network more than 100000 modules;"
            " raise it with IBFABRIC_MAX_MODULES=N or limits=Limits(max_modules=N)"
        )

    def test_modules_counted_across_compound_modules(self):
        src = "module Pod { submodules: h[10]: HCA; }\nnetwork n { submodules: pod[20]: Pod; }"
        assert len(elaborate(src, limits=Limits(max_modules=1 + 20 * 11)).simple_modules()) == 200
        e = error_of(src, limits=Limits(max_modules=100))
        assert e.message.startswith("the network has more than 100 modules (at n.pod[9])")

    def test_huge_num_ports_is_reported_at_the_assignment(self):
        e = error_of("network n {\n  submodules:\n    sw: Switch {\n      numPorts = 100000000; }\n}")
        assert str(e) == (
            "t.ned:4:7: the size of gate vector 'port' of n.sw (Switch) must be from 0 to 1000000, got 100000001"
            " (from numPorts = 100000000); raise it with IBFABRIC_MAX_VECTOR_SIZE=N or limits=Limits(max_vector_size=N)"
        )

    def test_huge_num_ports_from_an_override_or_deep_assignment(self):
        e = error_of("network n { submodules: sw: Switch; }", overrides={"**.numPorts": "100000000"})
        assert e.file == "<override **.numPorts>" and "(from numPorts = 100000000)" in e.message
        e = error_of("network n {\n  parameters:\n    **.numPorts = -3;\n  submodules:\n    sw: Switch;\n}")
        assert str(e) == (
            "t.ned:3:5: the size of gate vector 'port' of n.sw (Switch) must be from 0 to 1000000, got -2"
            " (from numPorts = -3)"
        )

    def test_total_gates(self):
        src = "network n {\n  submodules:\n    sw[3]: Switch { numPorts = 60000; }\n}"
        e = error_of(src, limits=Limits(max_gates=150_000))
        assert str(e) == (
            "t.ned:3:21: the 60001 gates of n.sw[2] (Switch) would bring the network to 180003 gates, more than"
            " 150000 (from numPorts = 60000); raise it with IBFABRIC_MAX_GATES=N or limits=Limits(max_gates=N)"
        )
        assert len(elaborate(src, limits=Limits(max_gates=180_003)).simple_modules()) == 3

    def test_growing_gate_vectors_count(self):
        src = ("simple Hub { gates: inout p[]; }\nnetwork n { submodules: a: Hub; b: Hub;\n"
               "  connections: for i=0..99 { a.p++ <--> b.p++; } }")
        assert elaborate(src).module("n.a").gate("p").size == 100
        e = error_of(src, limits=Limits(max_gates=150))
        assert e.message == (
            "'n.a.p++' would bring the network to more than 150 gates;"
            " raise it with IBFABRIC_MAX_GATES=N or limits=Limits(max_gates=N)"
        )

    def test_plusplus_on_a_big_vector_is_linear(self):
        src = ("simple Hub { gates: inout p[20000]; }\nnetwork n { submodules: a: Hub; b: Hub;\n"
               "  connections: for i=0..19999 { a.p++ <--> b.p++; } }")
        net = elaborate(src)
        assert [c.src.index for c in net.root.connections[-2:]] == [19998, 19999]

    def test_loop_of_a_trillion_iterations(self):
        e = error_of("network n {\n  submodules: h: HCA;\n  connections:\n    for i=0..1000000000000 { }\n}")
        assert str(e) == (
            "t.ned:4:9: loop 'i' would run 1000000000001 times, more than the limit of 2000000 loop iterations per"
            " network; raise it with IBFABRIC_MAX_LOOP_ITERATIONS=N or limits=Limits(max_loop_iterations=N)"
        )

    def test_nested_loops_share_one_budget(self):
        src = "network n { submodules: h: HCA; connections: for i=0..99, j=0..99 { } }"
        elaborate(src, limits=Limits(max_loop_iterations=100 + 100 * 100))
        e = error_of(src, limits=Limits(max_loop_iterations=5000))
        assert e.message.startswith("loop 'j' would run 100 times, more than the 0 left of the limit of 5000")
        e = error_of("network n { submodules: h: HCA; connections: for i=0..9999999, j=0..9999999 { } }")
        assert e.message.startswith("loop 'i' would run 10000000 times")

    def test_vector_sizes(self):
        assert error_of("network n { submodules: sw[-1]: Switch; }").message == (
            "the size of submodule vector 'sw' must be from 0 to 1000000, got -1"
        )
        assert elaborate("network n { submodules: sw[0]: Switch; h: HCA; }").simple_modules()[0].path == "n.h"
        e = error_of("simple S { gates: inout p[]; }\nnetwork n { submodules: s: S { gates: p[-5]; } }")
        assert str(e) == "t.ned:2:42: the size of gate vector 'p' of n.s (S) must be from 0 to 1000000, got -5"
        e = error_of("network n { submodules: sw[2000]: Switch; }", limits=Limits(max_vector_size=1000))
        assert e.message.endswith("raise it with IBFABRIC_MAX_VECTOR_SIZE=N or limits=Limits(max_vector_size=N)")

    def test_limits_from_the_environment(self, monkeypatch):
        monkeypatch.setenv("IBFABRIC_MAX_MODULES", "5")
        e = error_of("network n { submodules: h[10]: HCA; }")
        assert e.message.startswith("submodule vector 'h' of 10 elements would give the network more than 5 modules")
        assert Limits.from_env({"IBFABRIC_MAX_GATES": " 10_000_000 "}).max_gates == 10_000_000
        for bad in ("abc", "0", "-4", "1e9", "９"):
            with pytest.raises(ConfigError, match=r"^IBFABRIC_MAX_LOOP_ITERATIONS must be a positive integer"):
                Limits.from_env({"IBFABRIC_MAX_LOOP_ITERATIONS": bad})
        with pytest.raises(ConfigError, match=r"^'max_modules' must be a positive integer \(got 0\)"):
            Limits(max_modules=0)

    def test_limits_on_the_command_line(self, capsys, tmp_path, monkeypatch):
        (tmp_path / "big.ned").write_text("network n {\n  submodules:\n    sw[1000000]: Switch;\n}\n")
        msg = one_cli_error(capsys, "topo", "show", str(tmp_path / "big.ned"))
        assert msg.startswith(f"{tmp_path / 'big.ned'}:3:8: submodule vector 'sw' of 1000000 elements")
        monkeypatch.setenv("IBFABRIC_MAX_MODULES", "many")
        assert one_cli_error(capsys, "topo", "show", str(FIG1)) == (
            "IBFABRIC_MAX_MODULES must be a positive integer (got 'many')"
        )

    def test_limits_reach_the_simulation(self):
        from ibfabric.simulation import Simulation

        with pytest.raises(NedError, match="more than 3 modules"):
            Simulation(STAR, limits=Limits(max_modules=3))

    def test_defaults_fit_a_32_ary_3_tree(self):
        k, n = 32, 3
        hosts, switches = k**n, n * k ** (n - 1)
        modules = 1 + hosts + switches + 1  # the network, its nodes and a subnet manager
        gates = hosts * (1 + 1) + switches * (2 * k + 1)  # port[numPorts + 1] of every node
        assert (modules, gates) == (35842, 265216)
        limits = Limits()
        assert modules <= limits.max_modules and gates <= limits.max_gates
        assert 1_000_000 > limits.max_modules  # a million switches is refused

    def test_huge_strings_are_fine(self):
        text = "x" * 1_000_000
        net = elaborate(f'network n {{ submodules: sw: Switch {{ nodeDesc = "{text}"; }} }}')
        assert net.module("n.sw").params["nodeDesc"].value == text
        e = error_of(f'network n {{ submodules: sw: Switch {{ lid = "{text}"; }} }}')
        assert len(str(e)) < 200 and e.message.startswith('parameter \'lid\' expects an int, got "xxxxxxxxxxxxxxxxxxxx')

    def test_strings_cannot_double_forever(self):
        decls = ['string s0 = "0123456789abcdef";'] + [f"string s{i} = s{i - 1} + s{i - 1};" for i in range(1, 40)]
        e = error_of("simple S { parameters: " + " ".join(decls) + " }\nnetwork n { submodules: s: S; }")
        assert e.message == "the string would be 33554432 characters long (at most 16777216)"


# ---------------------------------------------------------------- files and networks


class TestFilesAndNetworks:
    def test_non_utf8_neighbour_declaring_a_needed_type(self, tmp_path):
        (tmp_path / "top.ned").write_text("network n { submodules: x: Probe; }\n")
        (tmp_path / "probe.ned").write_bytes(b"// \xff\xfe\nsimple Probe { }\n")
        with pytest.raises(NedError) as info:
            load_network(tmp_path / "top.ned")
        assert str(info.value) == (
            f"{tmp_path / 'top.ned'}:1:28: unknown type 'Probe'"
            f" (note: {tmp_path / 'probe.ned'}:1:4: not UTF-8 text (byte 0xff); .ned files must be UTF-8)"
        )

    def test_non_utf8_neighbour_not_needed_is_skipped(self, tmp_path, capsys):
        (tmp_path / "top.ned").write_text("package p;\nnetwork n { submodules: x: Probe; h: HCA; }\n")
        (tmp_path / "probe.ned").write_text("package p;\nsimple Probe { }\n")
        (tmp_path / "junk.ned").write_bytes(b"package p;\n\x80\x81")
        assert [m.path for m in load_network(tmp_path / "top.ned").simple_modules()] == ["n.x", "n.h"]
        code, out, err = cli(capsys, "topo", "show", str(tmp_path / "top.ned"))
        assert code == 0, err

    def test_non_utf8_topology(self, tmp_path, capsys):
        (tmp_path / "bad.ned").write_bytes(b"network n {\n  submodules: \xe9t\xe9: HCA; }\n")
        with pytest.raises(NedError) as info:
            load_network(tmp_path / "bad.ned")
        assert str(info.value) == f"{tmp_path / 'bad.ned'}:2:15: not UTF-8 text (byte 0xe9); .ned files must be UTF-8"
        msg = one_cli_error(capsys, "topo", "show", str(tmp_path / "bad.ned"))
        assert msg.startswith(f"{tmp_path / 'bad.ned'}:2:15: not UTF-8 text (byte 0xe9)")

    def test_unreadable_neighbour(self, tmp_path):
        (tmp_path / "top.ned").write_text("network n { submodules: x: Probe; }\n")
        (tmp_path / "dir.ned").mkdir()
        with pytest.raises(NedError, match=rf"unknown type 'Probe' \(1 other .ned file in .*{tmp_path.name} could not be read\)$"):
            load_network(tmp_path / "top.ned")

    def test_empty_network_elaborates(self):
        net = elaborate("network n { }")
        assert [m.path for m in net.modules()] == ["n"]

    @pytest.mark.parametrize("command", [["routes", "--check"], ["routes"], ["run", "--no-progress"]])
    def test_empty_network_cannot_be_routed_or_run(self, capsys, tmp_path, command):
        (tmp_path / "empty.ned").write_text("// nothing\nnetwork n { }\n")
        msg = one_cli_error(capsys, *command, str(tmp_path / "empty.ned"))
        assert msg == f"{tmp_path / 'empty.ned'}:2:9: network 'n' has no InfiniBand nodes (no Switch or HCA)"

    def test_messages_stay_on_one_line(self):
        e = error_of('simple S { parameters: int x @unit(n\ns); }\nnetwork n { submodules: s: S; }')
        assert len(str(e).splitlines()) == 1 and "\\n" in str(e)
        e = NedError("a\u2028b\rc", None)
        assert str(e) == "a\\u2028b\\rc"

    def test_pattern_indices(self):
        for pattern in (f"**.sw[{BIG}].lid", "**.sw[²].lid", f"**.sw[1..{BIG}].lid", f"**.x{{1..{BIG}}}"):
            with pytest.raises(NedError, match="invalid pattern"):
                elaborate("network n { submodules: sw: Switch; }", overrides={pattern: "1"})
        e = error_of(f"network n {{\n  parameters:\n    sw[{BIG}].lid = 1;\n  submodules:\n    sw: Switch;\n}}")
        assert e.message.startswith("invalid pattern 'sw[1000") and "is too large for an index" in e.message


def test_the_documented_limit_errors_are_real():
    section = DOC.read_text().split("## Limits", 1)[1].split("\n## ", 1)[0]
    shown = re.findall(r"^(big\.ned|ports\.ned):(\d+):(\d+): (.*)$", section, re.M)
    assert len(shown) == 2
    big = error_of("network n {\n  submodules:\n    sw[1000000]: Switch;\n}")
    ports = error_of("network n {\n  submodules:\n    sw: Switch {\n      numPorts = 100000000; }\n}")
    assert [m for *_, m in shown] == [big.message, ports.message]


def test_limits_doctests():
    result = doctest.testmod(ibfabric.ned_like.limits)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------- fuzzing

SEEDS = [
    CHAIN,
    STAR,
    RING,
    FIG1.read_text(),
    """
module Rack
{
    parameters:
        int hosts = 4;
    gates:
        inout up;
    submodules:
        leaf: Switch { numPorts = hosts + 1; }
        host[hosts]: HCA;
    connections:
        up <--> leaf.port[hosts + 1];
        for i=0..hosts-1 { leaf.port[i+1] <--> Link <--> host[i].port[1]; }
}
simple Node extends HCA { parameters: load = 0.25; }
network pod
{
    parameters:
        **.routingDelay = 50ns;
        string kind = "HCA";
    submodules:
        rack[2]: Rack { hosts = 2 + index; }
        spine: Switch { numPorts = 2; }
        extra: <kind> like IHost if sizeof(rack) > 1;
    connections allowunconnected:
        rack[0].up <--> Link { length = 2m; } <--> spine.port[1];
        rack[1].up <--> Link <--> spine.port[2];
}
""",
]

TOKENS = [
    "{", "}", ";", "[", "]", "(", ")", ":", ",", ".", "..", "=", "<-->", "-->", "<--", "++", "$i", "+", "-", "*",
    "/", "%", "^", "?", "&&", "||", "!", "==", "<", ">", "for i=0..3 ", "if ", "if false ", "index", "sizeof(sw)",
    "this.", "extends ", "like ", "network ", "module ", "simple ", "channel ", "moduleinterface ", "parameters:",
    "gates:", "submodules:", "connections:", "allowunconnected", "default(", "int ", "double ", "string ", "bool ",
    "@unit(ns)", "Switch", "HCA", "Link", "SubnetManager", "IHost", "numPorts", "lid", "port", "sw", "h", "n", "k",
    "0", "1", "-1", "4", "254", "255", "65536", "100ns", "2.5Gbps", "1e999", "1e308s", "9223372036854775807",
    "9223372036854775808", BIG, "1" + "0" * 30, "2^63", "2^1024", '"x"', '"' + "y" * 1000 + '"', '"\\q"',
    "\x00", "\xff", "é", "\u2028", "\r", "\n", "//", "sw[1000000]", "sw[-1]", "numPorts = 100000000;",
    "for i=0..1000000000000 { }", "n2: chain;", "n2: star;", "x: Rack;", "abs(" * 150, ")" * 150,
]


@st.composite
def mutated(draw) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "duplicate", "replace", "insert", "insert", "nest", "swap_words"]))
        n = len(text)
        i = draw(st.integers(0, n))
        j = min(n, i + draw(st.integers(0, 40)))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] * draw(st.integers(1, 3)) + text[j:]
        elif kind == "replace":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i + 1 :]
        elif kind == "insert":
            text = text[:i] + " " + draw(st.sampled_from(TOKENS)) + " " + text[i:]
        elif kind == "nest":  # wrap a number in deep unary nesting, or a connection in deep loops
            depth = draw(st.sampled_from([10, 99, 101, 400]))
            m = list(re.finditer(r"\d+", text))
            if m and draw(st.booleans()):
                d = m[draw(st.integers(0, len(m) - 1))]
                text = text[: d.start()] + "+(" * depth + d.group() + ")" * depth + text[d.end() :]
            else:
                k = text.find("connections")
                k = text.find(":", k) + 1 if k >= 0 else -1
                if k > 0:
                    end = text.rfind("}")
                    text = text[:k] + " for q=0..0 {" * depth + text[k:end] + "}" * depth + text[end:]
        else:
            words = re.findall(r"[A-Za-z_]\w*|\d+", text)
            if len(words) > 1:
                a, b = draw(st.sampled_from(words)), draw(st.sampled_from(words))
                text = text.replace(a, b, 1)
    return text


SMALL = Limits(max_modules=300, max_gates=20_000, max_vector_size=5_000, max_loop_iterations=20_000)
FUZZ = settings(max_examples=200, deadline=4000, suppress_health_check=list(HealthCheck), database=None)


def assert_clean(error: BaseException, file: str | None = None) -> None:
    assert isinstance(error, IbfabricError), f"{type(error).__name__}: {error}"
    text = str(error)
    assert text and len(text.splitlines()) == 1, text
    if file is not None and isinstance(error, NedError):
        assert error.file == file or error.file.startswith("<override"), text


class TestFuzz:
    @FUZZ
    @given(mutated())
    def test_parse_and_elaborate(self, text):
        try:
            parse(text, "fuzz.ned")
            elaborate(text, filename="fuzz.ned", limits=SMALL)
        except Exception as e:  # noqa: BLE001 - the assertion says what it was
            assert_clean(e, "fuzz.ned")

    @FUZZ
    @given(mutated(), st.sampled_from([{}, {"**.numPorts": "300"}, {"**.load": BIG}, {"**.lid": "1e999"},
                                       {"**.length": "+(" * 200 + "1m" + ")" * 200}, {"**.sw[1..2].lid": "2^40"}]))
    def test_elaborate_with_overrides(self, text, overrides):
        try:
            elaborate(text, filename="fuzz.ned", limits=SMALL, overrides=overrides)
        except Exception as e:  # noqa: BLE001
            assert_clean(e, "fuzz.ned")

    @settings(FUZZ, max_examples=60)
    @given(mutated())
    def test_build_a_simulation(self, text):
        from ibfabric.simulation import Simulation

        try:
            net = elaborate(text, filename="fuzz.ned", limits=SMALL)
        except NedError:
            return
        try:
            Simulation(text, limits=SMALL, deadlock_interval=0, optional_overrides={"**.traffic": '""'})
        except Exception as e:  # noqa: BLE001
            assert_clean(e)
        assert net is not None
