"""Traffic patterns: the destinations of generated traffic.

Endpoints are numbered ``0 .. N-1`` in the order the HCAs appear in the
network (module pre-order), using each HCA's first connected port.
Built-ins (registered through the ``traffic`` entry point):

``uniform``
    Every other endpoint with equal probability.
``bit-reversal``, ``transpose``, ``shuffle``
    Permutations on the ``b = ceil(log2 N)`` bits of the source index:
    reversing them, rotating them by ``floor(b/2)`` (the matrix transpose
    when ``b`` is even) and rotating them left by one (the perfect shuffle).
    A source whose image is itself or is ``>= N`` (possible when ``N`` is not
    a power of two) sends nothing.  Option ``numbering`` says which host
    number the bits are those of: ``consecutive`` (the default: the endpoint
    index), ``interleaved`` (with option ``blocks`` = B: the endpoints form B
    equal blocks of consecutive indices, e.g. the switches of a generated
    fabric, and host numbers are dealt round-robin over the blocks: number p
    is endpoint ``(p mod B) * N/B + p div B``) or ``random`` (a permutation
    of the endpoints drawn from the run's seed).
``hot-spot``
    A fraction of the traffic (option ``fraction``, default 0.1) goes to one
    endpoint (option ``node``, a host's name, or ``hotspot``, its index;
    default drawn from the run's seed), the rest is uniform (Martínez et al.
    2003 §5.1 use 5, 10 and 20 %).  With option ``contributors`` (a count,
    or host names separated by commas), the congestion-control experiments'
    form (Gran et al. 2010): that many endpoints, drawn from the run's seed
    (or those named), are *contributors* and send to the
    hot spot (all their traffic, or ``fraction`` of it if given, the rest as
    victims do); every other endpoint is a *victim* and sends uniformly to
    the endpoints other than the hot spot.

A pattern registered with ``host_names=True`` also receives the names of
the endpoints (module paths, in endpoint order) as the keyword argument
``host_names``, to let options name hosts (:func:`host_index`).

Arrival processes (Poisson or constant rate) and loads are properties of the
sources, not of the pattern: see the HCA's ``arrival`` and ``load``.  A
pattern whose :meth:`~TrafficPattern.active` leaves sources idle lowers the
offered load below the configured one: the simulation warns, giving the
pattern's :attr:`~TrafficPattern.idle_reason` (:mod:`ibfabric.checks`).

A third-party pattern is wrapped in a :class:`CheckedPattern`: an exception
in its methods, or a destination that is not an endpoint index, is a
:class:`PluginError` naming it.
"""

from __future__ import annotations

import numpy as np

from ibfabric.errors import ConfigError, IbfabricError, PluginError, did_you_mean
from ibfabric.plugins.manager import hookimpl
from ibfabric.plugins.registry import one_line

__all__ = [
    "TrafficPattern",
    "Uniform",
    "BitReversal",
    "Transpose",
    "Shuffle",
    "HotSpot",
    "CheckedPattern",
    "checked",
    "host_index",
]


class TrafficPattern:
    """Base class.  Subclasses implement :meth:`destinations`.

    Parameters
    ----------
    num_hosts : int
        Number of traffic endpoints.
    options : dict of str
        Pattern options; unknown keys raise ConfigError.
    rng : numpy.random.Generator
        The pattern's own generator (for choices shared by all sources).
    """

    name = "pattern"
    option_names: tuple[str, ...] = ()
    #: Why :meth:`active` is False for some sources (the warning about the lower offered load says it).
    idle_reason = "the pattern gives them no destination"

    def __init__(self, num_hosts: int, options: dict[str, str] | None = None, rng: np.random.Generator | None = None):
        if num_hosts < 2:
            raise ConfigError(f"traffic pattern '{self.name}' needs at least 2 endpoints (got {num_hosts})")
        options = dict(options or {})
        bad = sorted(set(options) - set(self.option_names))
        if bad:
            valid = ", ".join(self.option_names) or "none"
            raise ConfigError(f"traffic pattern '{self.name}' has no option '{bad[0]}'"
                              f"{did_you_mean(bad[0], self.option_names)} (valid: {valid})")
        self.num_hosts = num_hosts
        self.options = options
        self.rng = rng if rng is not None else np.random.default_rng(0)

    def active(self, src: int) -> bool:
        """Whether endpoint *src* sends at all."""
        return True

    def destinations(self, src: int, rng: np.random.Generator, n: int) -> np.ndarray:
        """*n* destination indices for messages from *src* (-1: send nothing)."""
        raise NotImplementedError


class Uniform(TrafficPattern):
    """Uniformly random destinations, never the source itself."""

    name = "uniform"

    def destinations(self, src: int, rng: np.random.Generator, n: int) -> np.ndarray:
        d = rng.integers(0, self.num_hosts - 1, n)
        d[d >= src] += 1
        return d


