"""Built-in workloads: collective operations as rank programs (the ``workloads`` plugin role).

A workload registered through ``ibfabric_register_workloads`` is a
function ``build(b, size, options)`` that appends one repetition of the
operation to a :class:`~ibfabric.components.hca.schedule.ScheduleBuilder`
``b``: ``b.num_ranks`` ranks, ``size`` bytes, its string ``options`` (the
names it takes in its ``option_names`` attribute).  The first operations
of a rank in a repetition require ``b.entry[rank]`` (what the rank did in
the previous repetition) and tags start at ``b.tag_base``, so that
repetitions follow each other rank by rank and never match each other's
messages.  :func:`build_schedule` runs it ``reps`` times.

Built-ins (``S`` is ``size``, ``p`` the ranks):

``allreduce-ring``
    Reduce-scatter then all-gather around the ring: ``2(p-1)`` steps, each
    rank sending ``S/p`` bytes to rank ``r+1`` per step.
``allreduce-recdoubling``
    Recursive doubling: ``log2 p`` exchanges of ``S`` bytes with rank
    ``r XOR 2^k`` (a rank beyond the largest power of two first hands its
    data to a partner and gets the result back at the end).
``allreduce-binomial``
    A binomial-tree reduce of ``S`` bytes to rank 0, then a binomial
    broadcast back.
``alltoall-pairwise``
    ``p-1`` steps: in step k rank r sends ``S`` bytes to ``r+k`` and receives
    from ``r-k``.
``alltoall-linear``
    Every rank posts all its ``p-1`` sends of ``S`` bytes (to ``r+1, r+2,
    ...``) and receives at once.
``bcast-binomial``
    A binomial-tree broadcast of ``S`` bytes from ``root`` (default 0).
``bcast-multicast``
    The broadcast as one message of ``S`` bytes from ``root`` to the IB
    multicast group ``group`` (default ``bcast``; the subnet manager's
    ``multicastGroups`` declares it, with the root's host as a sender and the
    other ranks' hosts as members), copied by the switches' replication
    engine (or by the root's HCA with ``replicated-unicast``).  As GOAL it
    is the p-1 sends it stands for.
``allgather-ring``
    ``p-1`` steps around the ring of ``S/p`` bytes each (``S`` is the result).
``halo``
    A halo exchange on a logical grid (``dims``, e.g. ``4x4`` or ``2x2x2``;
    default the most square 2-D grid of p ranks; ``periodic``, default
    true): every rank sends ``S`` bytes to each neighbour and receives from
    each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from ibfabric.components.hca.schedule import Schedule, ScheduleBuilder, ScheduleError
from ibfabric.errors import ConfigError, did_you_mean

from .manager import hookimpl

__all__ = ["BUILTINS", "build_schedule", "parse_workload_spec", "schedule_from_spec"]

#: tags a repetition may use: repetition k uses k x TAGS_PER_REP ...
TAGS_PER_REP = 1 << 20


def _chunks(size: int, p: int) -> list[int]:
    q, rem = divmod(size, p)
    return [q + (1 if k < rem else 0) for k in range(p)]


def allreduce_ring(b: ScheduleBuilder, size: int, options: Mapping[str, str]) -> None:
    """Ring all-reduce: reduce-scatter then all-gather, ``2(p-1)`` steps of ``S/p`` bytes."""
    p = b.num_ranks
    chunk = _chunks(size, p)
    prev = [list(b.entry[r]) for r in range(p)]
    for step in range(2 * (p - 1)):
        for r in range(p):
            c_out = (r - step) % p
            c_in = (r - step - 1) % p
            s = b.send(r, (r + 1) % p, chunk[c_out], b.tag_base + step, requires=prev[r])
            v = b.recv(r, (r - 1) % p, chunk[c_in], b.tag_base + step, requires=prev[r])
            prev[r] = [s, v]


allreduce_ring.option_names = ()


def allreduce_recdoubling(b: ScheduleBuilder, size: int, options: Mapping[str, str]) -> None:
    """Recursive-doubling all-reduce (non-powers of two fold the extra ranks in first)."""
    p = b.num_ranks
    p2 = 1 << (p.bit_length() - 1)
    prev = [list(b.entry[r]) for r in range(p)]
    tag = b.tag_base
    for r in range(p2, p):  # the extra ranks hand their data to a partner below p2
        prev[r] = [b.send(r, r - p2, size, tag, requires=prev[r])]
        prev[r - p2] = prev[r - p2] + [b.recv(r - p2, r, size, tag, requires=prev[r - p2])]
    k = 0
    while (1 << k) < p2:
        tag += 1
        for r in range(p2):
            peer = r ^ (1 << k)
            s = b.send(r, peer, size, tag, requires=prev[r])
            v = b.recv(r, peer, size, tag, requires=prev[r])
            prev[r] = [s, v]
        k += 1
    tag += 1
    for r in range(p2, p):  # and get the result back
        b.send(r - p2, r, size, tag, requires=prev[r - p2])
        b.recv(r, r - p2, size, tag, requires=prev[r])


allreduce_recdoubling.option_names = ()


def _binomial_reduce(b: ScheduleBuilder, size: int, root: int, prev: list[list[int]], tag: int) -> None:
    p = b.num_ranks
    for vr in range(p):
        r = (vr + root) % p
        mask = 1
        while mask < p:
            if vr & mask:
                prev[r] = [b.send(r, (vr - mask + root) % p, size, tag, requires=prev[r])]
                break
            if vr + mask < p:
                prev[r] = prev[r] + [b.recv(r, (vr + mask + root) % p, size, tag, requires=prev[r])]
            mask <<= 1


def _binomial_bcast(b: ScheduleBuilder, size: int, root: int, prev: list[list[int]], tag: int) -> None:
    p = b.num_ranks
    for vr in range(p):
        r = (vr + root) % p
        mask = 1
        while mask < p:
            if vr & mask:
                prev[r] = [b.recv(r, (vr - mask + root) % p, size, tag, requires=prev[r])]
                break
            mask <<= 1
        mask >>= 1
        after = list(prev[r])
        while mask > 0:
            if vr + mask < p:
                b.send(r, (vr + mask + root) % p, size, tag, requires=after)
            mask >>= 1


def allreduce_binomial(b: ScheduleBuilder, size: int, options: Mapping[str, str]) -> None:
    """Binomial-tree reduce of ``S`` bytes to rank 0, then a binomial broadcast."""
    prev = [list(b.entry[r]) for r in range(b.num_ranks)]
    _binomial_reduce(b, size, 0, prev, b.tag_base)
    _binomial_bcast(b, size, 0, prev, b.tag_base + 1)


allreduce_binomial.option_names = ()


def bcast_binomial(b: ScheduleBuilder, size: int, options: Mapping[str, str]) -> None:
    """Binomial-tree broadcast of ``S`` bytes from ``root``."""
    root = _int_option(options, "root", 0, b.num_ranks - 1, 0)
    prev = [list(b.entry[r]) for r in range(b.num_ranks)]
    _binomial_bcast(b, size, root, prev, b.tag_base)


bcast_binomial.option_names = ("root",)


def bcast_multicast(b: ScheduleBuilder, size: int, options: Mapping[str, str]) -> None:
    """Broadcast of ``S`` bytes from ``root`` as one IB multicast message to group ``group``."""
    root = _int_option(options, "root", 0, b.num_ranks - 1, 0)
    group = options.get("group", "bcast")
    for r in range(b.num_ranks):
        if r != root:
            b.send(root, r, size, b.tag_base, requires=b.entry[root], group=group)
            b.recv(r, root, size, b.tag_base, requires=b.entry[r])


bcast_multicast.option_names = ("root", "group")


def alltoall_pairwise(b: ScheduleBuilder, size: int, options: Mapping[str, str]) -> None:
    """Pairwise all-to-all: step k sends to ``r+k`` and receives from ``r-k``."""
    p = b.num_ranks
    prev = [list(b.entry[r]) for r in range(p)]
    for k in range(1, p):
        for r in range(p):
            s = b.send(r, (r + k) % p, size, b.tag_base + k, requires=prev[r])
            v = b.recv(r, (r - k) % p, size, b.tag_base + k, requires=prev[r])
            prev[r] = [s, v]


alltoall_pairwise.option_names = ()


def alltoall_linear(b: ScheduleBuilder, size: int, options: Mapping[str, str]) -> None:
    """Linear all-to-all: every send and receive posted at once."""
    p = b.num_ranks
    for r in range(p):
        entry = list(b.entry[r])
        for k in range(1, p):
            b.send(r, (r + k) % p, size, b.tag_base, requires=entry)
        for k in range(1, p):
            b.recv(r, (r - k) % p, size, b.tag_base, requires=entry)


alltoall_linear.option_names = ()


def allgather_ring(b: ScheduleBuilder, size: int, options: Mapping[str, str]) -> None:
    """Ring all-gather: ``p-1`` steps of ``S/p`` bytes."""
    p = b.num_ranks
    chunk = _chunks(size, p)
    prev = [list(b.entry[r]) for r in range(p)]
    for step in range(p - 1):
        for r in range(p):
            s = b.send(r, (r + 1) % p, chunk[(r - step) % p], b.tag_base + step, requires=prev[r])
            v = b.recv(r, (r - 1) % p, chunk[(r - step - 1) % p], b.tag_base + step, requires=prev[r])
            prev[r] = [s, v]


allgather_ring.option_names = ()


def grid_dims(p: int, text: str | None) -> tuple[int, ...]:
    """The grid of ``dims`` (``'4x4'``), or the most square 2-D grid of *p* ranks."""
    if text:
        try:
            dims = tuple(int(x) for x in text.lower().split("x"))
        except ValueError:
            raise ConfigError(f"workload option dims={text!r}: expected sizes like '4x4' or '2x2x2'") from None
        if not dims or any(d < 1 for d in dims) or math.prod(dims) != p:
            raise ConfigError(f"workload option dims={text!r}: the grid must hold the {p} ranks exactly")
        return dims
    a = int(math.isqrt(p))
    while p % a:
        a -= 1
    return (p // a, a)


def halo(b: ScheduleBuilder, size: int, options: Mapping[str, str]) -> None:
    """Halo exchange on a logical grid: ``S`` bytes to and from every neighbour."""
    p = b.num_ranks
    dims = grid_dims(p, options.get("dims"))
    periodic = _bool_option(options, "periodic", True)
    strides = [math.prod(dims[k + 1:]) for k in range(len(dims))]
    for r in range(p):
        coords = [(r // strides[k]) % dims[k] for k in range(len(dims))]
        entry = list(b.entry[r])
        for k, d in enumerate(dims):
            for way, sign in ((0, 1), (1, -1)):
                c = coords[k] + sign
                if not 0 <= c < d:
                    if not periodic:
                        continue
                    c %= d
                if c == coords[k]:
                    continue
                peer = r + (c - coords[k]) * strides[k]
                # the message towards +k carries tag 2k, the one towards -k tag 2k+1: a neighbour that
                # is both (a dimension of 2) gets two messages it tells apart
                b.send(r, peer, size, b.tag_base + 2 * k + way, requires=entry)
                b.recv(r, peer, size, b.tag_base + 2 * k + (1 - way), requires=entry)


halo.option_names = ("dims", "periodic")


def _int_option(options: Mapping[str, str], name: str, lo: int, hi: int, default: int) -> int:
    text = options.get(name)
    if text is None:
        return default
    try:
        v = int(text)
    except ValueError:
        v = None
    if v is None or not lo <= v <= hi:
        raise ConfigError(f"workload option {name}={text!r}: expected an integer {lo}..{hi}")
    return v


def _bool_option(options: Mapping[str, str], name: str, default: bool) -> bool:
    text = options.get(name)
    if text is None:
        return default
    if text.lower() in ("true", "yes", "1"):
        return True
    if text.lower() in ("false", "no", "0"):
        return False
    raise ConfigError(f"workload option {name}={text!r}: expected true or false")


#: name -> (build function, description)
BUILTINS: dict[str, tuple[Callable, str]] = {
    "allreduce-ring": (allreduce_ring, "all-reduce: reduce-scatter + all-gather on a ring, 2(p-1) steps of S/p"),
    "allreduce-recdoubling": (allreduce_recdoubling, "all-reduce: recursive doubling, log2(p) exchanges of S"),
    "allreduce-binomial": (allreduce_binomial, "all-reduce: binomial reduce to rank 0, then binomial broadcast"),
    "alltoall-pairwise": (alltoall_pairwise, "all-to-all: p-1 steps, rank r sends S to r+k in step k"),
    "alltoall-linear": (alltoall_linear, "all-to-all: every send and receive posted at once"),
    "bcast-binomial": (bcast_binomial, "broadcast of S from 'root' (default 0) down a binomial tree"),
    "bcast-multicast": (bcast_multicast, "broadcast of S from 'root' as one message to IB multicast group 'group'"),
    "allgather-ring": (allgather_ring, "all-gather: p-1 steps of S/p around the ring"),
    "halo": (halo, "halo exchange of S with each neighbour on a logical grid ('dims', 'periodic')"),
}


@hookimpl
def ibfabric_register_workloads(register):
    for name, (fn, description) in BUILTINS.items():
        register(name, fn, description=description)


def build_schedule(name: str, build: Callable, ranks: int, size: int, reps: int = 1,
                   options: Mapping[str, str] | None = None) -> Schedule:
    """The schedule of *reps* repetitions of workload *build* on *ranks* ranks with *size* bytes.

    Raises
    ------
    ConfigError
        For an option the workload does not take (``option_names``), a bad value, or fewer than 2 ranks.
    """
    options = dict(options or {})
    names = tuple(getattr(build, "option_names", ()))
    for key in options:
        if key not in names:
            valid = ", ".join(names) or "none"
            raise ConfigError(f"workload '{name}' has no option '{key}'{did_you_mean(key, names)} (valid: {valid})")
    if ranks < 2:
        raise ConfigError(f"workload '{name}' needs at least 2 ranks (got {ranks})")
    if size < 0 or reps < 1:
        raise ConfigError(f"workload '{name}': size must be >= 0 and reps >= 1 (got {size}, {reps})")
    b = ScheduleBuilder(ranks, name)
    for rep in range(reps):
        b.phase = rep
        b.tag_base = rep * TAGS_PER_REP
        b.entry = [[i for i, op in enumerate(b.progs[r]) if op.phase == rep - 1] for r in range(ranks)]
        build(b, size, options)
    try:
        return b.build()
    except ScheduleError as exc:
        raise ConfigError(f"workload '{name}' built a schedule that cannot run: {exc}") from None


def parse_workload_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``'allreduce-ring:size=1MiB,reps=3'`` -> ``('allreduce-ring', {'size': '1MiB', 'reps': '3'})``."""
    name, _, rest = spec.partition(":")
    opts: dict[str, str] = {}
    for item in rest.replace(",", " ").split():
        k, sep, v = item.partition("=")
        if not sep or not k or not v:
            raise ConfigError(f"workload '{spec}': expected NAME:key=value,... (got {item!r})")
        opts[k] = v
    return name.strip(), opts


