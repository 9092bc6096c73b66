"""Elaboration: parameters, gates, submodules, connections, like, deep assignments, overrides."""

import pytest

from ibfabric.ned_like import NedError, OverrideSet, TypeLibrary, elaborate
from ibfabric.ned_like.model import GateRef, GateVector, Value

IB = "ibfabric.components"

# Two switches, four HCAs: every switch has two HCAs on ports 1 and 2, and
# the switches are joined on port 3.
SMALL_IB = """
network small
{
    parameters:
        int numSwitches = 2;
    submodules:
        sw[numSwitches]: Switch { numPorts = 3; lid = index + 1; }
        hca[2 * numSwitches]: HCA;
    connections allowunconnected:
        for s=0..numSwitches-1, p=1..2 {
            sw[s].port[p] <--> Link { length = 2m; } <--> hca[2*s + p - 1].port[1];
        }
        sw[0].port[3] <--> Link <--> sw[1].port[3];
}
"""


def error_of(src: str, **kw) -> NedError:
    with pytest.raises(NedError) as info:
        elaborate(src, filename="t.ned", **kw)
    return info.value


class TestSmallInfinibandNetwork:
    def setup_method(self):
        self.net = elaborate(SMALL_IB, filename="small.ned")

    def test_modules(self):
        paths = [m.path for m in self.net.simple_modules()]
        assert paths == ["small.sw[0]", "small.sw[1]", "small.hca[0]", "small.hca[1]", "small.hca[2]", "small.hca[3]"]
        sw1 = self.net.module("small.sw[1]")
        assert (sw1.name, sw1.index, sw1.vector_size, sw1.type_name) == ("sw", 1, 2, f"{IB}.Switch")
        assert self.net.root.type_name == "small" and self.net.name == "small"
        assert self.net.source == "small.ned"

    def test_every_parameter_is_evaluated(self):
        sw0 = self.net.module("small.sw[0]")
        assert sw0.params["numPorts"] == Value(3)
        assert sw0.params["lid"] == Value(1)
        assert sw0.params["routingDelay"] == Value(100.0, "ns")
        assert sw0.params["vlBufferSize"] == Value(16384, "B") and type(sw0.params["vlBufferSize"].value) is int
        assert sw0.params["crossbarSpeedup"] == Value(1.25) and type(sw0.params["crossbarSpeedup"].value) is float
        assert sw0.params["arbiter"] == Value("iba-vlarb")
        declared = TypeLibrary.default().effective(f"{IB}.Switch").params
        assert list(sw0.params) == list(declared)  # every declared parameter, in order
        assert self.net.module("small.hca[3]").params["mtu"] == Value(2048, "B")

    def test_gates(self):
        assert self.net.module("small.sw[0]").gates == (GateVector("port", "inout", 4),)
        assert self.net.module("small.hca[0]").gate("port") == GateVector("port", "inout", 2)

    def test_connections(self):
        conns = self.net.root.connections
        assert len(conns) == 5
        first = conns[0]
        assert first.src == GateRef("small.sw[0]", "port", 1) and first.dst == GateRef("small.hca[0]", "port", 1)
        assert first.bidirectional
        assert first.channel.type_name == f"{IB}.Link"
        assert first.channel.params["length"] == Value(2.0, "m")
        assert first.channel.params["propagationDelay"] == Value(5.0, "ns/m")
        assert [str(c.dst) for c in conns[:4]] == [f"small.hca[{i}].port[1]" for i in range(4)]
        assert conns[4].channel.params["length"] == Value(1.0, "m")
        assert str(first.location) == "small.ned:11:13"


