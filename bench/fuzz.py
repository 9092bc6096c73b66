"""Fuzzing every reader through the command line: ``python -m bench.fuzz``.

Mutates the shipped inputs (NED topologies, ibnetdiscover dumps, OpenSM
unicast and multicast forwarding-table dumps, experiment files, scenario
files, configuration files, ``--set`` values) and runs each
case through the commands a user would (``topo show``, ``routes --check``,
``run``, ``run --scenario``, ``run --config``, ``sweep --dry-run``) in worker
processes with a time and memory limit per case.  Every case must end in success, in a one-line error
(exit status 1 or 2, one line on stderr), or in a failed ``routes --check``
(exit 1); a traceback, a hang (past
``--timeout``), or memory past ``--memory`` is a failure.  Prints one JSON
line per failure, then the outcome table as JSON; exits 1 if anything
failed.  Deterministic for a given ``--seed``.

::

    python -m bench.fuzz --cases 2000 --jobs 2
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import os
import random
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NED = [ROOT / "topologies" / "bermudez2006_fig1.ned", ROOT / "topologies" / "irregular16.ned"]
DUMPS = sorted((ROOT / "tests" / "data" / "ibnetdiscover").glob("*.ibnetdiscover"))
#: Topologies whose forwarding tables are dumped in OpenSM's format (by ``ibfabric routes``) and then mutated.
LFTS = [(ROOT / "topologies" / "bermudez2006_fig1.ned", "updn"), (ROOT / "topologies" / "irregular16.ned", "minhop")]
EXPERIMENTS = [ROOT / "experiments" / "loadsweep.toml"]
#: An experiment with events, a configuration and a saturation table (written into the work directory).
EXPERIMENT_EVENTS = """\
[experiment]
name = "events"
topology = "bermudez2006_fig1"
time = "6us"
warmup = "1us"
config = "kim2007"

[parameters]
"**.traffic" = "uniform"
"**.load" = "${load}"
"**.routing" = "${routing}"

[iterations]
load = [0.1, 0.3]
routing = ["updn", "minhop"]
sw = ["sw2", "sw5"]

[[events]]
at = "2us"
action = "fail-node"
target = "${sw}"

[[events]]
at = "3us"
action = "set-traffic"
load = 0.2

[saturation]
variable = "load"
low = 0.05
high = 0.5
"""
#: A scenario file of every action, for bermudez2006_fig1.
SCENARIO = """\
[[events]]
at = "1us"
action = "fail-link"
target = ["sw3", "sw8"]

[[events]]
at = "2us"
action = "restore-link"
target = ["sw3", "sw8"]
training = "500ns"

[[events]]
at = "1500ns"
action = "set-traffic"
target = "**"
load = 0.2
pattern = "uniform"

[[events]]
at = "2500ns"
action = "fail-node"
target = "sw2"

