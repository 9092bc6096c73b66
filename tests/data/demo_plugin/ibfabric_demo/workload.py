"""A workload: every rank sends ``size`` bytes to one root rank (an incast, or MPI_Gather's traffic)."""

from ibfabric import ConfigError


def incast(b, size, options):
    """Each rank but ``root`` (option, default 0) sends *size* bytes to it; the root receives them all."""
    try:
        root = int(options.get("root", "0"))
    except ValueError:
        raise ConfigError(f"workload 'incast': 'root' must be an integer (got {options['root']!r})") from None
    if not 0 <= root < b.num_ranks:
        raise ConfigError(f"workload 'incast': root {root} is not a rank (0..{b.num_ranks - 1})")
    for r in range(b.num_ranks):
        if r != root:
            b.send(r, root, size, b.tag_base, requires=b.entry[r])
            b.recv(root, r, size, b.tag_base, requires=b.entry[root])


incast.option_names = ("root",)