class TestForLoops:
    def test_ranges_are_inclusive(self):
        # for i=0..3 runs 0, 1, 2 and 3: four connections
        net = elaborate(
            """
            simple N { gates: output o[4]; input i[4]; }
            network n { submodules: a: N; b: N;
                connections: for i=0..3 { a.o[i] --> b.i[i]; } }
            """
        )
        assert [c.src.index for c in net.root.connections] == [0, 1, 2, 3]

    def test_empty_and_dependent_ranges(self):
        net = elaborate(
            """
            simple N { gates: output o[10]; input i[10]; }
            network n { submodules: a: N; b: N;
                connections:
                    for i=0..-1 { a.o[0] --> b.i[0]; }
                    for i=0..2, j=i+1..2 { a.o[3*i+j] --> b.i[3*i+j]; }
            }
            """
        )
        assert [c.src.index for c in net.root.connections] == [1, 2, 5]

    def test_suffix_loop_and_condition(self):
        net = elaborate(
            """
            simple N { gates: output o[6]; input i[6]; }
            network n { submodules: a: N; b: N;
                connections: a.o[k] --> b.i[k] for k=0..5 if k % 2 == 0; }
            """
        )
        assert [c.src.index for c in net.root.connections] == [0, 2, 4]

    def test_bound_must_be_an_integer(self):
        e = error_of("simple N { gates: output o; }\nnetwork n { submodules: a: N; connections: for i=0..1.5 { } }")
        assert e.message == "a loop bound must be an integer, got 1.5" and (e.line, e.column) == (2, 53)


class TestLimits:
    def test_huge_vectors_and_loops_are_errors_not_hangs(self):
        e = error_of("network n { submodules: sw[2 ^ 30]: Switch; }")
        assert e.message == (
            "the size of submodule vector 'sw' must be from 0 to 1000000, got 1073741824;"
            " raise it with IBFABRIC_MAX_VECTOR_SIZE=N or limits=Limits(max_vector_size=N)"
        )
        e = error_of("simple S { gates: inout p[-1]; }\nnetwork n { submodules: s: S; }")
        assert e.message == "the size of gate vector 'p' of n.s (S) must be from 0 to 1000000, got -1"
        e = error_of("network n { connections: for i=0..10^9 { } }")
        assert e.message == (
            "loop 'i' would run 1000000001 times, more than the limit of 2000000 loop iterations per network;"
            " raise it with IBFABRIC_MAX_LOOP_ITERATIONS=N or limits=Limits(max_loop_iterations=N)"
        )


class TestConditions:
    def test_if_blocks_nest(self):
        net = elaborate(
            """
            simple N { gates: output o[4]; input i[4]; }
            network n {
                parameters: bool wide = true;
                submodules: a: N; b: N;
                connections:
                    for i=0..3 { if wide { if i > 1 { a.o[i] --> b.i[i]; } } }
                    if !wide { a.o[0] --> b.i[0]; }
            }
            """
        )
        assert [c.src.index for c in net.root.connections] == [2, 3]

    def test_conditional_submodules_and_sizeof(self):
        net = elaborate(
            """
            network n {
                parameters: int n = 3;
                submodules:
                    hca[n]: HCA;
                    sw: Switch if sizeof(hca) > 2 { numPorts = sizeof(hca); }
                    none: Switch if n > 5;
            }
            """
        )
        assert [m.path for m in net.simple_modules()] == ["n.hca[0]", "n.hca[1]", "n.hca[2]", "n.sw"]
        assert net.module("n.sw").params["numPorts"] == Value(3)

    def test_condition_must_be_bool(self):
        e = error_of("network n { submodules: s: Switch if 1; }")
        assert "needs a bool" in e.message and (e.line, e.column) == (1, 38)


