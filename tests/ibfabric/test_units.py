"""Units: parsing, conversion, formatting that parses back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibfabric.units import UnitError, canonical_unit, convert, dimension, format_quantity, parse_duration, parse_quantity


class TestParse:
    @pytest.mark.parametrize("text, value, unit", [
        ("100ns", 100.0, "ns"), ("1.5us", 1500.0, "ns"), ("2ms", 2e6, "ns"), ("1s", 1e9, "ns"), ("250ps", 0.25, "ns"),
        ("4096B", 4096.0, "B"), ("4KiB", 4096.0, "B"), ("1MiB", 1048576.0, "B"), ("2KB", 2000.0, "B"),
        ("2.5Gbps", 2.5e9, "bps"), ("64Kbps", 64e3, "bps"), ("1.55Mbps", 1.55e6, "bps"),
        ("20m", 20.0, "m"), ("50cm", 0.5, "m"), ("5ns/m", 5.0, "ns/m"), ("5us/km", 5.0, "ns/m"),
        ("7", 7.0, None), (" 3 us ", 3000.0, "ns"),
    ])
    def test_values_in_canonical_units(self, text, value, unit):
        v, u = parse_quantity(text)
        assert u == unit and v == pytest.approx(value)

    def test_bare_number_takes_the_expected_unit(self):
        assert parse_quantity("3", expect="us") == (3000.0, "ns")

    @pytest.mark.parametrize("text, expect, message", [
        ("100", None, None), ("fast", None, "is not a quantity"), ("3 parsecs", None, "unknown unit"),
        ("4096B", "ns", "is a data, expected a time"),
    ])
    def test_errors(self, text, expect, message):
        if message is None:
            assert parse_quantity(text)[1] is None
            return
        with pytest.raises(UnitError, match=message):
            parse_quantity(text, expect=expect)


class TestConvert:
    def test_same_dimension(self):
        assert convert(1.0, "ms", "us") == 1000.0
        assert convert(1.0, "MiB", "KiB") == 1024.0
        assert dimension("Gbps") == "bandwidth" and canonical_unit("km") == "m"

    def test_different_dimensions_refused(self):
        with pytest.raises(UnitError, match="cannot convert ns"):
            convert(1.0, "ns", "B")


class TestFormat:
    @given(st.floats(min_value=-1e15, max_value=1e15, allow_nan=False), st.sampled_from(["ns", "B", "bps", "m", "ns/m"]))
    def test_round_trip(self, value, unit):
        v, u = parse_quantity(format_quantity(value, unit))
        assert u == unit and v == value

    def test_integers_print_without_a_point(self):
        assert format_quantity(2.5e9, "bps") == "2500000000bps"
        assert format_quantity(0.1, "ns") == "0.1ns"


class TestDurationRule:
    """One rule for durations everywhere (issue 35): a string needs a unit; only a Python number is ns."""

    @pytest.mark.parametrize("text", ["80", "300000", " 2.5 ", "-5"])
    def test_a_bare_number_string_asks_for_a_unit(self, text):
        with pytest.raises(UnitError, match=f"has no unit: a duration needs one, e.g. \"{text.strip()}ns\""):
            parse_duration(text)

    def test_numbers_are_ns_in_the_api_only(self):
        assert parse_duration(80) == parse_duration(80.0) == parse_duration("80ns") == 80.0
        assert parse_duration("0") == parse_duration(0, numbers=False) == 0.0
        with pytest.raises(UnitError, match='80 has no unit: a duration needs one, e.g. "80ns"'):
            parse_duration(80, numbers=False)
        with pytest.raises(UnitError, match="not a duration"):
            parse_duration(None)

    def test_every_way_in(self, tmp_path):
        from ibfabric.errors import ConfigError
        from ibfabric.experiment import Experiment
        from ibfabric.scenario import scenario_from_text
        from ibfabric.simulation import parse_time

        head = '[experiment]\nname = "x"\ntopology = "irregular16"\n'
        for value in ('"80"', "80", '"300000"'):
            with pytest.raises(ConfigError, match=r"^exp.toml:4:8: bad time( 80)?: .*has no unit.*e\.g\. \""):
                Experiment.from_text(f"{head}time = {value}\n", "exp.toml")
        with pytest.raises(ConfigError, match=r"^exp.toml:5:10: bad warmup: '5' has no unit"):
            Experiment.from_text(f'{head}time = "10us"\nwarmup = "5"\n', "exp.toml")
        for value in ('"50"', "50"):
            with pytest.raises(ConfigError, match=r"^s.toml:2:6: bad 'at' .*has no unit"):
                scenario_from_text(f'[[events]]\nat = {value}\naction = "fail-node"\ntarget = "sw3"\n', "s.toml")
        with pytest.raises(ConfigError, match="bad run time '80': '80' has no unit"):
            parse_time("80", "run time")
        assert parse_time(80) == 80.0
