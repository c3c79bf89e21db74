"""Candidate facts read from news items: extraction (pure), review through the API, acceptance into the
knowledge base with the items as provenance."""