class TestParameters:
    def test_defaults_use_other_parameters_in_any_order(self):
        net = elaborate(
            """
            simple S { parameters: int b = a * 2; int a = 3; string s = "n" + string(b); gates: inout p[b]; }
            network n { submodules: s: S; }
            """
        )
        m = net.module("n.s")
        assert m.params == {"b": Value(6), "a": Value(3), "s": Value("n6")}
        assert m.gate("p").size == 6

    def test_index_this_and_submodule_parameters(self):
        net = elaborate(
            """
            simple S { parameters: int k = index * 10; int j = 0; }
            network n {
                parameters: int base = 5;
                submodules:
                    s[3]: S { j = this.k + base; }
                    t: S { k = 0; j = s[2].k + sizeof(s); }
            }
            """
        )
        assert [m.params["j"] for m in net.simple_modules()] == [Value(5), Value(15), Value(25), Value(23)]

    def test_cyclic_defaults(self):
        e = error_of(
            "simple S {\n  parameters:\n    int x = y + 1;\n    int y = x * 2;\n}\nnetwork n { submodules: s: S; }"
        )
        assert str(e) == "t.ned:3:13: parameter 'x' of n.s (S) depends on itself (x -> y -> x)"

    def test_missing_value(self):
        e = error_of("simple S { parameters: int x; }\nnetwork n {\n  submodules:\n    s[3]: S;\n}")
        assert str(e) == "t.ned:4:5: parameter 'x' of n.s[0] (S) has no value"

    def test_unknown_parameter_in_body(self):
        e = error_of("network n {\n  submodules:\n    sw: Switch { lidd = 3; }\n}")
        assert str(e) == "t.ned:3:18: unknown parameter 'lidd' of Switch; did you mean 'lid'?"

    def test_wrong_unit(self):
        e = error_of("network n {\n  submodules:\n    sw: Switch { routingDelay = 4096B; }\n}")
        assert str(e) == "t.ned:3:33: parameter 'routingDelay' expects a time (like 1ns), got 4096B"

    def test_bare_zero_is_accepted_for_a_unit(self):
        net = elaborate("network n { submodules: sw: Switch { routingDelay = 0; } }")
        assert net.module("n.sw").params["routingDelay"] == Value(0.0, "ns")

    def test_int_parameter_rejects_fraction(self):
        e = error_of("network n { submodules: sw: Switch { numPorts = 7 / 2; } }")
        assert e.message == "parameter 'numPorts' expects an integer, got 3.5"

    def test_whole_double_is_an_int(self):
        net = elaborate("network n { submodules: sw: Switch { numPorts = 8 / 2; } }")
        assert net.module("n.sw").params["numPorts"] == Value(4)

    def test_network_parameters(self):
        net = elaborate("network n { parameters: int k = 2; double d @unit(us) = 1us; }")
        assert net.root.params == {"k": Value(2), "d": Value(1000.0, "ns")}


class TestDeepAssignments:
    def test_literal_and_wildcard(self):
        net = elaborate(
            """
            network n {
                parameters:
                    sw[3].lid = 7;
                    **.routingDelay = 50ns;
                    sw[1..2].numPorts = 8;
                submodules:
                    sw[4]: Switch { lid = index; }
            }
            """
        )
        lids = [m.params["lid"].value for m in net.simple_modules()]
        assert lids == [0, 1, 2, 7]  # the deep assignment beats the body
        assert {m.params["routingDelay"] for m in net.simple_modules()} == {Value(50.0, "ns")}
        assert [m.params["numPorts"].value for m in net.simple_modules()] == [36, 8, 8, 36]

    def test_first_assignment_in_a_block_wins(self):
        net = elaborate("network n { parameters: sw.lid = 1; **.lid = 2; submodules: sw: Switch; h: HCA; }")
        assert net.module("n.sw").params["lid"] == Value(1)
        assert net.module("n.h").params["lid"] == Value(2)

    def test_outermost_module_wins(self):
        net = elaborate(
            """
            module Rack {
                parameters: leaf.lid = 1; **.lmc = 1;
                submodules: leaf: Switch { lid = 5; numPorts = 4; };
            }
            network n {
                parameters: rack[1].leaf.lid = 3;
                submodules: rack[2]: Rack { leaf.numPorts = 6; };
            }
            """
        )
        assert net.module("n.rack[0].leaf").params["lid"] == Value(1)  # Rack's block beats the body
        assert net.module("n.rack[1].leaf").params["lid"] == Value(3)  # the network beats Rack
        assert net.module("n.rack[0].leaf").params["numPorts"] == Value(6)  # the network's body beats Rack's body
        assert net.module("n.rack[0].leaf").params["lmc"] == Value(1)

    def test_default_assignments_count_only_without_a_plain_one(self):
        net = elaborate(
            """
            network n {
                parameters: **.lid = default(9); sw[0].lid = 4;
                submodules: sw[2]: Switch; h: HCA { lid = default(2); }
            }
            """
        )
        assert [m.params["lid"].value for m in net.simple_modules()] == [4, 9, 9]

    def test_literal_assignment_matching_nothing(self):
        e = error_of("network n {\n  parameters:\n    sw[3].lid = 7;\n  submodules:\n    sw[2]: Switch;\n}")
        assert str(e) == "t.ned:3:5: deep assignment 'sw[3].lid' matches no parameter (n.sw[3].lid)"

    def test_wildcard_matching_nothing_is_fine(self):
        elaborate("network n { parameters: **.nothing = 1; }")


