"""Arbitration policies: how output ports fill their VLArbitrationTables as connections are admitted.

Built-ins (registered through the ``ibfabric`` entry-point group):

``alfaro2001``
    Alfaro, Sánchez and Duato's strategy (:mod:`.alfaro2001`).
"""
