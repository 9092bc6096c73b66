"""Where a workload's ranks run: the hosts of a placement (``linear``, ``random``, ``file:PATH``)."""

from __future__ import annotations

from pathlib import Path

from ibfabric.errors import ConfigError

__all__ = ["PLACEMENTS", "place"]

#: the placement options
PLACEMENTS = ("linear", "random", "file:PATH")


def place(num_ranks: int, hosts: list[str], placement: str, seed: int) -> list[int]:
    """The host index of each rank.

    Parameters
    ----------
    num_ranks : int
        The schedule's ranks.
    hosts : list of str
        The module paths of the simulation's hosts, in host-index order.
    placement : str
        ``linear`` (rank r on host r), ``random`` (a random choice of distinct
        hosts, drawn from the run's seed) or ``file:PATH``: a text file with
        one host per line for ranks 0, 1...: a host index, or a host's module
        path or its name relative to the network (several ranks may share a
        host); ``#`` starts a comment.
    seed : int
        The run's seed.

    Raises
    ------
    ConfigError
        For an unknown placement, more ranks than hosts (linear, random), or
        a file line that names no host (``file:line:col:``).
    """
    n = len(hosts)
    if placement in ("linear", "random"):
        if num_ranks > n:
            raise ConfigError(f"the workload has {num_ranks} ranks but the network only {n} hosts: place several"
                              f" ranks on a host with a placement file ('file:PATH')")
        if placement == "linear":
            return list(range(num_ranks))
        from ibfabric.kernel import module_rng

        rng = module_rng(seed, "workload:placement")
        return [int(h) for h in rng.permutation(n)[:num_ranks]]
    if placement.startswith("file:"):
        return _placement_file(num_ranks, hosts, placement[5:])
    from ibfabric.errors import did_you_mean

    raise ConfigError(f"unknown placement '{placement}'{did_you_mean(placement, ['linear', 'random'])}"
                      f" (valid: {', '.join(PLACEMENTS)})")


def _placement_file(num_ranks: int, hosts: list[str], path: str) -> list[int]:
    from ibfabric.errors import did_you_mean

    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the placement: {getattr(exc, 'strerror', None) or exc}") from None
    by_name: dict[str, int] = {}
    for i, h in enumerate(hosts):
        by_name[h] = i
        by_name.setdefault(h.split(".", 1)[-1], i)
    out = []
    for no, line in enumerate(lines, 1):
        text = line.split("#", 1)[0]
        word = text.strip()
        if not word:
            continue
        col = text.index(word) + 1
        if word.isdigit():
            h = int(word)
            if h >= len(hosts):
                raise ConfigError(f"{path}:{no}:{col}: host {h} does not exist (the network has hosts"
                                  f" 0..{len(hosts) - 1})")
        elif word in by_name:
            h = by_name[word]
        else:
            raise ConfigError(f"{path}:{no}:{col}: '{word}' is not a host{did_you_mean(word, by_name)}")
        out.append(h)
    if len(out) < num_ranks:
        raise ConfigError(f"{path}: places {len(out)} ranks but the workload has {num_ranks}")
    return out[:num_ranks]
