"""Expressions: literals, units and unit arithmetic, operators, functions, conversion to parameters."""

import pytest

from ibfabric.ned_like import NedError, parse_expression, parse_value
from ibfabric.ned_like.expr import Scope, coerce, evaluate
from ibfabric.ned_like.model import Location, Value

HERE = Location("t", 1, 1)


def v(text: str) -> Value:
    return parse_value(text)


def err(text: str) -> str:
    with pytest.raises(NedError) as info:
        parse_value(text)
    return info.value.message


class TestLiterals:
    @pytest.mark.parametrize(
        "text, value, unit",
        [
            ("100ns", 100, "ns"), ("1.5us", 1500.0, "ns"), ("2s", 2_000_000_000, "ns"), ("1ps", 0.001, "ns"),
            ("4096B", 4096, "B"), ("4KiB", 4096, "B"), ("2KB", 2000, "B"), ("1GiB", 1024**3, "B"),
            ("2.5Gbps", 2_500_000_000.0, "bps"), ("10Mbps", 10_000_000, "bps"),
            ("3m", 3, "m"), ("25cm", 0.25, "m"), ("2km", 2000, "m"),
            ("5ns/m", 5, "ns/m"), ("5us/km", 5, "ns/m"), ("1e3ns", 1000.0, "ns"), ("1e+20ns", 1e20, "ns"),
        ],
    )
    def test_quantities_are_canonical(self, text, value, unit):
        got = v(text)
        assert got == Value(value, unit)
        assert type(got.value) is type(value)

    def test_decimal_conversion_is_exact(self):
        assert v("1.1us").value == 1100.0
        assert v("0.3ms").value == 300000.0

    def test_numbers_strings_bools(self):
        assert v("42") == Value(42) and type(v("42").value) is int
        assert v("4.0") == Value(4.0) and type(v("4.0").value) is float
        assert v("1e3").value == 1000.0
        assert v('"a\\\\b\\"c"') == Value('a\\b"c')
        assert v("true") == Value(True) and v("false") == Value(False)


class TestArithmetic:
    def test_int_and_float(self):
        assert v("2 + 3 * 4") == Value(14)
        assert v("(2 + 3) * 4") == Value(20)
        assert v("7 - 2 - 1") == Value(4)

    def test_division_always_gives_a_double(self):
        assert v("7 / 2") == Value(3.5)
        assert type(v("8 / 2").value) is float

    def test_modulo_has_the_sign_of_the_left_operand(self):
        assert v("7 % 3") == Value(1)
        assert v("-7 % 3") == Value(-1)
        assert v("7 % -3") == Value(1)
        assert v("9 % (8 / 2)") == Value(1)
        assert "needs two integers" in err("7.5 % 2")

    def test_power(self):
        assert v("2 ^ 10") == Value(1024)
        assert v("2 ^ 3 ^ 2") == Value(512)  # right-associative
        assert v("-2 ^ 2") == Value(-4)
        assert v("2 ^ -1") == Value(0.5)
        assert "not a finite number" in err("10.0 ^ 400")

    def test_comparisons_and_logic(self):
        assert v("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3 && 1 != 2 && 1 == 1.0") == Value(True)
        assert v('"abc" < "abd"') == Value(True)
        assert v("true || 1 / 0 > 0") == Value(True)  # short-circuit
        assert v("false && 1 / 0 > 0") == Value(False)
        assert v("!true") == Value(False)
        assert "needs a bool" in err("1 && true")
        assert "cannot compare" in err('1 == "1"')

    def test_conditional(self):
        assert v("1 > 2 ? 10 : 2 > 1 ? 20 : 30") == Value(20)
        assert "needs a bool" in err("1 ? 2 : 3")

    def test_string_concatenation(self):
        assert v('"sw" + "0"') == Value("sw0")
        assert v('"n" + string(3)') == Value("n3")
        assert "cannot add" in err('"n" + 3')

    def test_division_by_zero(self):
        assert err("1 / 0") == "division by zero"
        assert err("1 % 0") == "modulo by zero"


