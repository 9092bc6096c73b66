"""``ibfabric plugins``: every registered implementation, by role, with the plugin it comes from."""

from __future__ import annotations

import argparse


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("plugins", help="list routing engines, arbiters, droppers, traffic patterns... by role",
                       description="List every implementation registered through the ibfabric plugin hooks.")
    p.add_argument("--block", action="append", default=[], metavar="PLUGIN", help="do not load this plugin")
    return p


def run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from ibfabric.plugins import ROLES, PluginSet

    plugins = PluginSet.load(block=args.block)
    console = Console(width=120)
    for attr, (_hook, role) in ROLES.items():
        reg = getattr(plugins, attr)
        plural = role[:-1] + "ies" if role.endswith("y") else role + "s"
        t = Table(title=plural, title_justify="left", show_header=True, header_style="bold")
        t.add_column("name")
        t.add_column("plugin")
        t.add_column("package")
        t.add_column("description")
        for r in reg:
            dist = plugins.distribution(r.plugin) or "-"
            desc = r.description or ((getattr(r.obj, "__doc__", "") or "").strip().splitlines() or [""])[0]
            t.add_row(r.name, r.plugin, dist, desc)
        if not len(reg):
            t.add_row("(none)", "", "", "")
        console.print(t)
    return 0