class TestOverrides:
    def test_override_beats_every_assignment(self):
        ov = OverrideSet({"**.sw[0].lid": "11", "n.k": "3", "**.arbiter": "round-robin", "**.numVLs": "2 * 2"})
        net = elaborate(
            """
            network n {
                parameters: int k = 1; sw[0].lid = 7;
                submodules: sw[k]: Switch { lid = 5; }
            }
            """,
            overrides=ov,
        )
        assert len(net.simple_modules()) == 3
        assert net.module("n.sw[0]").params["lid"] == Value(11)
        assert net.module("n.sw[1]").params["lid"] == Value(5)
        assert net.module("n.sw[2]").params["arbiter"] == Value("round-robin")
        assert net.module("n.sw[2]").params["numVLs"] == Value(4)
        assert ov.unused() == []

    def test_first_matching_override_wins_and_unused_are_reported(self):
        ov = OverrideSet([("**.sw.lid", "1"), ("**.lid", "2"), ("**.nope", "3")])
        net = elaborate("network n { submodules: sw: Switch; h: HCA; }", overrides=ov)
        assert net.module("n.sw").params["lid"] == Value(1)
        assert net.module("n.h").params["lid"] == Value(2)
        assert ov.unused() == ["**.nope"]

    def test_string_values(self):
        net = elaborate(
            "network n { submodules: sm: SubnetManager; }",
            overrides={"**.routing": '"updn"', "**.routingOptions": "root=1"},
        )
        assert net.module("n.sm").params["routing"] == Value("updn")
        assert net.module("n.sm").params["routingOptions"] == Value("root=1")

    def test_channel_parameter_paths(self):
        net = elaborate(
            SMALL_IB,
            overrides={"small.sw[0].port[3].channel.length": "20m", "**.channel.width": '"12x"', "**.speed": "EDR"},
        )
        conns = net.root.connections
        assert conns[4].channel.params["length"] == Value(20.0, "m")
        assert {c.channel.params["width"].value for c in conns} == {"12x"}
        assert {c.channel.params["speed"].value for c in conns} == {"EDR"}

    def test_bad_override_value(self):
        with pytest.raises(NedError) as info:
            elaborate("network n { submodules: sw: Switch; }", overrides={"**.routingDelay": "4096B"})
        assert str(info.value) == (
            "<override **.routingDelay>:1:1: parameter 'routingDelay' expects a time (like 1ns), got 4096B"
            " (for n.sw.routingDelay)"
        )

    def test_override_syntax_error(self):
        with pytest.raises(NedError) as info:
            elaborate("network n { submodules: sw: Switch; }", overrides={"**.numPorts": "4 +"})
        assert info.value.file == "<override **.numPorts>" and info.value.column == 4


