"""Command-line inputs: --out checked before the run, and any --set value gives success or one located line."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric.cli import main


def run(capsys, *argv):
    t0 = time.perf_counter()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err, time.perf_counter() - t0


class TestOut:
    def test_an_existing_file_is_refused_before_the_run(self, capsys, tmp_path):
        f = tmp_path / "f"
        f.write_text("keep me")
        code, out, err, _ = run(capsys, "run", "--time", "20us", "--out", str(f))
        assert code == 2 and out == ""  # nothing simulated, nothing printed
        assert err == f"ibfabric: error: --out {f}: exists and is not a directory\n"
        assert f.read_text() == "keep me"

    @pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
    def test_an_unwritable_place_is_refused_before_the_run(self, capsys, tmp_path):
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        code, out, err, _ = run(capsys, "run", "--time", "20us", "--out", str(ro / "x"))
        assert code == 2 and "is not writable" in err and out == ""

    def test_a_new_nested_directory_gets_the_whole_set(self, capsys, tmp_path):
        code, _, err, _ = run(capsys, "run", "--time", "20us", "--out", str(tmp_path / "a" / "b"))
        assert code == 0, err
        assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == [
            "manifest.json", "results.sca", "scalars.csv", "summary.json"]


PARAMS = ["load", "mtu", "vlBufferSize", "numVLs", "routingDelay", "lid", "lmc", "numPorts", "packetSize", "sl",
          "crossbarSpeedup", "outputBufferSize", "dataRate", "traffic", "routing", "arbiter", "guid", "arrival",
          "messageSize", "trafficOptions"]
VALUES = st.one_of(
    st.sampled_from(["0", "-1", "1e400", "nan", "9" * 5000, "4294967296", '""', "true", "1/0", "1us", "65536",
                     "49152", '"0..15"', '"qdr"', "(", "}", "0.2", "256B", "2KiB", "100ns", '"uniform"', "1e5"]),
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sets=st.lists(st.tuples(st.sampled_from(PARAMS), VALUES), min_size=1, max_size=3))
def test_any_set_value_gives_success_or_one_line(capsys, sets):
    argv = ["run", "bermudez2006_fig1", "--time", "2us", "--warmup", "0us", "--no-progress"]
    for name, value in sets:
        argv += ["--set", f"**.{name}={value}"]
    code, _, err, seconds = run(capsys, *argv)
    errors = [line for line in err.splitlines() if line.startswith(("ibfabric: error", "ibfabric: deadlock"))]
    assert "Traceback" not in err
    assert code == 0 or (code in (1, 2) and len(errors) == 1 and "\n" not in errors[0]), err
    assert seconds < 30
