"""Named model configurations: sets of parameter overrides with a name, OMNeT++'s ``[Config NAME]``.

A configuration is a named set of parameter overrides by wildcard path (the
form ``--set`` and an experiment file's ``[parameters]`` use), with a
description and, for every parameter, where its value comes from.  One may
``extends`` another: it starts from the other's parameters and its own win
(chains of any length; a cycle or an unknown name is an error).  The shipped
ones, one TOML file per paper in this package, reproduce the papers' switch
and link models (``ibfabric configs`` lists them)::

    [config.kim2007]
    description = "Kim et al. 2007, Table 1: ..."

    [config.kim2007.parameters]
    "**.dataRate" = { value = "2.5Gbps", source = "Table 1: physical link bandwidth" }
    "**.mtu" = "1024B"                       # a bare value has no source

    [config.kim2007-hll]
    extends = "kim2007"                      # a config of this file, else a shipped one, else FILE:NAME

A configuration is named ``NAME`` (shipped), ``FILE:NAME`` or ``FILE`` (a file
holding one).  It beats the topology file; ``--set``, the command line's
options and an experiment file's ``[parameters]`` beat it (docs/configs.md).

Examples
--------
>>> overrides("alfaro2001-4096")["**.mtu"]
'4096B'
>>> get("alfaro2001-4096").chain()
['alfaro2001-4096', 'alfaro2001']
"""

from __future__ import annotations

import fnmatch
import functools
import os
from pathlib import Path

import attrs

from ibfabric.errors import ConfigError, did_you_mean
from ibfabric.tomlpos import Locator, load_only, read_file

__all__ = ["Config", "Param", "SHIPPED_DIR", "get", "load_file", "overrides", "shipped"]

#: Where the shipped configurations are: one ``*.toml`` file per paper, in this package.
SHIPPED_DIR = Path(__file__).resolve().parent

_CONFIG_KEYS = ("description", "extends", "parameters")


@attrs.frozen
class Param:
    """One override of a configuration: ``pattern = value``, and where the value comes from."""

    pattern: str
    value: str
    source: str = ""


@attrs.frozen
class Config:
    """A named configuration: *own* parameters in file order, *extends* as written, *parent* resolved
    by :func:`get` (see :meth:`params` for the parameters with inheritance)."""

    name: str
    description: str
    extends: str | None
    own: tuple[Param, ...]
    file: str
    parent: Config | None = None

    def chain(self) -> list[str]:
        """Its name and those of the configurations it extends, nearest first."""
        return [self.name] + (self.parent.chain() if self.parent is not None else [])

    def params(self) -> list[tuple[Param, str]]:
        """``(param, config name)`` of every parameter it sets: its own, then those it inherits and does not set."""
        out = [(p, self.name) for p in self.own]
        if self.parent is not None:
            mine = {p.pattern for p in self.own}
            out += [(p, who) for p, who in self.parent.params() if p.pattern not in mine]
        return out

    def overrides(self) -> dict[str, str]:
        """``{pattern: value}`` in priority order (first match wins), inherited values included."""
        return {p.pattern: p.value for p, _ in self.params()}


def overrides(spec: str, base_dir: str | os.PathLike | None = None) -> dict[str, str]:
    """The parameter overrides of configuration *spec* (``NAME``, ``FILE:NAME`` or ``FILE``).

    Pass them to :func:`ibfabric.load` as ``optional_overrides`` (the level
    the command line's ``--config`` uses, below ``overrides``)::

        sim = ibfabric.load("irregular16", optional_overrides=configs.overrides("kim2007"),
                            overrides={"**.load": "0.2"})
    """
    return get(spec, base_dir).overrides()


