"""The probes of saturation searches (issue 32): where a search's throughput comes from.

  python experiments/martinez2003_probes.py RESULTS [VAR=VALUE ...]

RESULTS is an ``ibfabric saturation`` output directory; the probes (runs) whose
iteration variables have the given values are printed as a markdown table,
one row per probe, by the variables that differ between the searches and then load: offered and
accepted load (fractions of the hosts' link rate, averaged over all hosts),
whether the search counts the probe saturated (its source backlog grew, or it
accepted less than 0.95 of what it offered: ``ibfabric.saturation.is_saturated``
with the default threshold), and the busiest link's utilisation.  Example,
deterministic and adaptive bit-reversal on one fabric::

  python experiments/martinez2003_probes.py results/martinez2003_table1_more column=BR size=32B switches=8 topo=3
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ibfabric.saturation import is_saturated

#: the saturation search's default threshold (accepted below it times offered: saturated)
THRESHOLD = 0.95

def probes(directory: Path, want: dict[str, str]) -> list[dict]:
    """The runs of *directory* whose variables match *want* (compared as text), with their figures."""
    out = []
    for run in sorted((directory / "runs").iterdir()):
        try:
            meta = json.loads((run / "run.json").read_text())
            summary = json.loads((run / "summary.json").read_text())
        except (OSError, ValueError):
            continue
        v = meta["vars"]
        if all(str(v.get(k)) == x for k, x in want.items()):
            out.append({"vars": v, "offered": summary["offered_load"], "accepted": summary["accepted_load"],
                        "saturated": is_saturated(summary, THRESHOLD),
                        "max link": summary["link_utilisation"]["max"]})
    return out


def table(rows: list[dict], want: dict[str, str]) -> list[str]:
    # the variables that tell the rows' searches apart (those all rows share are in the command line or fixed)
    keys = sorted(k for k in {k for r in rows for k in r["vars"]} - set(want) - {"load"}
                  if len({str(r["vars"].get(k)) for r in rows}) > 1)
    head = keys + ["load", "offered", "accepted", "saturated", "max link"]
    out = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in sorted(rows, key=lambda r: ([str(r["vars"].get(k)) for k in keys], r["vars"]["load"])):
        cells = [str(r["vars"].get(k)) for k in keys] + [f"{r['vars']['load']:.4f}", f"{r['offered']:.4f}",
                                                        f"{r['accepted']:.4f}", "yes" if r["saturated"] else "no",
                                                        f"{r['max link']:.3f}"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def main(argv: list[str]) -> int:
    if not argv or any("=" not in a for a in argv[1:]):
        print(__doc__)
        return 2
    directory = Path(argv[0])
    if not (directory / "runs").is_dir():
        print(f"martinez2003_probes.py: {directory}: not a saturation output directory (no runs/)", file=sys.stderr)
        return 2
    want = dict(a.split("=", 1) for a in argv[1:])
    rows = probes(directory, want)
    if not rows:
        print(f"martinez2003_probes.py: no probe in {directory} has {' '.join(argv[1:])}", file=sys.stderr)
        return 1
    print("\n".join(table(rows, want)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
