"""``ibfabric qos``: arbitration frames, slot counts and traffic classes (Alfaro et al. 2001 §4);
and the QoS part of ``ibfabric run --traffic cbr``.

::

    $ ibfabric qos frame --link-rate 2.5Gbps
    $ ibfabric qos slots --bandwidth 64Mbps --link 1x
    $ ibfabric qos classes
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from ibfabric.errors import ConfigError

#: Defaults of ``ibfabric run --traffic cbr``.
CBR_DEFAULTS = {"connections": 256, "retries": 1000, "policy": "alfaro2001", "packet_size": 256}


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("qos", help="VL arbitration frames, slots per connection and traffic classes",
                       description="Arbitration-table arithmetic of Alfaro, Sanchez and Duato (2001): frames of "
                                   "64 x 255 slots of 64 bytes, slots per connection, traffic classes.")
    qsub = p.add_subparsers(dest="qos_command", metavar="SUBCOMMAND")
    f = qsub.add_parser("frame", help="T_frame and slots per frame of a link rate")
    f.add_argument("--link-rate", "--link", dest="link", default="1x", metavar="RATE",
                   help="1x, 4x, 12x (2.5, 10, 30 Gb/s as in the paper) or a rate such as 2.5Gbps (default 1x)")
    f.set_defaults(_qos=_frame)
    s = qsub.add_parser("slots", help="slots per frame a connection of a given bandwidth needs")
    s.add_argument("--bandwidth", required=True, metavar="RATE", help="mean bandwidth, e.g. 64Mbps")
    s.add_argument("--link", "--link-rate", dest="link", default="1x", metavar="RATE",
                   help="1x, 4x, 12x or a rate such as 2.5Gbps (default 1x)")
    s.set_defaults(_qos=_slots)
    c = qsub.add_parser("classes", help="the traffic classes and their SLs and VLs")
    c.set_defaults(_qos=_classes)
    p.set_defaults(_qos=None)
    return p


def run(args) -> int:
    if args._qos is None:
        print("usage: ibfabric qos {frame,slots,classes} ...")
        return 2
    return int(args._qos(args) or 0)


def _rate_text(rate: float) -> str:
    return f"{rate / 1e9:g} Gb/s" if rate >= 1e9 else f"{rate / 1e6:g} Mb/s"


def _frame(args) -> int:
    from ibfabric.components.qos import SLOTS_PER_FRAME, frame_time

    rate = _link_rate(args.link)
    print(f"link rate        {_rate_text(rate)}")
    print(f"slots per frame  {SLOTS_PER_FRAME} (64 entries x 255 units of 64 bytes)")
    print(f"T_frame          {frame_time(rate) / 1e6:.6f} ms")
    return 0


def _bandwidth(text: str) -> float:
    from ibfabric.components.qos import parse_rate

    return _finite(parse_rate(text, "bandwidth", "give a rate such as 64Mbps"), "--bandwidth", text)


def _link_rate(text: str) -> float:
    from ibfabric.components.qos import link_rate_of

    return _finite(link_rate_of(text), "--link", text)


def _finite(rate: float, option: str, text: str) -> float:
    if not math.isfinite(rate):
        raise ConfigError(f"{option} {text}: not a finite rate")
    return rate


def _slots(args) -> int:
    from ibfabric.components.qos import LINK_RATES, SLOTS_PER_FRAME, ClassMap, category, frame_time, slots_for

    bw = _bandwidth(args.bandwidth)
    rate = _link_rate(args.link)
    if bw > rate:
        link = f"a {args.link.strip().lower()} link" if args.link.strip().lower() in LINK_RATES else "the link"
        raise ConfigError(f"--bandwidth {args.bandwidth} exceeds the data rate of {link} ({_rate_text(rate)}):"
                          " a connection can reserve at most every slot of the frame")
    n = slots_for(bw, rate)
    exact = bw / rate * SLOTS_PER_FRAME
    cat = category(bw)
    print(f"N_slots          {n}")
    print(f"                 ceil({bw:g} / {rate:g} x {SLOTS_PER_FRAME}) = ceil({exact:.6g})")
    print(f"reserved         {n / SLOTS_PER_FRAME:.4%} of the link ({n * 512 / frame_time(rate) * 1e9 / 1e6:.6g} Mb/s)")
    classes = ClassMap()
    print(f"class            DB SL {classes.db[cat]} / DBTS SL {classes.dbts[cat]} (bandwidth {_CATEGORY_LABELS[cat]})")
    return 0


#: The bandwidth categories of Alfaro et al. 2001 §4.1, by index.
_CATEGORY_LABELS = ("<= 64 Kbps", "<= 1.55 Mbps", "<= 64 Mbps", "> 64 Mbps")


def _classes(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from ibfabric.components.qos import ClassMap

    t = Table(show_header=True, header_style="bold")
    for col in ("class", "bandwidth", "SL", "VL", "arbitration table"):
        t.add_column(col)
    for row in ClassMap().describe():
        cat = row["category"]
        t.add_row(row["class"], "-" if cat is None else _CATEGORY_LABELS[cat], str(row["sl"]), str(row["vl"]), row["table"])
    Console(width=100).print(t)
    print("VL15 (subnet management) is in no table: it always goes first.")
    return 0


# ---------------------------------------------------------------- ibfabric run --traffic cbr


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options ``ibfabric run`` takes for ``--traffic cbr``."""
    g = p.add_argument_group("QoS (--traffic cbr)")
    g.add_argument("--connections", type=int, metavar="N",
                   help=f"CBR connections to establish (default {CBR_DEFAULTS['connections']})")
    g.add_argument("--retries", type=int, metavar="N",
                   help=f"attempts per connection before establishment ends (default {CBR_DEFAULTS['retries']})")
    g.add_argument("--be-share", type=float, metavar="X", help="share of every link reserved for best effort (default 0.2)")
    g.add_argument("--qos-policy", metavar="NAME", help=f"arbitration policy (default {CBR_DEFAULTS['policy']})")


