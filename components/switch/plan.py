"""Which stages a switch is made of, chosen once from its parameters (DESIGN §3), and the one rule.

=====================  ==============================================  ====================================
stage                  chosen by                                       choices
=====================  ==============================================  ====================================
input organisation     ``inputQueues``, ``escapeBufferSize``           one FIFO, virtual output queues,
                                                                       FIFO split into adaptive + escape
route                  ``optionBits``, ``optionsWhen``, ``selectAt``,  one port; routing options chosen at
                       ``pathSelector``; the MFT and ``replication``   lookup or arbitration; copy sets
crossbar               ``crossbarArbiter``, ``crossbarWeights``,       FIFO or weighted round robin
                       ``crossbarSpeedup``
output side            ``outputBufferSize``,                           straight to the link, or output VL
                       ``outputEscapeBufferSize``                      buffers (split like the inputs)
VL arbiter             ``arbiter`` (a plugin)                          IBA VLArb tables, ...
watchers               ``dropper`` (a plugin); the subnet manager's    lifetimes (HLL, SLL), arrival checks;
                       ``congestionControl``                           FECN marking (congestion control)
port state             the link's and the subnet manager's doings      Down, Init, Armed, Active
=====================  ==============================================  ====================================

Every combination builds and runs.  **The one rule** (:func:`check`): a
stage is chosen by its own parameters, and a parameter that only means
something for a choice of another stage needs that choice --

- ``escapeBufferSize > 0`` splits a FIFO for the escape paths of routing
  options: it needs ``optionBits > 0`` and a FIFO per input VL
  (``inputQueues`` "fifo" or "auto");
- ``outputEscapeBufferSize > 0`` keeps part of each output VL buffer for
  escape-option packets: it needs output buffers and ``optionBits > 0``;
- ``crossbarWeights`` weights the round robin: it needs
  ``crossbarArbiter = "wrr"``;
- a replication engine that must send its copies first (``synchronous``:
  lock step) cannot share the VL arbiter with unicast packets (a multicast
  bandwidth policy) on a port straight to the link: that needs output
  buffers, where its lock step is at the crossbar and the link arbitrates
  (checked when the policy is applied, :mod:`ibfabric.components.qos.mcastbw`).

``inputQueues = "auto"`` (the default) is a FIFO when an escape split asks
for one, and virtual output queues otherwise.
"""

from __future__ import annotations

from ibfabric.errors import ConfigError

from ..packet import CREDIT_BYTES

__all__ = ["Plan", "check"]


def check(sw) -> None:
    """The one rule (module docstring): raise ConfigError naming the parameter and what it needs."""
    p = sw.params
    path = sw.path
    if sw.escape_buffer:
        if not sw.option_bits:
            raise ConfigError(f"{path}: 'escapeBufferSize' ({sw.escape_buffer}B) splits the input buffers for the"
                              f" escape paths of routing options: it needs 'optionBits' > 0")
        if str(p["inputQueues"]) == "voq":
            raise ConfigError(f"{path}: 'escapeBufferSize' ({sw.escape_buffer}B) splits one FIFO per input VL into"
                              f" adaptive and escape parts: it needs inputQueues = \"fifo\" (or \"auto\"), not"
                              f" \"voq\"")
    if sw.out_escape:
        if not sw.out_buffer:
            raise ConfigError(f"{path}: 'outputEscapeBufferSize' ({sw.out_escape}B) splits the output VL buffers:"
                              f" it needs 'outputBufferSize' > 0")
        if not sw.option_bits:
            raise ConfigError(f"{path}: 'outputEscapeBufferSize' ({sw.out_escape}B) keeps output-buffer space for"
                              f" the escape option of routing options: it needs 'optionBits' > 0")
    if sw.xbar_arbiter == "fifo" and str(p["crossbarWeights"]).strip():
        raise ConfigError(f"{path}: 'crossbarWeights' weights the round robin: it needs crossbarArbiter = \"wrr\"")


class Plan:
    """The stage choices of one switch, which its output ports bind (:meth:`SwitchTx.bind
    <ibfabric.components.switch.tx.SwitchTx.bind>`)."""

    def __init__(self, sw):
        self.sw = sw
        #: credits of each output VL buffer (0: straight to the link)
        self.out_credits = sw.out_buffer // CREDIT_BYTES
        #: credits of each output VL buffer that adaptive-option packets may not fill (``outputEscapeBufferSize``)
        self.out_reserve = -(-sw.out_escape // CREDIT_BYTES)
        #: routing options: the crossbar's choice takes them into account
        self.options = bool(sw.option_bits)
        self.wrr = sw.xbar_arbiter == "wrr"
        self.weights: list[int] = []
        #: the lifetime watcher (:mod:`~ibfabric.components.switch.lifetimes`), or None
        self.lifetimes = None
        #: the watchers of the output ports, in the order they wrap them (:meth:`add_watcher`)
        self.watchers: list = []
        if getattr(sw.dropper, "lifetimes", False):
            from .lifetimes import Lifetimes

            self.lifetimes = Lifetimes(sw, sw.dropper)
            self.watchers.append(self.lifetimes)

    def add_watcher(self, watcher) -> None:
        """Register *watcher*, an object with ``wrap(tx)``, on every output port of the switch, and bind the
        ports again so that it takes effect (before a run, or at any time during one).

        :meth:`SwitchTx.bind <ibfabric.components.switch.tx.SwitchTx.bind>` calls ``watcher.wrap(tx)``
        each time it binds port *tx*, after the stages have bound its methods: the watcher replaces
        what it watches (``tx.step``, ``tx.launch``...) on the instance with its own function that calls
        the one it found, and looks at ``tx.state`` itself if it acts on Active ports only.  The packet
        lifetimes (:mod:`~ibfabric.components.switch.lifetimes`) and congestion control's FECN marker
        (:mod:`ibfabric.components.cc.marking`) are watchers; a third-party mechanism registers the same
        way, with no edit of the stages."""
        self.watchers.append(watcher)
        for tx in self.sw.tx.values():
            tx.bind()

    def pick_for(self, tx):
        """The crossbar's ``pick`` for port *tx*."""
        if self.options:
            from .options import options_pick

            return lambda vl, now: options_pick(tx, vl, now)
        return tx._pick

    def buffered_for(self, tx) -> tuple:
        """``(next_transfer, wants)`` of port *tx* with output buffers: when a candidate could next cross
        into its output buffer, and what a credit return pokes the port for.  With routing options a
        candidate may also wait for credits downstream (:func:`~.options.options_next_transfer`)."""
        if self.options:
            from .options import OptionWants, options_next_transfer

            return (lambda after: options_next_transfer(tx, after)), OptionWants(tx)
        return tx._next_transfer, tx.obuf

    def sendable(self, tx, now: float) -> bool:
        """Whether a unicast candidate of *tx* (straight to the link) could cross now (the audits)."""
        if self.options:
            from .options import options_sendable

            return options_sendable(tx, now)
        return any(tx.cand_sendable(vl, now) for vl in range(tx.nvl) if tx.cands[vl])
