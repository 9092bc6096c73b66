"""The simulation's event lists: port wake-ups, scheduled calls and salabim's (DESIGN §3a).

Every port transmitter wakes about once per packet it sends, so its
wake-ups are most of a run's events.  As salabim components each one would
cost a status update, a generator resume and an entry of five on salabim's
event list, and each port would carry a component's eighty attributes.
Ports are plain objects instead, and their wake-ups go on this loop's heap
of ``(time, seq, port, generation)``.  Beside it, the loop keeps the
simulation's scheduled calls (:meth:`PortLoop.call_at`: messages between
modules, scripted events, the subnet manager's timers).  The calls are run
in batches, as by a dispatcher with a wake-up of its own: at its turn it
runs every call due by then (those added meanwhile at that time too), and
its turn is an entry ``(time of the first call, seq)`` drawn from the same
counter as the ports' when it is armed (after a batch, or when a call
earlier than its turn is added), so that wake-ups and calls due at the
same time run in the order they were armed.

:meth:`PortLoop.run` runs the simulation: it takes the earliest of the
three heads -- a wake-up, the calls' turn, or salabim's next event
(``env.peek()``, run by ``env.step()``).  Where salabim's is due at the
same time as the others it goes first.  The run ends once nothing is due
by its end time (or sooner, :meth:`PortLoop.stop`).  A component of this
module, due at the end behind everything else due then
(``priority=inf``), brings salabim's clock to the end time and then sits
just after it, so that ``env.peek()`` never looks past the end nor at an
empty list.  Nothing of salabim's is used but its public API, and
``env.run()`` is never called.

Time.  :attr:`PortLoop.now` is the simulation's clock: the time of the
wake-up, call or salabim event being run.  salabim's own clock
(``env.now()``) is right inside salabim's events, which is all that
salabim code ever sees; during a wake-up or a call it may lag behind.  Code
that schedules salabim activity from there must therefore give absolute
times (``activate(at=t)``) and tell the loop with
:meth:`PortLoop.salabim_at`, because the loop reads salabim's head again
only after a salabim event (``env.peek()`` costs about a tenth of a
wake-up); ibfabric's own code schedules calls instead.  In check mode
(``Simulation(check=True)``) every wake-up checks that salabim's head is
not earlier than the loop knows.

A port re-armed while it is scheduled (it changed state) bumps its
generation; the entry of the old wake-up is then skipped when it comes up.
An *early* wake-up (generation -1, :meth:`~ibfabric.components.port.TxPort.wake_by`)
runs the port's step before its own wake-up, which stays where it is.

What the loop uses of a port:

- ``gen``: the generation of its own wake-up;
- ``step(now)``, or ``run_step(now)`` (the same with audits) when
  ``check`` is true: what the port does at *now*, returning when it is due
  again (``math.inf``: when poked);
- ``own_wake`` (when its own wake-up is due, ``inf`` while it runs or
  idles), ``early_at`` (when an early wake-up is due) and ``running`` (true
  while it steps, so that pokes wait for its answer);
- ``wake_early(now)``: an early wake-up.

The loop counts the wake-ups it runs, own and early, in :attr:`PortLoop.events`,
and the calls in :attr:`PortLoop.calls_run`.
"""

from __future__ import annotations

from heapq import heappop, heappush
from math import inf, nextafter

import salabim

from ibfabric.kernel import EventHandle

__all__ = ["PortLoop", "EARLY"]

#: The generation of an early wake-up's entry.
EARLY = -1


class _Horizon(salabim.Component):
    """The end of the current run on salabim's list: activated at the end time behind everything else
    due then (``priority=inf``), it brings salabim's clock to the end when it comes up, then sits just
    after it, so that salabim's head is never past the end and its list is never empty."""

    def __init__(self, loop: "PortLoop"):
        super().__init__(env=loop.env, name="ibfabric.horizon", process="wait")

    def wait(self):
        while True:  # (made scheduled, as every component: the first run's activate() moves it)
            yield self.hold(till=nextafter(self.env.now(), inf))