class TestLike:
    SRC = """
    simple Fancy like IHost { parameters: int n = 1; gates: inout port[n + 1]; }
    simple Plain { gates: inout port[2]; }
    network n {
        parameters: string hostType = "HCA";
        submodules: host[2]: <hostType> like IHost;
    }
    """

    def test_type_from_parameter(self):
        net = elaborate(self.SRC)
        assert [m.type_name for m in net.simple_modules()] == [f"{IB}.HCA"] * 2

    def test_type_from_override(self):
        net = elaborate(self.SRC, overrides={"n.hostType": "Fancy"})
        assert [m.type_name for m in net.simple_modules()] == ["Fancy"] * 2

    def test_type_per_element(self):
        net = elaborate(self.SRC.replace("<hostType>", '<(index == 0 ? "Fancy" : hostType)>'))
        assert [m.type_name for m in net.simple_modules()] == ["Fancy", f"{IB}.HCA"]

    def test_typename_assignment(self):
        src = self.SRC.replace("<hostType>", "<>").replace("submodules:", "host[1].typename = \"Fancy\"; **.typename = \"HCA\"; submodules:")
        net = elaborate(src)
        assert [m.type_name for m in net.simple_modules()] == [f"{IB}.HCA", "Fancy"]
        net = elaborate(src, overrides={"**.host[0].typename": "Fancy"})
        assert [m.type_name for m in net.simple_modules()] == ["Fancy", "Fancy"]

    def test_typename_plain_beats_outer_default(self):
        # as for every parameter: a plain assignment at any level beats each default(...)
        src = """
        simple Fancy like IHost { gates: inout port[2]; }
        module Outer { parameters: h.typename = "Fancy"; submodules: h: <> like IHost; }
        network n { parameters: o.h.typename = default("HCA"); submodules: o: Outer; }
        """
        assert [m.type_name for m in elaborate(src).simple_modules()] == ["Fancy"]
        assert [m.type_name for m in elaborate(src.replace('default("HCA")', '"HCA"')).simple_modules()] == [f"{IB}.HCA"]

    def test_type_that_does_not_implement_the_interface(self):
        e = error_of(self.SRC.replace('"HCA"', '"Plain"'))
        assert e.message == "type 'Plain' does not implement 'IHost'"
        assert (e.line, e.column) == (6, 31)  # at the type expression

    def test_interface_gates_are_checked(self):
        e = error_of(
            "moduleinterface I { gates: inout port[]; }\nsimple S like I { gates: input port[2]; }\n"
            "network n { submodules: s: <\"S\"> like I; }"
        )
        assert e.message == "type 'S' does not implement 'I': it needs inout gate vector 'port'"

    def test_missing_typename(self):
        e = error_of("network n { submodules: h: <> like IHost; }")
        assert "no type for n.h" in e.message


