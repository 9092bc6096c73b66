"""Golden scenarios of the data path: ``python -m bench.golden [--out FILE] [--compare OLD NEW]``.

Runs a fixed list of short ``ibfabric run`` scenarios (the default one, each
input organisation and output side of the switch, the crossbar orders, the
papers' configurations, failures, the dynamic subnet manager, multicast
replication engines) and prints, per scenario, what a change of the data
path must keep or explain: events, packets injected, delivered, dropped (by
reason) and in flight, and the latency mean, p50, p99 and max.  It never
asserts: ``--compare OLD NEW`` prints the scenarios whose figures differ.

Every scenario runs in a child ``ibfabric run ... --json`` (the user's
command), so the figures are those of the installed ibfabric.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

SWITCH8 = """network switch8 {
    submodules:
        sw: Switch { numPorts = 8; }
        h[8]: HCA;
    connections:
        for i=0..7 { h[i].port[1] <--> Link <--> sw.port[i+1]; }
}
"""

GROUPS = "g1: 0 5 senders=*; g2: 3 9 11 14 senders=*; g3: 2 12 senders=*"
MCAST = ["--set", f"**.multicastGroups={GROUPS}", "--set", "**.realtimeMulticast=0.2",
         "--set", "**.realtimeLoad=0.1", "--set", "**.realtimeSL=1", "--set", "**.inputQueues=\"fifo\"",
         "--set", "**.outputBufferSize=0B", "--set", "**.vlBufferSize=8400B",
         "--routing", "updn", "--time", "3ms", "--warmup", "500us", "--load", "0.1", "--packet-size", "1050"]

#: name -> arguments of ``ibfabric run`` (TOPOLOGY first; "{switch8}" is the one-switch file)
SCENARIOS: dict[str, list[str]] = {
    "default": [],
    "fifo-0.3": ["irregular16", "--load", "0.3", "--set", "**.inputQueues=\"fifo\""],
    "voq-0.3": ["irregular16", "--load", "0.3", "--set", "**.inputQueues=\"voq\""],
    "outbuf-0.3": ["irregular16", "--load", "0.3", "--set", "**.outputBufferSize=4KiB"],
    "outbuf-fifo-wrr-0.5": ["irregular16", "--load", "0.5", "--set", "**.outputBufferSize=4KiB",
                            "--set", "**.inputQueues=\"fifo\"", "--set", "**.crossbarArbiter=\"wrr\""],
    "wrr-0.3": ["irregular16", "--load", "0.3", "--set", "**.crossbarArbiter=\"wrr\""],
    "vls-0.4": ["irregular16", "--load", "0.4", "--set", "**.numVLs=4", "--set", "**.sl=\"0..3\""],
    "omnetpp-ib-0.1": ["{switch8}", "--config", "omnetpp-ib", "--load", "0.1", "--time", "500us"],
    "omnetpp-ib-0.5": ["{switch8}", "--config", "omnetpp-ib", "--load", "0.5", "--time", "500us"],
    "omnetpp-ib-0.9": ["{switch8}", "--config", "omnetpp-ib", "--load", "0.9", "--time", "500us"],
    "kim2007-0.3": ["kim2007_15", "--config", "kim2007", "--load", "0.3", "--routing", "updn",
                    "--packet-size", "1050", "--time", "2ms", "--warmup", "200us"],
    "kim2007-iq-mp-lfu-hll": ["kim2007_15", "--config", "kim2007", "--set", "**.outputBufferSize=0B",
                              "--set", "**.vlBufferSize=8400B", "--load", "0.3", "--routing", "multipath",
                              "--packet-size", "1050", "--time", "2ms", "--warmup", "200us",
                              "--set", "**.sm.lmc=7", "--set", "**.optionBits=7", "--set", "**.optionsWhen=\"slid\"",
                              "--set", "**.adaptiveBy=\"slid\"", "--set", "**.adaptive=0.5",
                              "--set", "**.pathSelector=\"lfu\"", "--dropper", "hll",
                              "--set", "**.dropperOptions=\"hv=0\""],
    "martinez2003-0.05": ["irregular16", "--config", "martinez2003", "--load", "0.05", "--packet-size", "276",
                          "--time", "300us", "--warmup", "50us"],
    "martinez2003-fa-0.1": ["irregular16", "--config", "martinez2003-fa", "--load", "0.1", "--packet-size", "276",
                            "--set", "**.adaptive=1", "--time", "300us", "--warmup", "50us"],
    "martinez2003-fa-lookup-0.1": ["irregular16", "--config", "martinez2003-fa", "--load", "0.1",
                                   "--packet-size", "276", "--set", "**.adaptive=0.5",
                                   "--set", "**.selectAt=\"lookup\"", "--time", "300us", "--warmup", "50us"],
    "alfaro2001": ["irregular16", "--config", "alfaro2001", "--traffic", "cbr", "--connections", "200",
                   "--time", "300us", "--warmup", "50us"],
    "failures": ["irregular16", "--load", "0.2", "--time", "100us", "--scenario",
                 "experiments/scenarios/failures.toml"],
    "failures-fifo-outbuf": ["irregular16", "--load", "0.2", "--time", "100us", "--scenario",
                             "experiments/scenarios/failures.toml", "--set", "**.inputQueues=\"fifo\"",
                             "--set", "**.outputBufferSize=4KiB"],
    "dynamic-sm": ["topologies/bermudez2006_fig1.ned", "--load", "0.1", "--time", "800us",
                   "--set", "**.sm.dynamic=true", "--scenario", "experiments/scenarios/sm-link-failure.toml"],
    "mcast-asynchronous": ["kim2007_15", "--set", "**.replication=\"asynchronous\"", *MCAST],
    "mcast-synchronous": ["kim2007_15", "--set", "**.replication=\"synchronous\"", *MCAST],
    "mcast-central-buffer": ["kim2007_15", "--set", "**.replication=\"central-buffer\"", *MCAST],
    "mcast-replicated-unicast": ["kim2007_15", "--set", "**.replication=\"replicated-unicast\"", *MCAST],
}

KEYS = ("events", "packets_injected", "packets_delivered", "packets_dropped", "packets_in_flight",
        "drops_by_reason", "accepted_load", "deadlock")


def run_one(name: str, args: list[str], check: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        switch8 = os.path.join(tmp, "switch8.ned")
        with open(switch8, "w") as f:
            f.write(SWITCH8)
        argv = [a.replace("{switch8}", switch8) for a in args]
        cmd = [sys.executable, "-m", "ibfabric", "run", *argv, "--json", "--no-progress"]
        if check:
            cmd.append("--check")
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if not proc.stdout.strip():
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    s = json.loads(proc.stdout)
    out = {k: s.get(k) for k in KEYS if k in s}
    out["latency_ns"] = {k: s["latency_ns"].get(k) for k in ("mean", "p50", "p99", "max")}
    if proc.returncode:
        out["returncode"] = proc.returncode
        out["stderr"] = proc.stderr.strip().splitlines()[-1:]
    return out


def compare(old: dict, new: dict) -> int:
    differ = 0
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a == b:
            print(f"same     {name}")
            continue
        differ += 1
        print(f"DIFFERS  {name}")
        for k in sorted(set(a or {}) | set(b or {})):
            va, vb = (a or {}).get(k), (b or {}).get(k)
            if va != vb:
                print(f"    {k}: {va} -> {vb}")
    return differ


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.golden", description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the figures as JSON to this file")
    ap.add_argument("--only", action="append", help="run only this scenario (repeatable)")
    ap.add_argument("--check", action="store_true", help="run with --check (credit and port audits)")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="compare two --out files and exit")
    args = ap.parse_args(argv)
    if args.compare:
        with open(args.compare[0]) as f:
            old = json.load(f)
        with open(args.compare[1]) as f:
            new = json.load(f)
        return 1 if compare(old, new) else 0
    names = args.only or list(SCENARIOS)
    results = {}
    for name in names:
        r = run_one(name, SCENARIOS[name], args.check)
        results[name] = r
        print(json.dumps({"scenario": name, **r}), flush=True)
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
        os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
