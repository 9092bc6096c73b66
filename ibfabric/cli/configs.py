"""``ibfabric configs``: the named model configurations, and what each one sets.

``ibfabric configs`` lists the shipped configurations (name, what it extends,
description); ``ibfabric configs NAME`` (or ``FILE.toml:NAME``) prints every
parameter the configuration sets, inherited ones included, with where its
value comes from; ````ibfabric configs FILE.toml`` lists a file's own.
"""

from __future__ import annotations

import argparse


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "configs",
        help="list the named model configurations (ibfabric run --config NAME) and what each sets",
        description="List the named model configurations, or show every parameter one of them sets and its source.",
    )
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="a configuration (NAME, FILE.toml:NAME) to show, or a FILE.toml to list")
    return p


def run(args) -> int:
    from rich.console import Console

    from ibfabric import configs

    console = Console(width=140)
    name = args.name
    if name is None:
        _list(console, configs.shipped(), "shipped configurations (ibfabric run --config NAME)")
        return 0
    if name.endswith(".toml"):  # a file: its configurations
        _list(console, configs.load_file(name), f"configurations of {name} (ibfabric run --config {name}:NAME)")
        return 0
    _show(console, configs.get(name))
    return 0


def _list(console, found: dict, title: str) -> None:
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_header=True, header_style="bold", show_lines=True)
    t.add_column("name", no_wrap=True)
    t.add_column("extends", no_wrap=True)
    t.add_column("parameters", justify="right")
    t.add_column("description")
    for cfg in found.values():
        t.add_row(cfg.name, cfg.extends or "-", str(len(cfg.own)), cfg.description)
    if not found:
        t.add_row("(none)", "", "", "")
    console.print(t)


def configs_file(file: str) -> str:
    """A shipped configuration's file as ``ibfabric/configs/NAME.toml``, a user's as given."""
    from pathlib import Path

    from ibfabric.configs import SHIPPED_DIR

    return f"ibfabric/configs/{Path(file).name}" if Path(file).parent == SHIPPED_DIR else file


def _show(console, cfg) -> None:
    from rich.markup import escape
    from rich.table import Table

    chain = " -> ".join(cfg.chain())
    console.print(f"[bold]{escape(cfg.name)}[/bold] ({escape(configs_file(cfg.file))})" + (f", extends {escape(chain)}" if cfg.parent else ""))
    if cfg.description:
        console.print(escape(cfg.description))
    t = Table(show_header=True, header_style="bold")
    t.add_column("parameter", no_wrap=True)
    t.add_column("value", no_wrap=True)
    if cfg.parent is not None:
        t.add_column("from", no_wrap=True)
    t.add_column("source")
    for param, who in cfg.params():
        row = [param.pattern, param.value] + ([who] if cfg.parent is not None else []) + [param.source or "-"]
        t.add_row(*(escape(x) for x in row))
    console.print(t)