class PortLoop:
    """The port wake-ups and scheduled calls of one simulation, and the loop that runs them with salabim's."""

    __slots__ = ("env", "heap", "calls", "events", "calls_run", "now", "seq", "limit", "sal", "till", "horizon",
                 "check", "turn", "turn_seq", "batching")

    def __init__(self, env, check: bool = False):
        self.env = env
        self.heap: list[tuple] = []
        #: the scheduled calls, a heap of EventHandle
        self.calls: list[EventHandle] = []
        #: the port wake-ups run so far, own and early (stale wake-ups of re-armed ports not counted)
        self.events = 0
        #: the scheduled calls run so far
        self.calls_run = 0
        #: the simulation's clock (ns)
        self.now = env.now()
        self.seq = 0
        #: while a run goes on: nothing but port wake-ups is due before this time (the earlier of :attr:`sal`
        #: and the calls' turn)
        self.limit = inf
        #: while a run goes on: when salabim's next event is due
        self.sal = inf
        #: the end of the current run
        self.till = -inf
        self.check = check
        self.horizon = _Horizon(self)
        #: the calls' turn: when and with which sequence number (see the module docstring)
        self.turn = inf
        self.turn_seq = 0
        #: true while a batch of calls runs
        self.batching = False

    def __len__(self) -> int:
        return len(self.heap)

    def schedule(self, t: float, port, gen: int) -> None:
        """Wake *port* at time *t*: its own wake-up of generation *gen*, or an early one (:data:`EARLY`).

        (:meth:`run` re-arms a port after its own wake-up without this call.)
        """
        seq = self.seq = self.seq + 1
        heappush(self.heap, (t, seq, port, gen))

    def call_at(self, t: float, fn, args: tuple) -> EventHandle:
        """Call ``fn(*args)`` at time *t* (not before :attr:`now`); the handle can cancel it."""
        seq = self.seq = self.seq + 1
        h = EventHandle(t, seq, fn, args)
        heappush(self.calls, h)
        if t < self.turn and not self.batching:
            self.turn = t
            self.turn_seq = self.seq = self.seq + 1
            if t < self.limit:
                self.limit = t
        return h

    def next_call(self) -> float:
        """When the first call not cancelled is due (inf: none)."""
        calls = self.calls
        while calls and calls[0].cancelled:
            heappop(calls)
        return calls[0].time if calls else inf

    def _batch(self) -> None:
        """The calls' turn: run every call due by now, then arm the next turn."""
        now = self.now
        calls = self.calls
        self.batching = True
        try:
            while self.next_call() <= now:
                h = heappop(calls)
                self.calls_run += 1
                h.fn(*h.args)
        finally:
            self.batching = False
        self.turn = self.next_call()
        self.turn_seq = self.seq = self.seq + 1

    def salabim_at(self, t: float) -> None:
        """Something was scheduled on salabim's event list at time *t* (absolute, not before :attr:`now`)."""
        if t < self.sal:
            self.sal = t
        if t < self.limit:
            self.limit = t

    def stop(self) -> None:
        """End the current run at :attr:`now`, once everything else due now has run."""
        self.till = self.now
        self.horizon.activate(at=self.now, priority=inf)
        self.salabim_at(self.now)

    def run(self, till: float) -> None:
        """Run the simulation until time *till*; everything due at *till* runs before the run ends (as
        salabim's ``env.run(till=till)``); it ends sooner if :meth:`stop` is called."""
        self.till = till
        self.horizon.activate(at=till, priority=inf)
        heap = self.heap
        peek = self.env.peek
        pop = heappop
        push = heappush
        check = self.check
        n = 0  # wake-ups run since self.events was last brought up to date
        self.sal = peek()
        self.limit = min(self.sal, self.turn)
        try:
            while True:
                if heap and heap[0][0] < self.limit:
                    # a port wake-up (the step inlined: this is most events; _other() has the same for the
                    # rare wake-up due at the same time as a call scheduled before it)
                    t, seq, port, gen = pop(heap)
                    self.now = t
                    if gen == port.gen:
                        # the port's own wake-up: a step, then due again when the step says, or idle
                        # (until poked) when that is inf or an early wake-up will look earlier
                        n += 1
                        port.own_wake = inf
                        port.running = True
                        t = port.run_step(t) if port.check else port.step(t)
                        port.running = False
                        if t != inf and port.early_at > t:
                            port.own_wake = t
                            seq = self.seq = self.seq + 1  # as schedule() does
                            push(heap, (t, seq, port, port.gen))
                    elif gen == EARLY:
                        n += 1
                        port.wake_early(t)
                    # else: the entry of a wake-up that was replaced
                    if check and peek() < self.sal:
                        raise AssertionError(f"salabim has an event at {peek()} ns, before the {self.sal} ns the"
                                             f" loop knows of: schedule salabim activity from a wake-up or a call"
                                             f" through PortLoop.salabim_at (or use Simulation.call_at)")
                else:
                    self.events += n  # a call or salabim's side may read the count
                    n = 0
                    if not self._other():
                        break
        finally:
            self.events += n
            self.limit = self.sal = inf

    def _other(self) -> bool:
        """Run the first of salabim's next event, the calls' turn and a wake-up due at the same time as that
        turn but armed before it; False when none is due by the end of the run."""
        heap = self.heap
        tc = self.turn
        ts = self.sal
        tp = heap[0][0] if heap else inf
        t = min(ts, tc, tp)
        if t > self.till:
            return False
        self.now = t
        if ts == t:
            self.env.step()
            self.sal = self.env.peek()
        elif tc == t and (tp > t or self.turn_seq < heap[0][1]):
            self._batch()
        else:
            _, _seq, port, gen = heappop(heap)
            if gen == port.gen:
                self.events += 1
                port.own_wake = inf
                port.running = True
                t = port.run_step(t) if port.check else port.step(t)
                port.running = False
                if t != inf and port.early_at > t:
                    port.own_wake = t
                    seq = self.seq = self.seq + 1
                    heappush(heap, (t, seq, port, port.gen))
            elif gen == EARLY:
                self.events += 1
                port.wake_early(t)
        self.limit = min(self.sal, self.turn)
        return True
