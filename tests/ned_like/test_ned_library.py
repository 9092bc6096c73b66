"""The type library: built-in types, registration, name resolution, loading files."""

import pytest

from ibfabric.ned_like import NedError, TypeLibrary, elaborate, load_network, parse
from ibfabric.ned_like.model import Value


class TestDefaultLibrary:
    def test_built_in_components(self):
        lib = TypeLibrary.default()
        names = {t.qualname for t in lib}
        assert {
            "ibfabric.components.Switch", "ibfabric.components.HCA", "ibfabric.components.Link",
            "ibfabric.components.IHost", "ibfabric.components.SubnetManager",
            "ibfabric.components.DelayChannel", "ibfabric.components.DatarateChannel",
        } <= names
        assert lib.get("Switch").kind == "simple"
        assert lib.get("ibfabric.components.Link").kind == "channel"

    def test_default_returns_independent_copies(self):
        a = TypeLibrary.default()
        a.add_source("simple Extra {}", "x.ned")
        assert "Extra" in a and "Extra" not in TypeLibrary.default()

    def test_copy_is_independent(self):
        a = TypeLibrary.default()
        b = a.copy()
        b.add_source("simple OnlyInB {}", "b.ned")
        assert "OnlyInB" in b and "OnlyInB" not in a


class TestRegistration:
    def test_duplicate_qualified_name_is_reported_at_the_duplicate(self):
        lib = TypeLibrary.default()
        lib.add_source("package p;\nsimple A {}", "one.ned")
        with pytest.raises(NedError) as info:
            lib.add_source("package p;\n\nsimple A {}", "two.ned")
        assert str(info.value) == "two.ned:3:8: type 'p.A' is already declared at one.ned:2:8"

    def test_re_adding_a_file_replaces_its_types(self):
        lib = TypeLibrary()
        lib.add_source("simple A { parameters: int x = 1; }", "a.ned")
        lib.add_source("simple A { parameters: int x = 2; }\nsimple B {}", "a.ned")
        assert lib.get("A").params[0].value.value == Value(2) and "B" in lib

    def test_add_file(self, tmp_path):
        path = tmp_path / "parts.ned"
        path.write_text("package lab; simple Probe {}")
        lib = TypeLibrary()
        lib.add_file(path)
        assert lib.lookup("lab.Probe").loc.file == str(path)


class TestResolution:
    def setup_method(self):
        self.lib = TypeLibrary.default()
        self.lib.add_source("package a.b; simple Thing {} simple Switch {}", "ab.ned")
        self.lib.add_source("package c; simple Thing {} simple Other {}", "c.ned")
        self.lib.add_source("simple Loose {}", "loose.ned")

    def ctx(self, text: str):
        return parse(text + "\nsimple Here {}", "ctx.ned")

    def test_qualified_names(self):
        assert self.lib.get("a.b.Thing").qualname == "a.b.Thing"

    def test_builtins_are_visible_without_import(self):
        assert self.lib.get("Switch", context=self.ctx("package x;")).qualname == "ibfabric.components.Switch"

    def test_explicit_import_beats_builtins(self):
        ctx = self.ctx("package x; import a.b.Switch;")
        assert self.lib.get("Switch", context=ctx).qualname == "a.b.Switch"

    def test_own_package_first(self):
        ctx = self.ctx("package c; import a.b.Thing;")
        assert self.lib.get("Thing", context=ctx).qualname == "c.Thing"

    def test_wildcard_import_and_ambiguity(self):
        assert self.lib.get("Other", context=self.ctx("package x; import c.*;")).qualname == "c.Other"
        with pytest.raises(NedError, match="ambiguous type name 'Thing'"):
            self.lib.get("Thing", context=self.ctx("package x; import a.b.*; import c.*;"))

    def test_default_package(self):
        assert self.lib.get("Loose", context=self.ctx("package x;")).qualname == "Loose"

    def test_unknown(self):
        with pytest.raises(NedError, match="unknown type 'Nope'"):
            self.lib.get("Nope")

    def test_extends_cycle(self):
        lib = TypeLibrary()
        lib.add_source("simple A extends B {}\nsimple B extends A {}", "cyc.ned")
        with pytest.raises(NedError, match="extends itself"):
            lib.effective("A")


class TestLoadNetwork:
    def test_imported_files_are_found_in_the_directory(self, tmp_path):
        (tmp_path / "parts.ned").write_text(
            "package lab;\nsimple Probe like IHost { parameters: int k = 7; gates: inout port[2]; }"
        )
        (tmp_path / "broken.ned").write_text("this is not NED")
        (tmp_path / "topo.ned").write_text(
            "import lab.Probe;\nnetwork t { submodules: p: Probe; s: Switch;\n"
            "  connections: p.port[1] <--> Link <--> s.port[1]; }"
        )
        net = load_network(tmp_path / "topo.ned")
        assert net.module("t.p").type_name == "lab.Probe"
        assert net.module("t.p").params["k"] == Value(7)
        assert net.source == str(tmp_path / "topo.ned")

    def test_same_package_files_are_found(self, tmp_path):
        (tmp_path / "a.ned").write_text("package site; simple Box { parameters: int n = 2; }")
        (tmp_path / "b.ned").write_text("package site; network b { submodules: x: Box; }")
        assert load_network(tmp_path / "b.ned").module("b.x").type_name == "site.Box"

    def test_unknown_type_counts_unrelated_broken_files(self, tmp_path):
        # an unrelated sibling's syntax error is not quoted (issue 35): it is counted
        (tmp_path / "broken.ned").write_text("simple {")
        (tmp_path / "other.ned").write_text("network {")
        (tmp_path / "topo.ned").write_text("network t { submodules: x: Hca; }")
        with pytest.raises(NedError) as info:
            load_network(tmp_path / "topo.ned")
        assert str(info.value) == (f"{tmp_path / 'topo.ned'}:1:28: unknown type 'Hca'; did you mean 'HCA'?"
                                   f" (2 other .ned files in {tmp_path} could not be read)")

    def test_unknown_type_quotes_a_broken_file_that_names_it(self, tmp_path):
        (tmp_path / "missing.ned").write_text("simple Missing {")
        (tmp_path / "topo.ned").write_text("network t { submodules: x: Missing; }")
        with pytest.raises(NedError, match=r"unknown type 'Missing' \(note: .*missing.ned:1:17: "):
            load_network(tmp_path / "topo.ned")

    def test_library_is_not_modified(self, tmp_path):
        lib = TypeLibrary.default()
        (tmp_path / "t.ned").write_text("simple Mine {}\nnetwork t { submodules: m: Mine; }")
        load_network(tmp_path / "t.ned", library=lib)
        assert "Mine" not in lib

    def test_elaborate_with_a_parsed_file(self):
        f = parse("network p { submodules: s: Switch; }", "p.ned")
        assert elaborate(f).module("p.s").location.file == "p.ned"

    def test_own_package_hides_built_in_names(self, tmp_path):
        (tmp_path / "mine.ned").write_text("package site; simple Switch { parameters: int custom = 1; }")
        (tmp_path / "topo.ned").write_text("package site; network t { submodules: s: Switch; }")
        net = load_network(tmp_path / "topo.ned", filename="renamed.ned")
        assert net.module("t.s").type_name == "site.Switch"
        assert net.source == "renamed.ned"