[[events]]
at = "2800ns"
action = "restore-node"
target = "sw2"
"""
CONFIGS = [ROOT / "ibfabric" / "configs" / "kim2007.toml", ROOT / "ibfabric" / "configs" / "martinez2003.toml"]
PARAMS = ["load", "mtu", "vlBufferSize", "numVLs", "routingDelay", "lid", "lmc", "numPorts", "packetSize", "sl",
          "crossbarSpeedup", "outputBufferSize", "dataRate", "traffic", "routing", "arbiter", "speed", "width",
          "guid", "trafficOptions", "routingOptions", "arrival", "messageSize"]
#: Values that make sense for some parameter: half of the --set values come from here.
FAIR = ["0.2", "0.05", "256B", "1024B", "2", "4", "100ns", "0ns", "2KiB", '"0..3"', '"uniform"', '"updn"', '"minhop"',
        "1.5", "true", '"round-robin"', '"bit-reversal"', "10Gbps", "2.5Gbps", "8"]
NASTY = ["0", "-1", "1e400", "-1e400", "nan", "inf", "9" * 5000, "4294967296", "18446744073709551617", "0x10",
         '""', '"x"', "true", "1/0", "1us", "1e-30", "65536", "49152", "100000000", '"0..15"', '"qdr"', "1.5",
         "(", "}", "${x}", "\\xff", "1 + ", "10Gbps", "2KiB", '"a b c"', "-0", "1e5", "1e9", "[" * 3000, "{}", "[]",
         '"/dev/zero"', '"sw999"', "-1ns", '"XDR"']


# ------------------------------------------------------------------ mutations

def mutate(text: str, rng: random.Random) -> str:
    """One to four random edits of *text*: characters, tokens, numbers or lines."""
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(7)
        if not text:
            return rng.choice(NASTY)
        i = rng.randrange(len(text))
        if kind == 0:  # delete a span
            text = text[:i] + text[i + rng.randint(1, 20):]
        elif kind == 1:  # insert a nasty token
            text = text[:i] + rng.choice(NASTY) + text[i:]
        elif kind == 2:  # replace a number
            digits = [k for k, c in enumerate(text) if c.isdigit()]
            if digits:
                k = rng.choice(digits)
                j = k
                while j < len(text) and (text[j].isdigit() or text[j] in ".x"):
                    j += 1
                text = text[:k] + rng.choice(NASTY) + text[j:]
        elif kind == 3:  # duplicate, delete or swap lines
            lines = text.split("\n")
            a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
            op = rng.randrange(3)
            if op == 0:
                lines.insert(b, lines[a])
            elif op == 1:
                del lines[a]
            else:
                lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        elif kind == 4:  # flip a character
            text = text[:i] + chr(rng.randrange(32, 127)) + text[i + 1:]
        elif kind == 5:  # truncate
            text = text[:i]
        else:  # repeat a chunk
            text = text[:i] + text[i:i + 200] * rng.randint(2, 50) + text[i:]
    return text


def make_case(k: int, seed: int, workdir: Path) -> dict:
    """Case *k*: an input file written into *workdir* and the command line to run on it."""
    rng = random.Random(seed * 1_000_003 + k)
    kind = ["ned", "ibnetdiscover", "lfts", "experiment", "set", "mfts", "scenario", "config"][k % 8]
    path = workdir / f"case{k}"
    if kind == "ned":
        src = rng.choice(NED)
        path = path.with_suffix(".ned")
        _write(path, mutate(src.read_text(), rng), rng)
        cmd = rng.choice([["topo", "show", str(path)], ["routes", str(path), "--check"],
                          ["run", str(path), "--time", "3us", "--warmup", "0us", "--load", "0.1", "--routing", "updn"]])
    elif kind == "ibnetdiscover":
        src = rng.choice(DUMPS)
        path = path.with_suffix(".ibnetdiscover")
        _write(path, mutate(src.read_text(), rng), rng)
        cmd = rng.choice([["topo", "show", str(path)], ["routes", str(path), "--check"],
                          ["run", str(path), "--time", "3us", "--warmup", "0us", "--load", "0.1", "--routing", "updn"]])
    elif kind == "lfts":
        topo, engine = rng.choice(LFTS)
        dump = workdir / f"{topo.stem}.{engine}.lfts.dump"
        path = path.with_suffix(".dump")
        _write(path, mutate(dump.read_text(), rng), rng)
        cmd = rng.choice([["routes", str(topo), "--routing", "file", "--set", f"path={path}", "--check"],
                          ["run", str(topo), "--routing", "file", "--set", f"path={path}", "--time", "3us",
                           "--warmup", "0us"]])
    elif kind == "mfts":
        path = path.with_suffix(".dump")
        _write(path, mutate((workdir / "irregular16.mfts.dump").read_text(), rng), rng)
        cmd = ["routes", str(NED[1]), "--routing", "updn", "--mfts", str(path), "--check"]
    elif kind == "experiment":
        text = rng.choice([*(src.read_text() for src in EXPERIMENTS), EXPERIMENT_EVENTS])
        path = path.with_suffix(".toml")
        _write(path, mutate(text, rng), rng)
        cmd = ["sweep", str(path), "--dry-run", "--out", str(workdir / f"out{k}")]
    elif kind == "scenario":
        path = path.with_suffix(".toml")
        _write(path, mutate(SCENARIO, rng), rng)
        cmd = ["run", str(NED[0]), "--scenario", str(path), "--time", "4us", "--warmup", "0us"]
    elif kind == "config":
        src = rng.choice(CONFIGS)
        path = path.with_suffix(".toml")
        _write(path, mutate(src.read_text(), rng), rng)
        cmd = ["run", str(NED[0]), "--config", f"{path}:{src.stem}", "--time", "3us", "--warmup", "0us"]
    else:
        sets = [f"**.{rng.choice(PARAMS)}={rng.choice(FAIR if rng.random() < 0.5 else NASTY)}"
                for _ in range(rng.randint(1, 3))]
        cmd = ["run", rng.choice(["irregular16", "bermudez2006_fig1"]), "--time", "3us", "--warmup", "0us"]
        for s in sets:
            cmd += ["--set", s]
        if rng.random() < 0.3:
            cmd += rng.choice([["--time", rng.choice(NASTY)], ["--load", rng.choice(NASTY)],
                               ["--warmup", rng.choice(NASTY)], ["--packet-size", rng.choice(NASTY)]])
    return {"case": k, "kind": kind, "cmd": cmd}


def _write_mfts(path: Path) -> None:
    """Multicast tables of irregular16 (groups on shared trees) for the mfts cases to mutate."""
    from ibfabric.components.routing.mfts import MulticastTables, shared_tree, write_mfts
    from ibfabric.topologies import load_fabric

    g = load_fabric(NED[1]).with_lids()
    t = MulticastTables(g)
    n = len(g.ep_node)
    for k, members in enumerate([range(n), range(0, n, 3), [1, n - 1], range(n // 2)]):
        shared_tree(t, 0xC000 + 7 * k, list(members))
    path.write_text(write_mfts(t))


def _write(path: Path, text: str, rng: random.Random) -> None:
    data = text.encode("utf-8", "surrogateescape")
    if rng.random() < 0.03:  # now and then not UTF-8
        i = rng.randrange(len(data) + 1)
        data = data[:i] + b"\xff\xfe" + data[i:]
    path.write_bytes(data)


# ------------------------------------------------------------------ running

class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _init(memory_mb: int) -> None:
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _alarm)


def run_case(args: tuple[dict, int]) -> dict:
    case, timeout = args
    from ibfabric.cli import main

    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    outcome, detail = "ok", ""
    signal.alarm(timeout)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(case["cmd"])
        lines = [line for line in err.getvalue().splitlines() if line.startswith("ibfabric: error") or
                 line.startswith("ibfabric: deadlock")]
        if "Traceback" in err.getvalue():
            outcome, detail = "traceback", err.getvalue()[-1500:]
        elif code in (1, 2) and len(lines) == 1:
            outcome = "error"
        elif code == 1 and not lines and case["cmd"][0] == "routes":
            outcome = "check failed"  # routes --check: unreachable pairs or a dependency cycle
        elif code in (1, 2):
            outcome, detail = "bad error", err.getvalue()[-500:]
        elif code != 0:
            outcome, detail = f"exit {code}", err.getvalue()[-500:]
    except _Timeout:
        outcome = "hang"
    except MemoryError:
        outcome = "memory"
    except SystemExit as exc:  # argparse: a bad flag value is exit 2 with usage
        outcome = "error" if exc.code == 2 else f"exit {exc.code}"
    except BaseException as exc:  # noqa: BLE001 - anything else is what we look for
        import traceback

        outcome, detail = "traceback", "".join(traceback.format_exception(exc))[-1500:]
    finally:
        signal.alarm(0)
    return {**case, "outcome": outcome, "detail": detail, "seconds": round(time.perf_counter() - t0, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60, help="seconds per case before it counts as a hang")
    ap.add_argument("--memory", type=int, default=3000, help="MB of address space per worker")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ibfabric-fuzz-") as tmp:
        from ibfabric.cli import main as cli

        for topo, engine in LFTS:  # the tables the lfts cases mutate
            with contextlib.redirect_stdout(io.StringIO()):
                cli(["routes", str(topo), "--routing", engine, "-o", str(Path(tmp) / f"{topo.stem}.{engine}.lfts.dump")])
        _write_mfts(Path(tmp) / "irregular16.mfts.dump")
        cases = [make_case(k, args.seed, Path(tmp)) for k in range(args.cases)]
        ctx = multiprocessing.get_context("forkserver")
        table: Counter = Counter()
        failures = 0
        with ctx.Pool(args.jobs, initializer=_init, initargs=(args.memory,), maxtasksperchild=100) as pool:
            for res in pool.imap_unordered(run_case, [(c, args.timeout) for c in cases]):
                table[res["kind"], res["outcome"]] += 1
                if res["outcome"] not in ("ok", "error", "check failed"):
                    failures += 1
                    print(json.dumps(res), flush=True)
    kinds = sorted({k for k, _ in table})
    outcomes = sorted({o for _, o in table})
    print(json.dumps({
        "benchmark": "fuzz", "cases": args.cases, "seed": args.seed, "failures": failures,
        "wall_s": round(time.perf_counter() - t0, 1),
        "outcomes": {k: {o: table[k, o] for o in outcomes if table[k, o]} for k in kinds},
    }))
    return 1 if failures else 0


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
