"""The data path's event list, run beside salabim's (DESIGN §5).

Every port transmitter wakes about once per packet it sends, so its
wake-ups are most of a run's events.  As salabim components each one cost
a status update, a failure check, a generator resume and a tuple of five
on salabim's event list, about a third of the time of a packet-hop; and
each port carried a salabim component's eighty attributes, whose memory
made a large fabric's hops slower than a small one's.  Ports are plain
objects instead, and their wake-ups go on this list, a heap of
``(time, seq, port, generation)``.

:meth:`PortLoop.run` replaces salabim's ``env.run(till=...)``: it runs the
two lists as one, taking whichever head comes first.  The order is the one
salabim would have used had the ports been its components (time, then
priority, then sequence number, all data-path wake-ups having priority 0),
because the port entries draw their sequence numbers from salabim's own
counter (``env._seq``): results are the same event for event.  The rest of
the simulation (dispatcher, watchdog, subnet manager timers, run_until's
stop) stays on salabim and keeps its API.

A port re-armed while it is scheduled (a port changing state) bumps its
generation; the entry of the old wake-up is then skipped when it comes up,
where salabim would have searched its list to remove it.  An *early* wake-up
(generation -1, :meth:`~ibfabric.components.port.TxPort.wake_by`) runs the
port's step before its own wake-up, which stays where it is.

The loop runs a port's own wake-up itself (one event per packet sent: the
call of a ``wake`` method and of :meth:`PortLoop.schedule` per event were
about 2 % of a packet-hop's instructions).  What it uses of a port:

- ``gen``: the generation of its own wake-up;
- ``step(now)``, or ``run_step(now)`` (the same with audits) when
  ``check`` is true: what the port does at *now*, returning when it is due
  again (``math.inf``: when poked);
- ``own_wake`` (when its own wake-up is due, ``inf`` while it runs or
  idles), ``early_at`` (when an early wake-up is due) and ``running`` (true
  while it steps, so that pokes wait for its answer);
- ``wake_early(now)``: an early wake-up.

The loop counts the wake-ups it runs, own and early, in :attr:`PortLoop.events`
(up to date whenever salabim's side runs, and when :meth:`PortLoop.run`
returns).  A count per port was a boxed integer rewritten at every
wake-up: on a large fabric, where the port is cold, one more cache miss
per packet-hop for a figure only ever summed.

:class:`~ibfabric.components.port.TxPort` is that port.
"""

from __future__ import annotations

from heapq import heappop, heappush
from math import inf

__all__ = ["PortLoop", "EARLY"]

#: The generation of an early wake-up's entry.
EARLY = -1


def _check_salabim(env) -> None:
    """Fail with one clear line if this salabim lacks the internals the loop merges with."""
    missing = [name for name in ("_event_list", "_seq", "_main", "step", "running") if not hasattr(env, name)]
    if missing:
        import salabim

        raise RuntimeError(f"ibfabric's port event loop needs salabim's Environment.{missing[0]}, which salabim"
                           f" {salabim.__version__} does not have; install a salabim version ibfabric supports")


def _check_entry(env, main) -> None:
    """Fail with one clear line if salabim's event-list entries are not ``(time, priority, seq,
    component, value)``, the layout the merge compares (checked once per run, on main's entry)."""
    entry = next((e for e in env._event_list if len(e) > 3 and e[3] is main), None)
    if entry is None or len(entry) != 5 or entry[1] != inf or not isinstance(entry[2], int):
        import salabim

        raise RuntimeError(f"ibfabric's port event loop does not know the event list of salabim {salabim.__version__}"
                           f" (entries (time, priority, seq, component, value) expected); install a salabim"
                           f" version ibfabric supports")


class PortLoop:
    """The port transmitters' event list of one simulation, and the loop that runs it with salabim's."""

    __slots__ = ("env", "heap", "events")

    def __init__(self, env):
        _check_salabim(env)
        self.env = env
        self.heap: list[tuple] = []
        #: the port wake-ups run so far, own and early (stale wake-ups of re-armed ports not counted)
        self.events = 0

    def __len__(self) -> int:
        return len(self.heap)

    def schedule(self, t: float, port, gen: int) -> None:
        """Wake *port* at time *t*: its own wake-up of generation *gen*, or an early one (:data:`EARLY`).

        (:meth:`run` re-arms a port after its own wake-up without this call.)
        """
        env = self.env
        seq = env._seq = env._seq + 1
        heappush(self.heap, (t, seq, port, gen))

    def run(self, till: float) -> None:
        """Run the simulation until time *till*: both event lists, in salabim's order.

        As ``env.run(till=till)``: salabim's main component is scheduled at
        *till* with priority infinity, behind everything else due then, and
        the run ends when it comes up (or when something activates it
        earlier, as ``run_until`` does).
        """
        env = self.env
        main = env._main
        main.status._value = "scheduled"
        main._reschedule(till + env._offset, inf, False, "run", None)
        _check_entry(env, main)
        env.end_on_empty_eventlist = False
        env.running = True
        heap = self.heap
        el = env._event_list
        step = env.step
        pop = heappop
        push = heappush
        n = 0  # wake-ups run since self.events was last brought up to date
        try:
            while env.running:
                if heap:
                    t, seq, port, gen = heap[0]
                    if el:
                        s = el[0]
                        st = s[0]
                        if st <= t and (st < t or s[1] < 0 or (s[1] == 0 and s[2] < seq)):
                            self.events += n  # salabim's side may read the count
                            n = 0
                            step()
                            continue
                    pop(heap)
                    env._now = t
                    if gen == port.gen:
                        # the port's own wake-up: a step (of the port's class now: it may change), then
                        # due again when the step says, or idle (until poked) when that is inf or an
                        # early wake-up will look earlier
                        n += 1
                        port.own_wake = inf
                        port.running = True
                        t = port.run_step(t) if port.check else port.step(t)
                        port.running = False
                        if t != inf and port.early_at > t:
                            port.own_wake = t
                            seq = env._seq = env._seq + 1  # as schedule() does
                            push(heap, (t, seq, port, port.gen))
                    elif gen == EARLY:
                        n += 1
                        port.wake_early(t)
                    # else: the entry of a wake-up that was replaced (salabim would have removed it)
                else:
                    self.events += n
                    n = 0
                    step()
        finally:
            self.events += n
