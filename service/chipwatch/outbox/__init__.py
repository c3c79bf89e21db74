"""The event outbox: the ``events`` table and :func:`~chipwatch.outbox.emit.emit`.

Producers (signals, sources) write an event row in the transaction that caused it; consumers (the
webhook dispatcher) read undispatched rows.  Producers import this package, never a consumer.
"""