def get(spec: str, base_dir: str | os.PathLike | None = None) -> Config:
    """Configuration *spec*: a shipped name, ``FILE:NAME`` or ``FILE`` (relative to *base_dir*, default the
    current directory), with its ``extends`` chain resolved.

    Raises
    ------
    ConfigError
        Unknown name, unreadable or invalid file, an ``extends`` cycle or an unknown parameter (one line).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"a configuration name must be a non-empty string (got {spec!r})")
    spec = spec.strip()
    path, name = _split(spec)
    if path is None:
        _known(name, shipped(), "")
        return _resolve(shipped()[name], ())
    local, name, file = _file_config(Path(base_dir or ".") / path, name, path)
    _known(name, local, f"{file}: ")
    return _resolve(local[name], ())


def _split(spec: str) -> tuple[str | None, str | None]:
    """``(file, name)`` of a spec: ``(None, name)`` for a shipped name, ``(file, None)`` for a bare file."""
    path, colon, name = spec.rpartition(":")
    if colon and not any(c in name for c in "/\\"):  # FILE:NAME, not C:\\x.toml
        return path, name
    return (spec, None) if spec.endswith(".toml") or any(c in spec for c in "/\\") else (None, spec)


def _file_config(file: Path, name: str | None, written: str) -> tuple[dict[str, Config], str, str]:
    """``(configs of file, name, file)``: a bare file names its only config."""
    local = load_file(file)
    if name is None:
        if len(local) != 1:
            raise ConfigError(f"{file}: holds {len(local)} configs ({', '.join(local) or 'none'}): say which,"
                              f" as {written}:NAME")
        name = next(iter(local))
    return local, name, str(file)


def _known(name: str, pool: dict[str, Config], prefix: str) -> None:
    if name not in pool:
        valid = sorted(pool)
        raise ConfigError(f"{prefix}no config '{name}'{did_you_mean(name, valid)} (valid: {', '.join(valid) or 'none'})")


def _resolve(cfg: Config, seen: tuple[tuple[str, str], ...]) -> Config:
    """*cfg* with its ``extends`` chain resolved; *seen* holds ``(file, name)`` of the configs extending it."""
    if (cfg.file, cfg.name) in seen:
        names = [n for _, n in seen[seen.index((cfg.file, cfg.name)):]] + [cfg.name]
        raise ConfigError(f"{cfg.file}: config '{cfg.name}': extends cycle {' -> '.join(names)}")
    if cfg.extends is None:
        return cfg
    path, name = _split(cfg.extends)
    try:
        if path is None:  # a config of the same file, else a shipped one
            pool = {**shipped(), **(load_file(cfg.file) if Path(cfg.file).parent != SHIPPED_DIR else {})}
        else:
            pool, name, _ = _file_config(Path(cfg.file).parent / path, name, path)
        _known(name, pool, "")
    except ConfigError as exc:
        raise ConfigError(f"{cfg.file}: config '{cfg.name}': extends '{cfg.extends}': {exc}") from None
    return attrs.evolve(cfg, parent=_resolve(pool[name], seen + ((cfg.file, cfg.name),)))


@functools.cache
def shipped() -> dict[str, Config]:
    """Every shipped configuration by name (the ``*.toml`` files of this package), without parents resolved."""
    out: dict[str, Config] = {}
    for file in sorted(SHIPPED_DIR.glob("*.toml")):
        for name, cfg in load_file(file).items():
            if name in out:
                raise ConfigError(f"{file}: config '{name}' is already declared in {out[name].file}")
            out[name] = cfg
    return out


def load_file(path: str | os.PathLike) -> dict[str, Config]:
    """The configurations of a TOML file by name, in file order, ``extends`` not resolved
    (:class:`~ibfabric.errors.ConfigError` ``file:line:col: message`` if it is invalid)."""
    path = str(path)
    try:
        st = os.stat(path)
    except OSError:
        raise ConfigError(f"{path}: no such config file") from None
    return _load_file(path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=64)
def _load_file(path: str, mtime_ns: int, size: int) -> dict[str, Config]:
    configs, loc = load_only(read_file(path), path, "config", "config", "[config.NAME] tables")
    if configs is None:
        configs = {}
    if not isinstance(configs, dict):
        raise ConfigError(f"{loc.at(('config',), value=True)}: 'config' must be a table of [config.NAME] tables")
    return {name: _read_config(name, table, loc, path) for name, table in configs.items()}


def _read_config(name: str, table, loc: Locator, path: str) -> Config:
    where = ("config", name)
    if not isinstance(table, dict):
        raise ConfigError(f"{loc.at(where, value=True)}: config '{name}' must be a table")
    if not name or ":" in name or "/" in name:
        raise ConfigError(f"{loc.at(where)}: bad config name {name!r} (no ':' or '/')")
    for key in table:
        if key not in _CONFIG_KEYS:
            raise ConfigError(f"{loc.at(where + (key,))}: config '{name}': unknown key '{key}'{did_you_mean(key, _CONFIG_KEYS)} (valid: {', '.join(_CONFIG_KEYS)})")
    description = table.get("description", "")
    extends = table.get("extends")
    for key, value in (("description", description), ("extends", extends)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{loc.at(where + (key,), value=True)}: config '{name}': '{key}' must be a string")
    params = table.get("parameters", {})
    if not isinstance(params, dict):
        raise ConfigError(f"{loc.at(where + ('parameters',), value=True)}: config '{name}': 'parameters' must be a table")
    own = []
    for pattern, entry in _flatten(params):
        at = loc.at(where + ("parameters", pattern), value=True)
        source = ""
        if isinstance(entry, dict):
            if set(entry) - {"value", "source"} or "value" not in entry or not isinstance(entry.get("source", ""), str):
                raise ConfigError(f"{at}: config '{name}': parameter '{pattern}' must be a value or"
                                  " { value = ..., source = \"...\" }")
            source, entry = entry.get("source", ""), entry["value"]
        if isinstance(entry, bool):
            value = "true" if entry else "false"
        elif isinstance(entry, (str, int, float)):
            value = entry if isinstance(entry, str) else repr(entry)
        else:
            raise ConfigError(f"{at}: config '{name}': the value of '{pattern}' must be a string, number or boolean")
        _check_parameter(pattern, at, name)
        own.append(Param(pattern, value, " ".join(source.split())))
    return Config(name, " ".join(description.split()), extends, tuple(own), path)


def _flatten(table: dict, prefix: str = ""):
    """``(pattern, entry)``: unquoted dotted keys (``sm.lmc = 1``) join back with dots."""
    for key, value in table.items():
        pattern = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and value and not {"value", "source"} & set(value):  # ({} is a bad entry)
            yield from _flatten(value, pattern)
        else:
            yield pattern, value


def _check_parameter(pattern: str, at: str, name: str) -> None:
    """A pattern's last component must name a parameter some module or channel type declares."""
    from ibfabric.ned_like.patterns import PatternError, compile_pattern

    try:
        compile_pattern(pattern)
    except PatternError as exc:
        raise ConfigError(f"{at}: config '{name}': invalid pattern '{pattern}': {exc}") from None
    last = pattern.rsplit(".", 1)[-1]
    known = known_parameters()
    if any(c in last for c in "*?[{") and any(fnmatch.fnmatchcase(k, last) for k in known):
        return
    if last not in known:
        raise ConfigError(f"{at}: config '{name}': unknown parameter '{last}' in '{pattern}': no module or channel"
                          f" type declares it{did_you_mean(last, sorted(known))}")


@functools.cache
def known_parameters() -> frozenset[str]:
    """Every parameter name the built-in types and the installed plugins' module types declare."""
    from ibfabric.ned_like import TypeLibrary

    lib = TypeLibrary.default()
    try:
        from ibfabric.plugins import PluginSet

        for reg in PluginSet.load().module_types:
            ned = reg.extra.get("ned")
            if ned:
                lib.add_source(ned, f"<plugin {reg.plugin}>")
    except Exception:  # a broken plugin is reported when a simulation loads it, not here  # noqa: BLE001
        pass
    return lib.parameter_names()