class TestUnitArithmetic:
    def test_same_dimension_adds_after_conversion(self):
        assert v("1us + 100ns") == Value(1100, "ns")
        assert v("1m - 50cm") == Value(0.5, "m")

    def test_scaling(self):
        assert v("100ns * 3") == Value(300, "ns")
        assert v("3 * 100ns") == Value(300, "ns")
        assert v("100ns / 4") == Value(25.0, "ns")

    def test_ratio_of_one_dimension_is_a_number(self):
        assert v("1us / 100ns") == Value(10.0)

    def test_cross_dimension_products(self):
        assert v("2m * 5ns/m") == Value(10.0, "ns")
        assert v("5ns/m * 2m") == Value(10.0, "ns")
        assert v("4096B / 8Gbps") == Value(4096.0, "ns")
        assert v("8Gbps * 4096ns") == Value(4096.0, "B")
        assert v("10ns / 2m") == Value(5.0, "ns/m")
        assert v("10ns / (5ns/m)") == Value(2.0, "m")
        assert v("4096B / 4096ns") == Value(8e9, "bps")

    def test_incompatible_units(self):
        assert err("5ns + 3B") == "cannot add 5ns and 3B"
        assert err("5ns - 3") == "cannot subtract 3 from 5ns"
        assert err("5ns * 3ns") == "cannot multiply 5ns by 3ns"
        assert err("5 / 3ns") == "cannot divide 5 by 3ns"
        assert "cannot compare" in err("5ns < 3B")

    def test_functions_keep_units(self):
        assert v("min(1us, 200ns, 3us)") == Value(200, "ns")
        assert v("max(1, 2.5, 2)") == Value(2.5)
        assert v("abs(-3ns)") == Value(3, "ns")
        assert v("floor(2.7)") == Value(2) and type(v("floor(2.7)").value) is int
        assert v("ceil(2.1)") == Value(3)
        assert "one dimension" in err("min(1ns, 1B)")


class TestFunctions:
    def test_casts(self):
        assert v("int(2.9)") == Value(2)
        assert v("int(-2.9)") == Value(-2)
        assert v('int("12")') == Value(12)
        assert v("double(3)") == Value(3.0) and type(v("double(3)").value) is float
        assert v('double("2.5")') == Value(2.5)
        assert v("string(100ns)") == Value("100ns")
        assert v("string(true)") == Value("true")
        assert v('bool("true")') == Value(True)

    def test_strlen(self):
        assert v('strlen("abcd")') == Value(4)
        assert "needs a string" in err("strlen(3)")

    def test_unknown_function_and_arity(self):
        assert "unknown function 'sqrt'" in err("sqrt(4)")
        assert "takes one argument" in err("abs(1, 2)")
        assert "at least one argument" in err("min()")


class TestNames:
    def test_scope_lookup_and_loop_variables(self):
        params = {"n": Value(4)}
        scope = Scope(params=params.get, vars={"i": Value(2)}, index=3)
        assert evaluate(parse_expression("n * i + index"), scope) == Value(11)

    def test_loop_variable_hides_parameter(self):
        scope = Scope(params={"i": Value(100)}.get, vars={"i": Value(1)})
        assert evaluate(parse_expression("i"), scope) == Value(1)

    def test_unknown_name_location(self):
        with pytest.raises(NedError) as info:
            evaluate(parse_expression("1 + nope", "e.ned"))
        assert str(info.value) == "e.ned:1:5: unknown name 'nope'"

    def test_index_outside_vector(self):
        with pytest.raises(NedError, match="only defined inside a submodule vector"):
            evaluate(parse_expression("index"))


class TestCoerce:
    def test_unit_dimension(self):
        assert coerce(Value(1000, "ns"), "double", "us", "d", HERE) == Value(1000.0, "ns")
        with pytest.raises(NedError) as info:
            coerce(Value(4096, "B"), "double", "ns", "routingDelay", HERE)
        assert info.value.message == "parameter 'routingDelay' expects a time (like 1ns), got 4096B"

    def test_bare_number_only_zero(self):
        assert coerce(Value(0), "double", "ns", "d", HERE) == Value(0.0, "ns")
        with pytest.raises(NedError, match=r"expects a data size \(like 1B\), got 5"):
            coerce(Value(5), "int", "B", "size", HERE)

    def test_int_parameters_stay_ints(self):
        got = coerce(Value(4096.0, "B"), "int", "B", "mtu", HERE)
        assert got == Value(4096, "B") and type(got.value) is int
        with pytest.raises(NedError, match="expects an integer"):
            coerce(Value(2.5), "int", None, "n", HERE)

    def test_doubles_become_floats(self):
        got = coerce(Value(1), "double", None, "x", HERE)
        assert type(got.value) is float

    def test_types(self):
        with pytest.raises(NedError, match="expects a bool"):
            coerce(Value(1), "bool", None, "b", HERE)
        with pytest.raises(NedError, match="expects a string"):
            coerce(Value(1), "string", None, "s", HERE)
        with pytest.raises(NedError, match="expects an int"):
            coerce(Value("1"), "int", None, "i", HERE)
        with pytest.raises(NedError, match="without a unit"):
            coerce(Value(1, "ns"), "double", None, "x", HERE)


class TestParseValue:
    def test_string_parameters_take_plain_text(self):
        assert parse_value("round-robin", type="string") == Value("round-robin")
        assert parse_value('"minhop"', type="string") == Value("minhop")
        assert parse_value("true", type="string") == Value("true")

    def test_typed(self):
        assert parse_value("2us", type="double", unit="ns") == Value(2000.0, "ns")
        with pytest.raises(NedError, match="expects a time"):
            parse_value("2B", type="double", unit="ns")
