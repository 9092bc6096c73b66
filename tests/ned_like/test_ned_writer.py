"""The writer: write_ned(net) elaborates back to the same network, and reads well."""

import pytest

from ibfabric.ned_like import NedError, TypeLibrary, elaborate, write_ned
from ibfabric.ned_like.model import ElaboratedNetwork, ModuleInstance, Value


def round_trip(src: str, library=None, **kw) -> tuple[ElaboratedNetwork, str]:
    net = elaborate(src, library=library, **kw)
    text = write_ned(net, library=library)
    again = elaborate(text, library=library)
    assert again.canonical() == net.canonical(), text
    return net, text


class TestFlatNetworks:
    def test_small_ib_network(self):
        _, text = round_trip(
            """
            network fig1 {
                parameters: sw[1].routingDelay = 50ns;
                submodules:
                    sw[2]: Switch { numPorts = 4; }
                    hca[4]: HCA { lid = 10 + index; }
                connections:
                    for i=0..3 { sw[int(i / 2)].port[i % 2 + 1] <--> Link { length = 2m; } <--> hca[i].port[1]; }
                    sw[0].port[4] <--> Link <--> sw[1].port[4];
            }
            """
        )
        assert text == (
            "network fig1\n"
            "{\n"
            "    parameters:\n"
            "        sw[1].routingDelay = 50ns;\n"
            "    submodules:\n"
            "        sw[2]: Switch {\n"
            "            numPorts = 4;\n"
            "        }\n"
            "        hca[4]: HCA {\n"
            "            lid = index + 10;\n"
            "        }\n"
            "    connections allowunconnected:\n"
            "        sw[0].port[1] <--> Link { length = 2m; } <--> hca[0].port[1];\n"
            "        sw[0].port[2] <--> Link { length = 2m; } <--> hca[1].port[1];\n"
            "        sw[1].port[1] <--> Link { length = 2m; } <--> hca[2].port[1];\n"
            "        sw[1].port[2] <--> Link { length = 2m; } <--> hca[3].port[1];\n"
            "        sw[0].port[4] <--> Link <--> sw[1].port[4];\n"
            "}\n"
        )

    def test_only_values_that_differ_from_defaults_are_written(self):
        _, text = round_trip(
            "network n { submodules: s[3]: S { a = index == 2 ? 5 : 1; } }",
            library=_lib_with("simple S { parameters: int a = 1; int b = a * 2; string name = \"s\" + string(a); }"),
        )
        # b and name follow from a through their defaults
        assert "s[2].a = 5;" in text and ".b =" not in text and "name" not in text

    def test_mode_in_body_and_exceptions_as_deep_assignments(self):
        net, text = round_trip(
            "network n { submodules: sw[5]: Switch { numVLs = index == 3 ? 4 : 8; } }"
        )
        assert "sw[5]: Switch {\n            numVLs = 8;" in text
        assert "sw[3].numVLs = 4;" in text

    def test_overridden_values_are_written(self):
        _, text = round_trip(
            "network n { submodules: sw[2]: Switch; sm: SubnetManager; }",
            overrides={"**.sw[1].lid": "9", "**.routing": "updn"},
        )
        assert "sw[1].lid = 9;" in text and 'routing = "updn";' in text

    def test_strings_are_escaped(self):
        _, text = round_trip('network n { submodules: sw: Switch { nodeDesc = "a \\"quoted\\"\\n\\\\ desc"; } }')
        assert 'nodeDesc = "a \\"quoted\\"\\n\\\\ desc";' in text

    def test_gate_halves_and_one_way_connections(self):
        _, text = round_trip(
            """
            network n { submodules: a: HCA; b: HCA;
                connections:
                    a.port$o[1] --> DelayChannel { delay = 3ns; } --> b.port$i[1];
                    a.port$i[1] <-- b.port$o[1];
            }
            """
        )
        assert "a.port$o[1] --> DelayChannel { delay = 3ns; } --> b.port$i[1];" in text
        assert "b.port$o[1] --> a.port$i[1];" in text

    def test_unsized_gate_vectors_get_sizes_in_the_body(self):
        lib = _lib_with("simple Hub { gates: inout port[]; }")
        _, text = round_trip(
            "network n { submodules: hub[2]: Hub; h[3]: HCA;\n"
            " connections: for i=0..2 { hub[i % 2].port++ <--> h[i].port[1]; } }",
            library=lib,
        )
        assert "port[(index == 1 ? 1 : 2)];" in text


