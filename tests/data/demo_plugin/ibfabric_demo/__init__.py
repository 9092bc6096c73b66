"""A third-party ibfabric plugin: one implementation for every role.

It imports nothing from ibfabric but ``hookimpl`` and the public classes a
plugin author builds on, exactly as an outside package would.  Each role
lives in a module of its own; this module only registers them.
"""

from ibfabric import hookimpl

from .arbiter import Lottery, StrictPriority
from .dropper import RandomEarlyDrop
from .modules import NED, DeliveryCounter
from .qos import FlatShare
from .replication import FromInput
from .routing import lowest_port_bfs
from .selector import CreditLottery
from .traffic import Neighbour
from .workload import incast


@hookimpl
def ibfabric_register_routing_engines(register):
    register("demo-bfs", lowest_port_bfs, description="BFS min-hop, lowest port (spread=true: per LID)")


@hookimpl
def ibfabric_register_vl_arbiters(register):
    register("strict-priority", StrictPriority, description="lowest VL first")
    register("lottery", Lottery, description="ready VLs drawn by their table weights")


@hookimpl
def ibfabric_register_packet_droppers(register):
    register("random-early", RandomEarlyDrop, description="drop with probability p")


@hookimpl
def ibfabric_register_path_selectors(register):
    register("credit-lottery", CreditLottery, description="options drawn by their free credits")


@hookimpl
def ibfabric_register_replication_engines(register):
    register("from-input", FromInput, description="copies read from the input VL, freed with the last")


@hookimpl
def ibfabric_register_traffic_patterns(register):
    register("neighbour", Neighbour, description="host i sends to host i + distance")


@hookimpl
def ibfabric_register_module_types(register):
    register("demo.DeliveryCounter", DeliveryCounter, ned=NED)


@hookimpl
def ibfabric_register_arbitration_policies(register):
    register("flat-share", FlatShare, description="bandwidth admission, equal weights")


@hookimpl
def ibfabric_register_workloads(register):
    register("incast", incast, description="every rank sends size bytes to rank 'root'")
