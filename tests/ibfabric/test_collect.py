"""Collecting a sweep's runs into a tidy table, aggregating repetitions, and ``ibfabric results``."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from pathlib import Path

import pytest

from ibfabric.cli import main
from ibfabric.collect import Failure, Table, aggregate, collect, sort_key, t_quantile
from ibfabric.errors import ConfigError

ROUTINGS = ("updn", "minhop")
LOADS = (0.1, 0.2, 0.3)
REPS = (0, 1, 2)
#: Mean latency of the second repetition; the three repetitions give L-1, L, L+1 (mean L, std 1).
LATENCY = {("updn", 0.1): 600.0, ("updn", 0.2): 700.0, ("updn", 0.3): 1500.0,
           ("minhop", 0.1): 500.0, ("minhop", 0.2): 650.0, ("minhop", 0.3): 1200.0}
#: The statistics of a summary, in flatten order, without and with the timing ones.
STATS = ["offered_load", "accepted_load", "latency_mean", "latency_p99", "saturated", "packets_delivered"]
STATS_TIMING = ["offered_load", "accepted_load", "latency_mean", "latency_p99", "saturated", "wall_s",
                "events_per_s", "packets_delivered"]
COLUMNS = ["experiment", "run_id", "routing", "load", "repetition", "seed", "status", "statistic", "value"]


def summary(routing: str, load: float, rep: int) -> dict:
    lat = LATENCY[routing, load] + rep - 1
    return {
        "network": "Fig1",  # not a statistic: left out by flatten
        "seed": 100 + rep,
        "offered_load": load,
        "accepted_load": min(load, 0.25),
        "latency_ns": {"mean": lat, "p99": 2 * lat},
        "saturated": load > 0.25,
        "wall_s": 1.3 + rep,  # timing: differs between two runs of a configuration
        "events_per_s": 1000.0 * (rep + 1),
        "packets_delivered": 100 * (rep + 1),
    }


def write_run(out: Path, run_id: str, vars: dict, rep: int, status: str = "ok", summary_: dict | None = None,
              error: str | None = None, experiment: str = "latency") -> Path:
    d = out / "runs" / run_id
    d.mkdir(parents=True)
    info = {"run_id": run_id, "experiment": experiment, "status": status, "error": error, "vars": vars,
            "repetition": rep, "seed": 100 + rep, "config": {"**.routing": "x"}, "wall_s": 2.5}
    (d / "run.json").write_text(json.dumps(info))
    if summary_ is not None:
        (d / "summary.json").write_text(json.dumps(summary_, indent=2))
    return d


def write_sweep(out: Path, reverse: bool = False) -> Path:
    """2 routings x 3 loads x 3 repetitions (minhop 0.3 rep 2 deadlocked), a failed run, a run in
    progress (.tmp-x), a directory without run.json and a stray file."""
    runs = [(r, load, rep) for r in ROUTINGS for load in LOADS for rep in REPS]
    for r, load, rep in reversed(runs) if reverse else runs:
        status = "deadlock" if (r, load, rep) == ("minhop", 0.3, 2) else "ok"
        write_run(out, f"{r}-{load}-{rep}", {"routing": r, "load": load}, rep, status, summary(r, load, rep))
    write_run(out, "updn-0.4-0", {"routing": "updn", "load": 0.4}, 0, "failed",
              error="boom: no route from H1 to H7\nTraceback (most recent call last): ...")
    write_run(out, ".tmp-x", {"routing": "spf", "load": 0.1}, 0, "ok", summary("updn", 0.1, 0))
    (out / "runs" / "junk").mkdir()
    (out / "runs" / "README").write_text("not a run\n")
    return out


@pytest.fixture
def sweep(tmp_path) -> Path:
    return write_sweep(tmp_path / "out")


def expected_rows(stats=STATS) -> list[tuple]:
    """The table, built by hand in its order: routing (minhop < updn), load, repetition, then flatten order."""
    rows = []
    for r in sorted(ROUTINGS):
        for load in LOADS:
            for rep in REPS:
                status = "deadlock" if (r, load, rep) == ("minhop", 0.3, 2) else "ok"
                lat = LATENCY[r, load] + rep - 1
                values = {"offered_load": load, "accepted_load": min(load, 0.25), "latency_mean": lat,
                          "latency_p99": 2 * lat, "saturated": float(load > 0.25), "wall_s": 1.3 + rep,
                          "events_per_s": 1000.0 * (rep + 1), "packets_delivered": 100.0 * (rep + 1)}
                for s in stats:
                    rows.append(("latency", f"{r}-{load}-{rep}", r, load, rep, 100 + rep, status, s, values[s]))
    return rows


class TestCollect:
    def test_rows_exact(self, sweep):
        table = collect(sweep)
        assert table.columns == COLUMNS
        assert len(table.rows) == 18 * 6
        assert table.rows == expected_rows()
        assert all(type(row[-1]) is float for row in table.rows)
        assert table.rows[0] == ("latency", "minhop-0.1-0", "minhop", 0.1, 0, 100, "ok", "offered_load", 0.1)

    def test_runs_failures_skipped(self, sweep):
        table = collect(sweep)
        assert len(table.runs) == 19  # 18 + the failed one; .tmp-x, junk and README are not runs
        assert "updn-0.4-0" in table.runs and not any(r.startswith(".") for r in table.runs)
        assert table.failures == [Failure("updn-0.4-0", {"routing": "updn", "load": 0.4},
                                          "boom: no route from H1 to H7\nTraceback (most recent call last): ...")]
        assert "updn-0.4-0" not in table.column("run_id")
        assert table.skipped == [str(sweep / "runs" / "junk")]

    def test_timing_left_out_by_default(self, sweep):
        assert not {"wall_s", "events_per_s"} & set(collect(sweep).column("statistic"))
        table = collect(sweep, timing=True)
        assert len(table.rows) == 18 * 8
        assert table.rows == expected_rows(STATS_TIMING)

    def test_csv_reads_back(self, sweep, tmp_path):
        table = collect(sweep)
        path = tmp_path / "results.csv"
        text = table.to_csv(path)
        assert path.read_text() == text and "\r" not in text
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
        header, *body = list(csv.reader(io.StringIO(text)))
        assert header == COLUMNS
        assert len(body) == len(table.rows)
        for cells, row in zip(body, table.rows):
            assert cells[:3] == list(row[:3]) and cells[6:8] == list(row[6:8])
            assert float(cells[3]) == row[3] and int(cells[4]) == row[4] and int(cells[5]) == row[5]
            assert float(cells[8]) == row[8]  # repr round-trips exactly
        assert body[2][8] == "499.0" and body[0][3] == "0.1"

    def test_csv_reads_with_pandas(self, sweep):
        pd = pytest.importorskip("pandas")
        table = collect(sweep)
        df = pd.read_csv(io.StringIO(table.to_csv()))
        assert list(df.columns) == COLUMNS and len(df) == len(table.rows)
        assert df["value"].tolist() == table.column("value")
        assert df["load"].tolist() == table.column("load")

    def test_bytes_deterministic(self, sweep, tmp_path):
        first = collect(sweep).to_csv()
        assert collect(sweep).to_csv() == first
        other = write_sweep(tmp_path / "other", reverse=True)  # runs created in the opposite order
        assert collect(other).to_csv().encode() == first.encode()
        assert aggregate(collect(other)).to_csv() == aggregate(collect(sweep)).to_csv()

    def test_missing_variable_empty_cell(self, tmp_path):
        out = tmp_path / "out"
        s = {"offered_load": 0.1, "latency_ns": {"mean": 500.0}}
        write_run(out, "b", {"routing": "updn", "vls": 2}, 0, summary_=s)
        write_run(out, "a", {"routing": "updn"}, 0, summary_=s)
        table = collect(out)
        assert table.columns == ["experiment", "run_id", "routing", "vls", "repetition", "seed", "status",
                                 "statistic", "value"]
        # the run without 'vls' sorts first (missing before any value)
        assert table.rows == [
            ("latency", "a", "updn", None, 0, 100, "ok", "offered_load", 0.1),
            ("latency", "a", "updn", None, 0, 100, "ok", "latency_mean", 500.0),
            ("latency", "b", "updn", 2, 0, 100, "ok", "offered_load", 0.1),
            ("latency", "b", "updn", 2, 0, 100, "ok", "latency_mean", 500.0),
        ]
        assert table.to_csv().splitlines()[1] == "latency,a,updn,,0,100,ok,offered_load,0.1"

    def test_mixed_types_sort_safely(self, tmp_path):
        out = tmp_path / "out"
        values = ["x", 1, 0.5, True, [2, 4], 2.0, None]
        for i, v in enumerate(values):
            write_run(out, f"r{i}", {"v": v}, 0, summary_={"offered_load": 0.1})
        write_run(out, "z", {"w": 1}, 0, summary_={"offered_load": 0.1})
        table = collect(out)
        assert table.columns[:4] == ["experiment", "run_id", "v", "w"]
        # missing first (None counts as missing), then booleans, numbers by value, strings, the rest; then w
        assert table.column("run_id") == ["r6", "z", "r3", "r2", "r1", "r5", "r0", "r4"]
        assert table.to_csv().splitlines()[1:] == [
            "latency,r6,,,0,100,ok,offered_load,0.1",
            "latency,z,,1,0,100,ok,offered_load,0.1",
            "latency,r3,True,,0,100,ok,offered_load,0.1",
            "latency,r2,0.5,,0,100,ok,offered_load,0.1",
            "latency,r1,1,,0,100,ok,offered_load,0.1",
            "latency,r5,2.0,,0,100,ok,offered_load,0.1",
            "latency,r0,x,,0,100,ok,offered_load,0.1",
            'latency,r4,"[2,4]",,0,100,ok,offered_load,0.1',
        ]
        assert sorted([2, 0.5, 1.5, 1], key=sort_key) == [0.5, 1, 1.5, 2]

    def test_experiments_sort_first(self, tmp_path):
        out = tmp_path / "out"
        write_run(out, "a", {"load": 0.1}, 0, summary_={"offered_load": 0.1}, experiment="zeta")
        write_run(out, "b", {"load": 0.9}, 0, summary_={"offered_load": 0.9}, experiment="alpha")
        assert collect(out).column("experiment") == ["alpha", "zeta"]

    def test_empty_runs(self, tmp_path):
        (tmp_path / "runs").mkdir()
        table = collect(tmp_path)
        assert table.rows == [] and table.runs == [] and table.columns == [
            "experiment", "run_id", "repetition", "seed", "status", "statistic", "value"]
        assert table.to_csv() == "experiment,run_id,repetition,seed,status,statistic,value\n"

    def test_column_unknown(self, sweep):
        with pytest.raises(ConfigError, match="no column 'nope': choose from experiment, run_id"):
            collect(sweep).column("nope")


class TestErrors:
    def test_not_a_sweep(self, tmp_path):
        with pytest.raises(ConfigError, match=r"^.*missing: not a sweep output directory \(no runs/\)$"):
            collect(tmp_path / "missing")
        with pytest.raises(ConfigError, match=r"not a sweep output directory \(no runs/\)"):
            collect(tmp_path)

    def test_corrupt_run_json(self, sweep):
        path = sweep / "runs" / "updn-0.2-1" / "run.json"
        path.write_text('{"run_id": "updn-0.2-1", ')
        with pytest.raises(ConfigError) as info:
            collect(sweep)
        msg = str(info.value)
        assert msg.startswith(f"{path}: invalid JSON") and "\n" not in msg

    def test_corrupt_summary_json(self, sweep):
        path = sweep / "runs" / "minhop-0.1-0" / "summary.json"
        path.write_text("[1, 2")
        with pytest.raises(ConfigError, match=f"^{path}: invalid JSON"):
            collect(sweep)
        path.write_text("[1, 2]")
        with pytest.raises(ConfigError, match=f"^{path}: expected a JSON object$"):
            collect(sweep)
        path.unlink()
        with pytest.raises(ConfigError, match=f"^{path}: missing$"):
            collect(sweep)

    @pytest.mark.parametrize("key, value, message", [
        ("status", "weird", "'status' must be one of ok, deadlock, failed (got 'weird')"),
        ("repetition", "1", "'repetition' must be a int (got '1')"),
        ("vars", None, "'vars' must be a dict (got None)"),
        ("vars", {"seed": 3}, "iteration variable 'seed' has the name of a column of the results table"),
    ])
    def test_malformed_run_json(self, sweep, key, value, message):
        path = sweep / "runs" / "updn-0.2-1" / "run.json"
        info = json.loads(path.read_text())
        info[key] = value
        path.write_text(json.dumps(info))
        with pytest.raises(ConfigError) as exc:
            collect(sweep)
        assert str(exc.value) == f"{path}: {message}"

    def test_missing_key(self, sweep):
        path = sweep / "runs" / "updn-0.2-1" / "run.json"
        info = json.loads(path.read_text())
        del info["experiment"]
        path.write_text(json.dumps(info))
        with pytest.raises(ConfigError, match=f"^{path}: missing 'experiment'$"):
            collect(sweep)


class TestAggregate:
    def test_columns_and_rows(self, sweep):
        agg = aggregate(collect(sweep))
        assert agg.columns == ["experiment", "routing", "load", "statistic", "n", "mean", "std", "ci95_low",
                               "ci95_high"]
        assert len(agg.rows) == 6 * 6
        assert [row[:4] for row in agg.rows[:7]] == [("latency", "minhop", 0.1, s) for s in STATS] + [
            ("latency", "minhop", 0.2, "offered_load")]
        assert agg.failures == collect(sweep).failures

    def test_mean_std_ci(self, sweep):
        agg = aggregate(collect(sweep))
        row = next(r for r in agg.rows if r[1:4] == ("updn", 0.1, "latency_mean"))  # 599, 600, 601
        half = t_quantile(2) * 1.0 / math.sqrt(3)
        assert row[4:] == (3, 600.0, 1.0, 600.0 - half, 600.0 + half)
        assert half == pytest.approx(4.303 / math.sqrt(3), rel=1e-4)
        row = next(r for r in agg.rows if r[1:4] == ("minhop", 0.2, "packets_delivered"))  # 100, 200, 300
        half = t_quantile(2) * 100.0 / math.sqrt(3)
        assert row[4:] == (3, 200.0, 100.0, 200.0 - half, 200.0 + half)
        for load in LOADS:  # constant: the mean is the value itself (0.1 + 0.1 + 0.1 != 0.3 in floats)
            row = next(r for r in agg.rows if r[1:4] == ("minhop", load, "offered_load"))
            assert row[4:] == (3, load, 0.0, load, load)

    def test_values_one_two_three(self, tmp_path):
        out = tmp_path / "out"
        for rep, v in enumerate((1.0, 2.0, 3.0)):
            write_run(out, f"r{rep}", {"load": 0.5}, rep, summary_={"latency_ns": {"mean": v}})
        write_run(out, "single", {"load": 0.9}, 0, summary_={"latency_ns": {"mean": 7.5}})
        agg = aggregate(collect(out))
        lo, hi = 2 - 4.302652729749462 / math.sqrt(3), 2 + 4.302652729749462 / math.sqrt(3)
        assert agg.rows == [("latency", 0.5, "latency_mean", 3, 2.0, 1.0, lo, hi),
                            ("latency", 0.9, "latency_mean", 1, 7.5, None, 7.5, 7.5)]
        lines = agg.to_csv().splitlines()
        assert lines[0] == "experiment,load,statistic,n,mean,std,ci95_low,ci95_high"
        assert lines[2] == "latency,0.9,latency_mean,1,7.5,,7.5,7.5"  # n = 1: std empty
        assert [float(c) for c in lines[1].split(",")[-2:]] == [lo, hi]

    def test_not_a_collect_table(self):
        with pytest.raises(ConfigError, match="expected a table from collect"):
            aggregate(Table(columns=["a", "b"], rows=[]))


class TestTQuantile:
    def test_table(self):
        # NIST/SEMATECH e-Handbook 1.3.6.7.2, column 0.975
        nist = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 20: 2.086, 30: 2.042}
        for df, t in nist.items():
            assert round(t_quantile(df), 3) == t
        assert t_quantile(40) == pytest.approx(2.021, abs=5e-4)
        assert t_quantile(100) == pytest.approx(1.984, abs=5e-4)
        assert t_quantile(10**9) == pytest.approx(1.959963984540054)
        with pytest.raises(ValueError):
            t_quantile(0)

    def test_against_scipy(self):
        stats = pytest.importorskip("scipy.stats")
        for df in (*range(1, 61), 100, 1000):
            assert t_quantile(df) == pytest.approx(stats.t.ppf(0.975, df), abs=1e-7)


class TestParquet:
    def test_needs_pyarrow(self, sweep, tmp_path, monkeypatch):
        monkeypatch.setitem(sys.modules, "pyarrow", None)
        with pytest.raises(ConfigError, match=r"^writing Parquet needs pyarrow: pip install pyarrow$"):
            collect(sweep).to_parquet(tmp_path / "r.parquet")

    def test_round_trip(self, sweep, tmp_path):
        pq = pytest.importorskip("pyarrow.parquet")
        table = collect(sweep)
        table.to_parquet(tmp_path / "r.parquet")
        back = pq.read_table(tmp_path / "r.parquet").to_pydict()
        assert list(back) == table.columns
        assert back["value"] == table.column("value") and back["load"] == table.column("load")


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


class TestResultsCommand:
    def test_csv_to_stdout(self, capsys, sweep):
        code, out, err = run(capsys, "results", str(sweep))
        assert code == 0
        assert out == collect(sweep).to_csv()
        assert err.splitlines() == [
            f"ibfabric: warning: {sweep / 'runs' / 'junk'}: no run.json, ignored",
            "19 runs (1 failed), 108 rows",
            "updn-0.4-0: boom: no route from H1 to H7",
        ]

    def test_output_file_aggregate_timing(self, capsys, sweep, tmp_path):
        path = tmp_path / "agg.csv"
        code, out, err = run(capsys, "results", str(sweep), "-o", str(path), "--aggregate", "--timing")
        assert code == 0 and out == ""
        assert path.read_text() == aggregate(collect(sweep, timing=True)).to_csv()
        assert "19 runs (1 failed), 48 rows" in err.splitlines()

    def test_parquet_without_pyarrow(self, capsys, sweep, tmp_path, monkeypatch):
        monkeypatch.setitem(sys.modules, "pyarrow", None)
        code, out, err = run(capsys, "results", str(sweep), "-o", str(tmp_path / "r.parquet"))
        assert code == 2
        assert err == "ibfabric: error: writing Parquet needs pyarrow: pip install pyarrow\n"

    def test_errors(self, capsys, tmp_path, sweep):
        code, _, err = run(capsys, "results", str(tmp_path / "nope"))
        assert (code, err) == (2, f"ibfabric: error: {tmp_path / 'nope'}: not a sweep output directory (no runs/)\n")
        code, _, err = run(capsys, "results", str(sweep), "-o", "table.xlsx")
        assert (code, err) == (2, "ibfabric: error: -o table.xlsx: expected a .csv or .parquet file\n")
        (sweep / "runs" / "updn-0.1-0" / "run.json").write_text("{")
        code, _, err = run(capsys, "results", str(sweep))
        assert code == 2 and err.count("\n") == 1
        assert err.splitlines()[-1].startswith(f"ibfabric: error: {sweep / 'runs' / 'updn-0.1-0' / 'run.json'}: ")