class TestDeclaredTypes:
    def test_types_missing_from_the_library_are_declared(self):
        _, text = round_trip(
            """
            package demo;
            simple Node { parameters: int id = 3; double rate @unit(Gbps) = 2.5Gbps; bool on = true;
                          gates: input in; output out; inout p[2]; }
            channel Wire { parameters: double delay @unit(us) = 1us; }
            network net { submodules: n[2]: Node; connections: n[0].out --> Wire --> n[1].in; }
            """
        )
        assert text.startswith("package demo;\n")
        assert "simple Node\n{\n    parameters:\n        int id;\n        double rate @unit(bps);\n        bool on;\n" in text
        assert "inout p[];" in text and "channel Wire" in text
        assert "n[0].out --> Wire { delay = 1000ns; } --> n[1].in;" in text

    def test_types_of_several_packages(self):
        lib = _lib_with("package a.b; simple X { parameters: int k = 1; }")
        lib.add_source("package c; simple X { parameters: string s = \"x\"; } simple Y {}", "<c>")
        net = elaborate("network n { submodules: x1: a.b.X; x2: c.X; y: c.Y; }", library=lib)
        text = write_ned(net)  # without the library: all three are declared
        assert text.startswith("package c;\n")
        assert "simple a.b.X\n" in text and "simple X\n" in text
        assert "x1: a.b.X {" in text and "x2: X {" in text
        assert elaborate(text).canonical() == net.canonical()

    def test_types_of_a_library_are_imported(self):
        lib = _lib_with("package lab.parts; simple Probe { parameters: int k = 1; gates: inout port[]; }")
        _, text = round_trip(
            "import lab.parts.Probe;\nnetwork n { submodules: p: Probe { k = 2; } }", library=lib
        )
        assert "import lab.parts.Probe;" in text and "p: Probe {" in text

    def test_library_that_disagrees_with_the_network(self):
        net = elaborate("simple Switch2 { parameters: int a = 1; }\nnetwork n { submodules: s: Switch2; }")
        lib = _lib_with("simple Switch2 { parameters: int b = 1; }")
        with pytest.raises(NedError, match="has other parameters"):
            write_ned(net, library=lib)


class TestCompoundModules:
    SRC = """
    module Host {
        parameters: int ports = 1;
        gates: inout port[ports];
        submodules: nic: HCA { numPorts = ports; }
        connections: for i=0..ports-1 { port[i] <--> nic.port[i+1]; }
    }
    network n {
        submodules:
            sw: Switch;
            host[3]: Host { ports = index == 2 ? 2 : 1; nic.lid = index + 1; }
        connections:
            for i=0..2 { sw.port[i+1] <--> Link { length = 4m; } <--> host[i].port[0]; }
    }
    """

    def test_one_module_type_per_structure(self):
        net, text = round_trip(self.SRC)
        # the built-in IHost is visible, so the generated interface takes another name
        assert "moduleinterface IHost_2\n" in text
        assert "module Host like IHost_2\n" in text and "module Host_2 like IHost_2\n" in text
        assert 'host[3]: <(index == 2 ? "Host_2" : "Host")> like IHost_2;' in text
        assert "host[0].nic.lid = 1;" in text

    def test_identical_structures_share_a_type(self):
        _, text = round_trip(self.SRC.replace("index == 2 ? 2 : 1", "1"))
        assert "module Host_2" not in text and "host[3]: Host;" in text
        assert "host[1].nic.lid = 2;" in text and "host[*]" not in text

    def test_shared_values_inside_compound_modules(self):
        _, text = round_trip(self.SRC.replace("nic.lid = index + 1;", "nic.mtu = index == 1 ? 512B : 4096B;"))
        assert "host[1].nic.mtu = 512B;" in text
        assert "host[*].nic.mtu = 4096B;" in text
        assert text.index("host[1].nic.mtu") < text.index("host[*].nic.mtu")

    def test_nested_compounds_and_channels_inside(self):
        round_trip(
            """
            module Leaf { gates: inout up; submodules: sw: Switch { numPorts = 2; } h: HCA;
                          connections: up <--> sw.port[2]; sw.port[1] <--> Link { length = 1cm; } <--> h.port[1]; }
            module Pod { parameters: int n = 2; gates: inout up[n];
                         submodules: leaf[n]: Leaf; connections: for i=0..n-1 { up[i] <--> leaf[i].up; } }
            network n { submodules: pod[2]: Pod { n = index + 1; } spine: Switch;
                        connections: spine.port[1] <--> Link <--> pod[0].up[0];
                                     spine.port[2] <--> Link <--> pod[1].up[1]; }
            """
        )


class TestMixedVectors:
    def test_like_vector_with_library_interface(self):
        lib = _lib_with("simple Probe like IHost { parameters: int k = 0; gates: inout port[]; }")
        _, text = round_trip(
            "network n { submodules: h[3]: <(index == 1 ? \"Probe\" : \"HCA\")> like IHost; }", library=lib
        )
        assert '<(index == 1 ? "Probe" : "HCA")> like IHost' in text

    def test_like_vector_of_declared_types(self):
        _, text = round_trip(
            """
            moduleinterface I { }
            simple A like I { parameters: int x = 1; }
            simple B like I { parameters: string y = "b"; }
            network n { submodules: v[4]: <(index % 2 == 0 ? "A" : "B")> like I; }
            """
        )
        assert "moduleinterface IV" in text
        assert '<(index == 1 || index == 3 ? "B" : "A")> like IV' in text


def _lib_with(src: str) -> TypeLibrary:
    lib = TypeLibrary.default()
    lib.add_source(src, "<lib>")
    return lib


class TestOrder:
    def test_modules_and_connections_keep_their_order(self):
        net = elaborate(
            "network n { submodules: c: SubnetManager; a: Switch; b[2]: HCA;\n"
            " connections: b[1].port[1] <--> a.port[2]; b[0].port[1] <--> a.port[1]; }"
        )
        again = elaborate(write_ned(net))
        assert [m.path for m in again.modules()] == ["n", "n.c", "n.a", "n.b[0]", "n.b[1]"]
        assert [str(c.src) for c in again.root.connections] == ["n.b[1].port[1]", "n.b[0].port[1]"]
        assert isinstance(again.root, ModuleInstance)
        assert again.module("n.c").params["routing"] == Value("minhop")
