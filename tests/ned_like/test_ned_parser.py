"""Parsing: every construct of the language, and syntax errors with exact positions."""

import pytest

from ibfabric.ned_like import NedError, ast, parse, parse_expression
from ibfabric.ned_like.model import Value


def error_of(text: str, filename: str = "t.ned") -> NedError:
    with pytest.raises(NedError) as info:
        parse(text, filename)
    return info.value


class TestFileStructure:
    def test_package_imports_and_comments(self):
        f = parse(
            """// a comment
            package my.pkg;   // trailing comment
            import a.b.Type;
            import c.d.*;
            simple Node {}
            """,
            "f.ned",
        )
        assert f.package == "my.pkg"
        assert [(i.name, i.wildcard) for i in f.imports] == [("a.b.Type", False), ("c.d", True)]
        node = f.types[0]
        assert node.qualname == "my.pkg.Node"
        assert node.package == "my.pkg" and node.imports == f.imports

    def test_no_package_means_unqualified_names(self):
        assert parse("simple A {}").types[0].qualname == "A"

    def test_package_must_come_first(self):
        e = error_of("import a.B;\npackage x;")
        assert (e.line, e.column) == (2, 9)
        assert "'package' must come first" in e.message

    def test_duplicate_type_in_file(self):
        e = error_of("simple A {}\nsimple A {}")
        assert (e.line, e.column) == (2, 8)
        assert "duplicate type 'A'" in e.message

    def test_every_kind_of_type(self):
        f = parse(
            """
            moduleinterface IThing { parameters: int n; gates: inout port[]; }
            channelinterface IChan { }
            simple A like IThing { parameters: int n = 1; gates: inout port[n]; }
            module M { submodules: a: A; }
            network N { submodules: m: M; }
            channel C extends Link { parameters: length = 3m; }
            module Root { @isNetwork(true); }
            """
        )
        kinds = {t.name: t.kind for t in f.types}
        assert kinds == {
            "IThing": "moduleinterface", "IChan": "channelinterface", "A": "simple",
            "M": "module", "N": "network", "C": "channel", "Root": "module",
        }
        by_name = {t.name: t for t in f.types}
        assert by_name["Root"].is_network and by_name["N"].is_network and not by_name["M"].is_network
        assert by_name["C"].extends[0].name == "Link"
        assert by_name["A"].likes[0].name == "IThing"


class TestParameters:
    def test_typed_parameters_units_and_defaults(self):
        t = parse(
            """
            simple S {
                parameters:
                    int a;
                    double b @unit(us) = 1.5us;
                    bool c = default(true);
                    string d = "x\\"y\\n";
                    double e @unit(ns/m) = 5ns/m;
                    @display("i=block");
            }
            """
        ).types[0]
        a, b, c, d, e = t.params
        assert (a.name, a.type, a.unit, a.value) == ("a", "int", None, None)
        assert (b.type, b.unit, b.value.value) == ("double", "us", Value(1500.0, "ns"))
        assert c.is_default and c.value.value == Value(True)
        assert d.value.value == Value('x"y\n')
        assert e.value.value == Value(5, "ns/m")
        assert t.properties[0].name == "display"

    def test_parameters_keyword_is_optional(self):
        t = parse("simple S { int a = 1; gates: input i; }").types[0]
        assert t.params[0].name == "a" and t.gates[0].name == "i"

    def test_deep_assignments(self):
        t = parse("network N { parameters: sw[3].lid = 7; **.routingDelay = 50ns; host[*].x = 1; }").types[0]
        patterns = [p.pattern for p in t.params]
        assert patterns == ["sw[3].lid", "**.routingDelay", "host[*].x"]
        assert all(p.is_deep for p in t.params)

    def test_volatile_is_rejected(self):
        e = error_of("simple S { parameters: volatile int x; }")
        assert (e.line, e.column) == (1, 24)
        assert "volatile" in e.message

    def test_unknown_unit_in_property(self):
        e = error_of("simple S {\n  parameters:\n    double d @unit(parsec);\n}")
        assert (e.line, e.column) == (3, 15)
        assert "unknown unit 'parsec'" in e.message

    def test_unit_on_string_is_rejected(self):
        assert "only for int and double" in error_of('simple S { string s @unit(ns); }').message

    def test_duplicate_parameter(self):
        e = error_of("simple S { parameters: int x; double x; }")
        assert (e.line, e.column) == (1, 38)

    def test_declaration_in_submodule_body_is_rejected(self):
        e = error_of("network N { submodules: s: S { int x = 1; } }")
        assert "cannot declare parameter 'x' in a submodule body" in e.message

    def test_deep_assignment_in_simple_module_is_rejected(self):
        assert "only allowed in a compound module" in error_of("simple S { parameters: a.b = 1; }").message

    def test_malformed_pattern(self):
        e = error_of("network N { parameters: sw[x].lid = 1; }")
        assert (e.line, e.column) == (1, 27)
        assert "not an index pattern" in e.message


