"""Dataset imports: public dataset files (Epoch AI, MLPerf, InferenceX) into knowledge-base facts.

A file is parsed by :mod:`chipwatch.datasets` (pure), each record is built into the values of one fact
with its hardware, vendor and model names resolved through the alias table (pure), the plan is decided
against the facts an earlier version wrote (pure), and applied in one transaction: inserts, field-by-field
updates into each fact's history with ``fact.changed`` events, retirement of rows the new version lacks,
rows waiting on an alias, and the import's own report row.
"""
