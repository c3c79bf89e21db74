"""The shared vocabulary: each word several domains use (statuses, trust, verification, slugs, entity
kinds) defined once."""