class TestGates:
    def test_plusplus_grows_unsized_vectors(self):
        net = elaborate(
            """
            simple Hub { gates: inout port[]; }
            network n { submodules: hub: Hub; h[3]: HCA;
                connections: for i=0..2 { hub.port++ <--> h[i].port[1]; } }
            """
        )
        assert net.module("n.hub").gate("port").size == 3
        assert [c.src.index for c in net.root.connections] == [0, 1, 2]

    def test_plusplus_takes_the_first_free_gate(self):
        net = elaborate(
            """
            network n { submodules: sw: Switch { numPorts = 3; } h[3]: HCA;
                connections: sw.port[0] <--> h[0].port[0]; sw.port[2] <--> h[1].port[1];
                             sw.port++ <--> h[2].port[1]; }
            """
        )
        assert net.root.connections[2].src == GateRef("n.sw", "port", 1)

    def test_body_sizes_unsized_vectors(self):
        net = elaborate("simple Hub { gates: inout port[]; }\nnetwork n { submodules: hub[2]: Hub { gates: port[index + 2]; } }")
        assert [m.gate("port").size for m in net.simple_modules()] == [2, 3]

    def test_gate_halves(self):
        net = elaborate(
            """
            network n { submodules: a: HCA; b: HCA;
                connections: a.port$o[1] --> DelayChannel { delay = 2ns; } --> b.port$i[1];
                             a.port$i[1] <-- b.port$o[1]; }
            """
        )
        c1, c2 = net.root.connections
        assert (c1.src, c1.dst, c1.bidirectional) == (GateRef("n.a", "port", 1, "o"), GateRef("n.b", "port", 1, "i"), False)
        assert (c2.src, c2.dst) == (GateRef("n.b", "port", 1, "o"), GateRef("n.a", "port", 1, "i"))
        assert c1.channel.params == {"delay": Value(2.0, "ns")}

    def test_compound_gates_are_followed(self):
        net = elaborate(
            """
            module Host { gates: inout port; submodules: nic: HCA; connections: port <--> nic.port[1]; }
            network n { submodules: h: Host; sw: Switch;
                connections: sw.port[1] <--> Link { length = 5m; } <--> h.port; }
            """
        )
        (flat,) = net.flat_connections()
        assert (str(flat.src), str(flat.dst)) == ("n.sw.port[1]", "n.h.nic.port[1]")
        assert flat.channel.params["length"] == Value(5.0, "m")

    def test_inside_direction_of_own_gates(self):
        src = """
            simple P { gates: input in; output out; }
            module M { gates: input in; output out; submodules: p: P;
                connections: in --> p.in; p.out --> out; }
            network n { submodules: a: M; b: M; connections: a.out --> b.in; }
            """
        net = elaborate(src)
        assert [(str(c.src), str(c.dst)) for c in net.flat_connections()] == [("n.a.p.out", "n.b.p.in")]
        e = error_of(src.replace("p.out --> out", "p.out --> in"))
        assert e.message == (
            "n.a.in is an input gate of this module; inside it, it cannot be the receiving end of '-->'"
        )

    @pytest.mark.parametrize(
        "connection, message, column",
        [
            ("a.port[1] <--> b.port[1];\n    a.port[1] <--> c.port[1];", "gate n.a.port[1] is already connected (at t.ned:4:5)", 7),
            ("a.port[9] <--> b.port[1];", "index 9 out of range for gate vector n.a.port of size 2", 12),
            ("a.prot[1] <--> b.port[1];", "unknown gate 'prot' of n.a (HCA); its gates: port", 7),
            ("a.port <--> b.port[1];", "gate n.a.port is a vector; give an index or use '++'", 7),
            ("a.port[1] --> b.port[1];", "inout gate n.a.port needs '<-->', or a half (n.a.port$i or n.a.port$o) with '-->'", 7),
            ("a.port$i[1] --> b.port$i[1];", "n.a.port$i is an input half and cannot be the sending end of '-->'", 7),
            ("x.port[1] <--> b.port[1];", "unknown submodule 'x' of n", 5),
        ],
    )
    def test_errors(self, connection, message, column):
        e = error_of(f"network n {{\n  submodules: a: HCA; b: HCA; c: HCA;\n  connections:\n    {connection}\n}}")
        assert e.message == message
        assert (e.line, e.column) == (4 if "\n" not in connection else 5, column)

    def test_output_to_output(self):
        e = error_of("simple S { gates: input i; output o; }\nnetwork n { submodules: a: S; b: S;\n connections: a.o --> b.o; }")
        assert str(e) == "t.ned:3:25: n.b.o is an output gate and cannot be the receiving end of '-->'"

    def test_incompatible_kinds(self):
        e = error_of("simple S { gates: input i; }\nnetwork n { submodules: a: S; b: HCA;\n connections: a.i <--> b.port[1]; }")
        assert e.message == "'<-->' needs inout gates; n.a.i is an input gate"

    def test_two_channels_on_one_path(self):
        e = error_of(
            "module M { gates: inout p; submodules: h: HCA; connections: p <--> Link <--> h.port[1]; }\n"
            "network n { submodules: m: M; h: HCA; connections: m.p <--> Link <--> h.port[1]; }"
        )
        assert "has two channels" in e.message

    def test_each_direction_through_a_compound_gate_may_have_a_channel(self):
        # a.up$o -> b.up$i and b.up$o -> a.up$i: two paths, one channel each
        src = """
            module Box { gates: inout up; submodules: h: HCA; connections: up <--> h.port[1]; }
            network n { submodules: a: Box; b: Box;
                connections: a.up$o --> Link --> b.up$i;
                             b.up$o --> Link --> a.up$i; }
            """
        net = elaborate(src)
        assert len(net.root.connections) == 2
        net.canonical()  # the half connections form a cycle through the compound gates; this must end
        from ibfabric.ned_like import write_ned

        assert elaborate(write_ned(net)).canonical() == net.canonical()

    def test_unconnected_gates_are_fine(self):
        net = elaborate("network n { submodules: sw: Switch; }")
        assert net.root.connections == ()