class TestGatesAndSubmodules:
    def test_gates(self):
        t = parse("simple S { gates: input a; output b; inout c; inout d[4]; inout e[]; }").types[0]
        assert [(g.name, g.kind, g.vector, g.size is not None) for g in t.gates] == [
            ("a", "input", False, False), ("b", "output", False, False), ("c", "inout", False, False),
            ("d", "inout", True, True), ("e", "inout", True, False),
        ]

    def test_submodule_forms(self):
        t = parse(
            """
            network N {
                parameters:
                    string hostType = "HCA";
                submodules:
                    sw[8]: Switch { lid = index + 1; }
                    host[4]: <hostType> like IHost;
                    fixed: <"HCA"> like IHost;
                    open: <> like IHost;
                    maybe: Switch if sizeof(sw) > 2;
                    sized: Foo { parameters: n = 2; gates: port[3]; }
                    q: a.b.Qualified;
            }
            """
        ).types[0]
        sw, host, fixed, open_, maybe, sized, q = t.submodules
        assert sw.vector.value == Value(8) and sw.type_name.name == "Switch"
        assert sw.params[0].pattern == "lid"
        assert host.like.name == "IHost" and isinstance(host.like_expr, ast.Name)
        assert fixed.like_expr.value == Value("HCA")
        assert open_.like_expr is None and open_.like.name == "IHost"
        assert isinstance(maybe.condition, ast.Compare)
        assert sized.gates[0].name == "port" and sized.params[0].pattern == "n"
        assert q.type_name.name == "a.b.Qualified"

    def test_simple_module_cannot_have_submodules(self):
        e = error_of("simple S {\n submodules:\n  a: A;\n}")
        assert (e.line, e.column) == (3, 3)

    def test_duplicate_submodule(self):
        assert "duplicate submodule 'a'" in error_of("network N { submodules: a: A; a: B; }").message


class TestConnections:
    def test_connection_forms(self):
        t = parse(
            """
            network N {
                connections allowunconnected:
                    a.port[1] <--> Link { length = 3m; } <--> b.port[2];
                    a.out --> DelayChannel { delay = 5ns; } --> b.in;
                    a.in <-- b.out;
                    a.g <--> b.g;
                    a.g <--> Link <--> b.g;
                    a.g <--> { delay = 1ns; } <--> b.g;
                    a.p$o[0] --> b.p$i++;
                    port[0] <--> sw[2].port++;
            }
            """
        ).types[0]
        assert t.allow_unconnected
        c = t.connections
        assert [x.arrow for x in c] == ["<-->", "-->", "<--", "<-->", "<-->", "<-->", "-->", "<-->"]
        assert c[0].channel.type_name.name == "Link" and c[0].channel.params[0].pattern == "length"
        assert c[3].channel is None
        assert c[4].channel.type_name.name == "Link" and c[4].channel.params == ()
        assert c[5].channel.type_name is None and c[5].channel.params[0].pattern == "delay"
        assert (c[6].left.half, c[6].right.half, c[6].right.plusplus) == ("o", "i", True)
        assert c[7].left.module is None and c[7].right.module == "sw"

    def test_loops_and_conditions(self):
        t = parse(
            """
            network N {
                connections:
                    for i=0..3, j=i..3 {
                        if i != j {
                            a[i].out --> a[j].in;
                        }
                    }
                    a[0].x --> a[1].y for k=0..2 if k > 0;
            }
            """
        ).types[0]
        loop, suffixed = t.connections
        assert [v.name for v in loop.vars] == ["i", "j"]
        assert isinstance(loop.body[0], ast.ConnIf)
        assert isinstance(suffixed, ast.ConnLoop) and isinstance(suffixed.body[0], ast.ConnIf)

    def test_mismatched_arrows(self):
        e = error_of("network N { connections: a.b --> Link <-- c.d; }")
        assert (e.line, e.column) == (1, 39)


