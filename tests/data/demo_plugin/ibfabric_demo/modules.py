"""A module type: a NED declaration and its Python class."""

from ibfabric import ConfigError, Module

NED = """
package demo;

//
// Counts the packets delivered anywhere in the network, and those slower than a bound.
//
simple DeliveryCounter
{
    parameters:
        double slowerThan @unit(ns) = 1us;  // a delivery with a higher latency also counts as slow
}
"""


class DeliveryCounter(Module):
    """Counts deliveries through the ``packetReceived`` signal (its value: the packet's latency in ns)."""

    def initialize(self, stage):
        self.limit = self.params["slowerThan"]  # in ns: quantities come in canonical units
        if self.limit < 0:
            raise ConfigError(f"{self.path}: 'slowerThan' must be >= 0 (got {self.limit}ns)")
        self.count = 0
        self.slow = 0
        self.sim.signals.subscribe("packetReceived", self._on_delivery)

    def _on_delivery(self, module, signal, latency, time):
        self.count += 1
        if latency > self.limit:
            self.slow += 1

    def finish(self):
        self.final = self.count