class TestChannels:
    def test_untyped_channel_rule(self):
        net = elaborate(
            """
            simple S { gates: input i[3]; output o[3]; }
            network n { submodules: a: S; b: S;
                connections:
                    a.o[0] --> { delay = 1ns; } --> b.i[0];
                    a.o[1] --> { datarate = 1Gbps; } --> b.i[1];
                    a.o[2] --> b.i[2];
            }
            """
        )
        c = net.root.connections
        assert c[0].channel.type_name == f"{IB}.DelayChannel"
        assert c[1].channel.type_name == f"{IB}.DatarateChannel"
        assert c[1].channel.params == {"delay": Value(0.0, "ns"), "datarate": Value(1e9, "bps")}
        assert c[2].channel is None

    def test_extended_channel_defaults(self):
        net = elaborate(
            """
            channel LongLink extends Link { parameters: length = 30m; string note = "x"; }
            network n { submodules: a: HCA; b: HCA; connections: a.port[1] <--> LongLink <--> b.port[1]; }
            """
        )
        ch = net.root.connections[0].channel
        assert ch.type_name == "LongLink"
        assert ch.params["length"] == Value(30.0, "m") and ch.params["note"] == Value("x")
        assert ch.params["speed"] == Value("QDR")

    def test_unknown_channel_parameter(self):
        e = error_of("network n { submodules: a: HCA; b: HCA;\n connections: a.port[1] <--> Link { lenght = 1m; } <--> b.port[1]; }")
        assert str(e) == "t.ned:2:37: unknown parameter 'lenght' of Link; did you mean 'length'?"


class TestTypesAndNetworks:
    def test_unknown_type(self):
        e = error_of("network n {\n  submodules:\n    a: Swich;\n}")
        assert str(e) == "t.ned:3:8: unknown type 'Swich'; did you mean 'Switch'?"

    def test_extends_inherits_everything(self):
        net = elaborate(
            """
            simple Base { parameters: int a = 1; int b = a + 1; gates: inout port[b]; }
            simple Derived extends Base { parameters: a = 5; string extra = "e"; }
            network n { submodules: d: Derived; }
            """
        )
        d = net.module("n.d")
        assert d.params == {"a": Value(5), "b": Value(6), "extra": Value("e")}
        assert d.gate("port").size == 6

    def test_choosing_the_network(self):
        src = "network a { submodules: s: Switch; }\nnetwork b { submodules: h: HCA; }"
        assert elaborate(src, network="b").name == "b"
        e = error_of(src)
        assert "several networks" in e.message and "network=" in e.message
        assert "no network" in error_of("simple S {}").message
        assert "is a simple, not a network" in error_of("simple S {}", network="S").message

    def test_module_with_is_network_property(self):
        assert elaborate("module m { @isNetwork; submodules: s: Switch; }").name == "m"

    def test_nothing_half_built_on_error(self):
        ov = OverrideSet({"**.lid": "x"})
        with pytest.raises(NedError):
            elaborate(SMALL_IB, overrides=ov)
