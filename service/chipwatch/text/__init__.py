"""Pure text reading shared by the domains: normalisation, phrase and entity matching, quantities.

Nothing here does I/O or knows about signals, sources or the database: the feed mention linker and the
signal matcher both build on it.
"""