def check_run_options(args) -> bool:
    """Whether this is a CBR (QoS) run; reject QoS options outside one."""
    cbr = args.traffic == "cbr"
    given = [o for o, v in (("--connections", args.connections), ("--retries", args.retries),
                            ("--be-share", args.be_share), ("--qos-policy", args.qos_policy)) if v is not None]
    if given and not cbr:
        raise ConfigError(f"{given[0]} only applies to --traffic cbr")
    if cbr:
        if args.load is not None:
            raise ConfigError("--load does not apply to --traffic cbr: the connections' bandwidths make the load")
        if args.connections is not None and args.connections < 1:
            raise ConfigError(f"--connections must be >= 1 (got {args.connections})")
        if args.retries is not None and args.retries < 1:
            raise ConfigError(f"--retries must be >= 1 (got {args.retries})")
    return cbr


def run_overrides(args) -> list[tuple[str, str]]:
    """Convenience overrides of a CBR run: no pattern traffic, the VLs the classes need, MTU for the packets."""
    from ibfabric.components.qos import ClassMap

    from ibfabric.components.hca import MTUS

    size = args.packet_size or CBR_DEFAULTS["packet_size"]
    mtu = next((m for m in MTUS if m >= size), MTUS[-1])
    return [("**.traffic", '""'), ("**.numVLs", str(ClassMap().num_vls)), ("**.mtu", f"{mtu}B")]


def setup_run(sim, args) -> Any:
    """Admit the connections and start their CBR traffic (``ibfabric run --traffic cbr``)."""
    from ibfabric.components.qos.cbr import QosNetwork

    options = {} if args.be_share is None else {"be_share": args.be_share}
    qos = QosNetwork(sim, policy=args.qos_policy or CBR_DEFAULTS["policy"], options=options)
    qos.establish(args.connections or CBR_DEFAULTS["connections"], packet_size=args.packet_size or CBR_DEFAULTS["packet_size"],
                  retries=args.retries or CBR_DEFAULTS["retries"])
    qos.start_traffic()
    return qos


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def print_qos(q: dict[str, Any]) -> None:
    """The QoS section of a run's printed summary."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=140)
    adm = q["admission"]
    per_adm = adm.get("per_sl", {})
    head = f"QoS: policy {q['policy']}, {adm['established']} connections established"
    if adm.get("requested") is not None:
        head += f" of {adm['requested']} requested"
        if adm.get("exhausted_sl") is not None:
            head += f" (SL {adm['exhausted_sl']} ran out of retries)"
    console.print(f"[bold]{head}[/bold]")
    if "per_sl" not in q:
        return
    t = Table(show_header=True, header_style="bold")
    cols = ("SL", "tried", "estab.", "requested", "delivered", "B/cycle/host", "<=IAT/32", "<=IAT/8", "<=IAT/2",
            "<=IAT", "|jitter|<=IAT/8", "worst on time")
    for c in cols:
        t.add_column(c, justify="right")
    for sl, r in q["per_sl"].items():
        a = per_adm.get(sl, {})
        d = r["delay_under"]
        worst = r["worst"]
        t.add_row(
            sl, str(a.get("attempts", "-")), str(a.get("established", r["connections"])),
            _pct(r["requested_fraction_of_link"]), _pct(r["delivered"]["fraction_of_link"]),
            f"{r['delivered']['bytes_per_cycle_per_host']:.4f}", _pct(d["IAT/32"]), _pct(d["IAT/8"]),
            _pct(d["IAT/2"]), _pct(d["IAT"]), _pct(r["jitter"]["[-IAT/8, IAT/8]"]),
            "-" if worst is None else f"{_pct(worst['on_time'])} (#{worst['id']})",
        )
    console.print(t)
    tot = q["delivered"]
    console.print(f"delivered {tot['bytes_per_cycle_per_host']:.3f} bytes/cycle/host ({_pct(tot['fraction_of_link'])}"
                  f" of the hosts' links; {_pct(q['requested_fraction_of_link'])} requested); cycle {q['cycle_ns']:g} ns;"
                  f" deadline for worst on time: {q['deadline_iat']:g} IAT")
    u = q.get("utilisation")
    if u:
        hi, sw = u["host_interfaces"], u["switch_ports"]
        parts = []
        for name, g in (("host interfaces", hi), ("switch ports", sw)):
            if g["count"]:
                parts.append(f"{name} mean {_pct(g['mean'])} max {_pct(g['max'])}")
        console.print("utilisation: " + "; ".join(parts))