class Permutation(TrafficPattern):
    """A fixed destination per source, from a permutation of the bits of its host number.

    Host numbers are the endpoint indices (``numbering=consecutive``, the
    default), or dealt round-robin over ``blocks`` equal blocks of
    consecutive endpoints (``numbering=interleaved``), or a random
    permutation of them drawn from the pattern's generator
    (``numbering=random``).  Endpoint indices follow the network's module
    order, so on the generated fabrics (hosts ``H*s .. H*s+H-1`` on switch
    ``s``) ``consecutive`` puts consecutive numbers on the same switch and
    ``interleaved`` with ``blocks`` = the number of switches on consecutive
    switches.

    Examples
    --------
    Eight hosts on two switches (endpoints 0-3 on the first, 4-7 on the
    second); interleaved, host number p is endpoint ``(p % 2) * 4 + p // 2``:

    >>> BitReversal(8, {"numbering": "interleaved", "blocks": "2"}).number.tolist()
    [0, 2, 4, 6, 1, 3, 5, 7]
    """

    option_names = ("blocks", "numbering")
    numberings = ("consecutive", "interleaved", "random")
    idle_reason = "their image is themselves, or no endpoint when the number of endpoints is not a power of two"

    def __init__(self, num_hosts, options=None, rng=None):
        super().__init__(num_hosts, options, rng)
        self.bits = max(1, int(np.ceil(np.log2(num_hosts))))
        #: the host number of each endpoint (the permutation acts on these)
        self.number = self._numbering(num_hosts)
        endpoint = np.empty(num_hosts, dtype=np.int64)
        endpoint[self.number] = np.arange(num_hosts)
        image = np.array([self.image(int(p)) for p in self.number], dtype=np.int64)
        self.target = np.full(num_hosts, -1, dtype=np.int64)
        ok = (image < num_hosts) & (image != self.number)
        self.target[ok] = endpoint[image[ok]]

    def _numbering(self, n: int) -> np.ndarray:
        numbering = self.options.get("numbering", "consecutive")
        if numbering not in self.numberings:
            raise ConfigError(f"traffic pattern '{self.name}': 'numbering' must be one of"
                              f" {', '.join(self.numberings)} (got {numbering!r}){did_you_mean(numbering, self.numberings)}")
        if ("blocks" in self.options) != (numbering == "interleaved"):
            raise ConfigError(f"traffic pattern '{self.name}': 'blocks' goes with numbering=interleaved, and only with it")
        if numbering == "consecutive":
            return np.arange(n, dtype=np.int64)
        if numbering == "random":
            return self.rng.permutation(n).astype(np.int64)
        try:
            blocks = int(self.options["blocks"])
        except ValueError:
            raise ConfigError(f"traffic pattern '{self.name}': 'blocks' must be an integer"
                              f" (got {self.options['blocks']!r})") from None
        if blocks < 1 or n % blocks:
            raise ConfigError(f"traffic pattern '{self.name}': 'blocks' must divide the {n} endpoints (got {blocks})")
        per = n // blocks
        e = np.arange(n, dtype=np.int64)
        return (e % per) * blocks + e // per  # endpoint per*s + j (block s, slot j) is number j*blocks + s

    def image(self, src: int) -> int:
        """The image of source index *src* under the permutation of its ``bits`` index bits.

        A source whose image is itself or not an endpoint (when the number of
        endpoints is not a power of two) sends nothing.
        """
        raise NotImplementedError

    def active(self, src: int) -> bool:
        return bool(self.target[src] >= 0)

    def destinations(self, src: int, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(n, self.target[src], dtype=np.int64)


class BitReversal(Permutation):
    """Destination = source index with its bits reversed."""

    name = "bit-reversal"

    def image(self, src: int) -> int:
        """*src* with its ``bits`` index bits in reverse order."""
        b = self.bits
        return int(format(src, f"0{b}b")[::-1], 2)


class Transpose(Permutation):
    """Destination = source bits rotated by half their number (matrix transpose)."""

    name = "transpose"

    def image(self, src: int) -> int:
        """*src* with its ``bits`` index bits rotated left by ``bits // 2``."""
        b = self.bits
        k = b // 2
        mask = (1 << b) - 1
        return ((src << k) | (src >> (b - k))) & mask if k else src


class Shuffle(Permutation):
    """Destination = source bits rotated left by one (perfect shuffle)."""

    name = "shuffle"

    def image(self, src: int) -> int:
        """*src* with its ``bits`` index bits rotated left by one."""
        b = self.bits
        mask = (1 << b) - 1
        return ((src << 1) | (src >> (b - 1))) & mask


def host_index(name: str, host_names, what: str) -> int:
    """The endpoint index of the host *name* among *host_names* (module paths, in endpoint order).

    A host is named by its module path, its path without the network's name
    (``h4``, ``pod1.h4``) or, when no other host's path ends the same way, its
    last part.

    Raises
    ------
    ConfigError
        ``<what>: no host named 'h44'; did you mean 'h4'?...``, or a name that
        fits several hosts, or no host names given.

    Examples
    --------
    >>> host_index("h1", ["net.h0", "net.h1"], "hot-spot 'node'")
    1
    >>> host_index("alpah", ["net.alpha", "net.beta"], "hot-spot 'node'")
    Traceback (most recent call last):
    ...
    ibfabric.errors.ConfigError: hot-spot 'node': no host named 'alpah'; did you mean 'alpha'?; hosts are the channel adapters with a connected port: alpha, beta
    """
    from ibfabric.errors import did_you_mean

    if host_names is None:
        raise ConfigError(f"{what} names a host, but the pattern was built without the host names: give the"
                          " endpoint's index instead")
    names = list(host_names)
    short = [n.partition(".")[2] or n for n in names]
    hits = [i for i, (full, rel) in enumerate(zip(names, short)) if name in (full, rel)]
    if not hits:
        hits = [i for i, full in enumerate(names) if full.endswith("." + name)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        shown = ", ".join(short[i] for i in hits[:3])
        raise ConfigError(f"{what}: '{name}' names {len(hits)} hosts ({shown}{', ...' if len(hits) > 3 else ''});"
                          " give its path")
    hint = did_you_mean(name, short)
    listed = ", ".join(short[:5]) + (f", ... ({len(short)} hosts)" if len(short) > 5 else "")
    raise ConfigError(f"{what}: no host named '{name}'{hint}; hosts are the channel adapters with a connected port:"
                      f" {listed}")


class HotSpot(TrafficPattern):
    """A fraction of all traffic to one hot endpoint, the rest uniform (or contributors and victims)."""

    name = "hot-spot"
    option_names = ("contributors", "fraction", "hotspot", "node", "victimTo", "victims")
    idle_reason = "with 'victims' or 'victimTo' given, they are neither contributors nor victims"

    def __init__(self, num_hosts, options=None, rng=None, host_names=None):
        super().__init__(num_hosts, options, rng)
        contributors = "contributors" in self.options
        try:
            self.fraction = float(self.options.get("fraction", "1" if contributors else "0.1"))
        except ValueError:
            raise ConfigError(f"hot-spot 'fraction' must be a number (got {self.options['fraction']!r})") from None
        if not 0 <= self.fraction <= 1:
            raise ConfigError(f"hot-spot 'fraction' must be in 0..1 (got {self.fraction})")
        if "node" in self.options:
            if "hotspot" in self.options:
                raise ConfigError("hot-spot takes 'node' (a host's name) or 'hotspot' (its index), not both")
            self.hotspot = host_index(self.options["node"], host_names, "hot-spot 'node'")
        elif "hotspot" in self.options:
            try:
                self.hotspot = int(self.options["hotspot"])
            except ValueError:
                raise ConfigError(f"hot-spot 'hotspot' must be an endpoint index (got {self.options['hotspot']!r})") from None
            if not 0 <= self.hotspot < num_hosts:
                raise ConfigError(f"hot-spot 'hotspot' must be in 0..{num_hosts - 1} (got {self.hotspot})")
        else:
            self.hotspot = int(self.rng.integers(num_hosts))
        #: the contributors' endpoint indices (sorted), or None: every endpoint sends ``fraction`` to the hot spot
        self.contributors: frozenset[int] | None = None
        if contributors:
            text = self.options["contributors"].strip()
            if text.isdigit():
                k = int(text)
                if not 1 <= k <= num_hosts - 1:
                    raise ConfigError(f"hot-spot 'contributors' must be 1..{num_hosts - 1}, the endpoints other"
                                      f" than the hot spot (got {k})")
                others = np.array([h for h in range(num_hosts) if h != self.hotspot])
                self.contributors = frozenset(int(h) for h in self.rng.choice(others, k, replace=False))
            else:
                chosen = [host_index(n.strip(), host_names, "hot-spot 'contributors'") for n in text.split(",")
                          if n.strip()]
                if self.hotspot in chosen:
                    raise ConfigError("hot-spot 'contributors' names the hot spot itself")
                self.contributors = frozenset(chosen)
        #: the victims that send (None: every endpoint that is not a contributor) and where they send
        #: (-1: uniformly to the endpoints other than the hot spot)
        self.victims: frozenset[int] | None = None
        self.victim_to = -1
        for key in ("victims", "victimTo"):
            if key in self.options and self.contributors is None:
                raise ConfigError(f"hot-spot '{key}' needs 'contributors'")
        if "victims" in self.options:
            self.victims = frozenset(host_index(n.strip(), host_names, "hot-spot 'victims'")
                                     for n in self.options["victims"].split(",") if n.strip())
            both = self.victims & self.contributors
            if both or self.hotspot in self.victims:
                raise ConfigError("hot-spot 'victims' must name endpoints that are neither contributors nor the"
                                  " hot spot")
        if "victimTo" in self.options:
            self.victim_to = host_index(self.options["victimTo"], host_names, "hot-spot 'victimTo'")
            if self.victim_to == self.hotspot:
                raise ConfigError("hot-spot 'victimTo' is the hot spot itself")
            if num_hosts < 3:
                raise ConfigError("hot-spot with 'contributors' needs at least 3 endpoints (victims send to"
                                  " endpoints other than the hot spot)")

    def active(self, src: int) -> bool:
        if self.contributors is None or src in self.contributors:
            return True
        if self.victims is not None and src not in self.victims:
            return False
        return src != self.victim_to

    def role(self, src: int) -> str:
        """``"contributor"`` or ``"victim"`` (with ``contributors``); ``"source"`` otherwise."""
        if self.contributors is None:
            return "source"
        return "contributor" if src in self.contributors else "victim"

    def destinations(self, src: int, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.contributors is not None:
            # victims (and a contributor's other traffic): uniform over the endpoints but src and the hot spot
            if src not in self.contributors and self.victim_to >= 0:
                return np.full(n, self.victim_to, dtype=np.int64)
            if src == self.hotspot:
                d = rng.integers(0, self.num_hosts - 1, n)
                d[d >= src] += 1
                return d
            d = rng.integers(0, self.num_hosts - 2, n)
            lo, hi = sorted((src, self.hotspot))
            d[d >= lo] += 1
            d[d >= hi] += 1
            if src in self.contributors:
                if self.fraction >= 1:
                    d[:] = self.hotspot
                else:
                    d[rng.random(n) < self.fraction] = self.hotspot
            return d
        d = rng.integers(0, self.num_hosts - 1, n)
        d[d >= src] += 1
        if src != self.hotspot:
            d[rng.random(n) < self.fraction] = self.hotspot
        return d


class CheckedPattern:
    """A third-party traffic pattern whose answers are checked (once per batch of draws).

    Other attributes are the wrapped pattern's.
    """

    def __init__(self, pattern, reg, num_hosts: int):
        self.pattern = pattern
        self.num_hosts = num_hosts
        self.what = f"traffic pattern '{reg.name}' (plugin '{reg.plugin}')"

    def __getattr__(self, name: str):
        return getattr(self.__dict__["pattern"], name)

    def _call(self, method: str, *args):
        try:
            return getattr(self.pattern, method)(*args)
        except IbfabricError:
            raise
        except Exception as exc:
            raise PluginError(f"{self.what} raised {type(exc).__name__} in {method}(): {one_line(exc)}") from exc

    def active(self, src: int) -> bool:
        """The wrapped pattern's :meth:`~TrafficPattern.active` (True if it has none)."""
        return bool(self._call("active", src)) if hasattr(self.pattern, "active") else True

    def destinations(self, src: int, rng: np.random.Generator, n: int) -> np.ndarray:
        """The wrapped pattern's :meth:`~TrafficPattern.destinations`, checked.

        Raises
        ------
        PluginError
            If the pattern raises (other than an :class:`~ibfabric.IbfabricError`),
            or returns anything but *n* integer endpoint indices (-1: send nothing).
        """
        d = np.asarray(self._call("destinations", src, rng, n))
        if d.shape != (n,) or d.dtype.kind not in "iu":
            raise PluginError(f"{self.what}: destinations() returned {d.dtype} values of shape {d.shape},"
                              f" not {n} endpoint indices")
        bad = (d < -1) | (d >= self.num_hosts)
        if bad.any():
            raise PluginError(f"{self.what}: destinations() returned {int(d[bad][0])} for source {src}, not an"
                              f" endpoint index 0..{self.num_hosts - 1} (or -1: send nothing)")
        return d


def checked(reg, pattern, num_hosts: int):
    """*pattern* as a simulation of *num_hosts* endpoints uses it: a built-in one as is, a
    third-party one in a :class:`CheckedPattern`."""
    return pattern if reg.builtin else CheckedPattern(pattern, reg, num_hosts)


@hookimpl
def ibfabric_register_traffic_patterns(register) -> None:
    for cls in (Uniform, BitReversal, Transpose, Shuffle):
        register(cls.name, cls, description=(cls.__doc__ or "").strip().splitlines()[0])
    register(HotSpot.name, HotSpot, description=(HotSpot.__doc__ or "").strip().splitlines()[0], host_names=True)