class TestExpressions:
    @pytest.mark.parametrize(
        "text, cls",
        [
            ("1 + 2 - 3", ast.Chain), ("a * b / c % d", ast.Chain), ("2 ^ 3", ast.Power),
            ("a == b", ast.Compare), ("a && b && c", ast.Logic), ("a ? b : c ? d : e", ast.Cond),
            ("-x", ast.Unary), ("!x", ast.Unary), ("sizeof(sw)", ast.Sizeof), ("this.n", ast.ThisParam),
            ("sw[2].lid", ast.SubParam), ("sw.lid", ast.SubParam), ("min(1, 2)", ast.Call),
            ("int(2.5)", ast.Call), ("index", ast.IndexRef), ("x", ast.Name),
        ],
    )
    def test_node_types(self, text, cls):
        assert isinstance(parse_expression(text), cls)

    def test_chains_are_flat(self):
        e = parse_expression(" + ".join(["1"] * 500))
        assert isinstance(e, ast.Chain) and len(e.rest) == 499
        c = parse_expression(" : ".join(f"i == {k} ? {k}" for k in range(50)) + " : 0")
        assert isinstance(c, ast.Cond) and len(c.cases) == 50

    def test_quantity_literal_needs_no_space(self):
        q = parse_expression("5ns/m")
        assert isinstance(q, ast.Literal) and q.value == Value(5, "ns/m")
        d = parse_expression("5ns / m")
        assert isinstance(d, ast.Chain) and d.rest[0][0] == "/"

    def test_unary_minus_binds_looser_than_power(self):
        e = parse_expression("-2 ^ 2")
        assert isinstance(e, ast.Unary) and isinstance(e.operand, ast.Power)

    def test_negative_literal_is_folded(self):
        assert parse_expression("-5ns").value == Value(-5, "ns")

    def test_unknown_unit_literal(self):
        with pytest.raises(NedError) as info:
            parse_expression("3 + 5parsec", "e.ned")
        assert (info.value.line, info.value.column) == (1, 5)

    def test_unknown_escape(self):
        with pytest.raises(NedError) as info:
            parse_expression('"ab\\qc"')
        assert info.value.column == 4


class TestSyntaxErrors:
    def test_expected_and_found(self):
        e = error_of("network N {\n    submodules:\n        a: Switch\n        sw: HCA;\n}", "topo.ned")
        assert str(e) == "topo.ned:4:9: expected '.', ';', 'if' or '{' but found 'sw'"

    def test_expected_expression(self):
        e = error_of("simple S {\n  parameters:\n    int x = 3 +;\n}")
        assert (e.line, e.column) == (3, 16)
        assert e.message == "expected an expression but found ';'"

    def test_end_of_file(self):
        e = error_of("simple S {")
        assert e.message.endswith("but found end of file")

    def test_unexpected_character(self):
        e = error_of("simple S { # }")
        assert (e.line, e.column) == (1, 12)
        assert "'#'" in e.message

    def test_str_is_one_line_with_location(self):
        e = error_of("network N { submodules: a: ; }", "x.ned")
        assert str(e).startswith("x.ned:1:28: ") and "\n" not in str(e)
        assert (e.file, e.line, e.column) == ("x.ned", 1, 28)

    def test_built_in_declarations_parse(self):
        from importlib.resources import files

        for entry in files("ibfabric.components").iterdir():
            if entry.name.endswith(".ned"):
                f = parse(entry.read_text(), entry.name)
                assert f.package == "ibfabric.components" and f.types