#: what ``size`` is when a workload spec does not say
DEFAULT_SIZE = "64KiB"


def schedule_from_spec(plugins, spec: str, num_hosts: int) -> Schedule:
    """The schedule of a ``--workload`` value: a GOAL file (``*.goal``, or any existing file), or
    ``NAME[:size=S,reps=N,ranks=P,OPTION=VALUE...]`` of a registered workload (``size`` a byte
    quantity, default :data:`DEFAULT_SIZE`; ``reps`` default 1; ``ranks`` default every host).

    Raises
    ------
    ConfigError
        For an unknown workload (listing the valid ones), a bad option or a schedule that cannot run.
    """
    from pathlib import Path

    from ibfabric.components.hca.goal import read_goal
    from ibfabric.units import UnitError, parse_quantity

    if spec.endswith(".goal") or Path(spec).is_file():
        return read_goal(spec)
    name, opts = parse_workload_spec(spec)
    reg = plugins.workloads.get(name)
    size_text = opts.pop("size", DEFAULT_SIZE)
    try:
        size = parse_quantity(size_text, "B")[0]
    except UnitError as exc:
        raise ConfigError(f"workload '{name}': size={size_text}: {exc}") from None
    if size != int(size) or size < 0:
        raise ConfigError(f"workload '{name}': size={size_text} must be a whole number of bytes >= 0")
    reps = _int_option(opts, "reps", 1, 1 << 20, 1)
    ranks = _int_option(opts, "ranks", 2, 1 << 20, num_hosts)
    opts.pop("reps", None)
    opts.pop("ranks", None)
    return build_schedule(name, reg.obj, ranks, int(size), reps, opts)
