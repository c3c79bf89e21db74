"""Text as it is stored and looked up for search (pure: no I/O).

One fold for the stored copy and for the query, so that a search finds what a reader would call the same
text: NFKC (full-width ``１２０ＭＷ`` is ``120MW``; the ``㎿`` sign is ``MW``), typographic apostrophes and
dashes as ASCII, accents removed from Latin, Greek and Cyrillic letters (``Jalapen\u0303o``, ``Jalapeño``
and ``Jalapeno`` alike, composed or decomposed), then full Unicode case folding (``ß`` is ``ss``, ``Σ``
and ``ς`` are ``σ``), which SQLite's ``LIKE`` and ``lower()`` do only for ASCII. The fold is
:meth:`str.casefold` with :func:`chipwatch.text.normalize.normalize_text`; whitespace runs become one space.

The databases index the folded copy by character trigrams (SQLite FTS5's ``trigram`` tokenizer, PostgreSQL's
``pg_trgm``), which finds any substring of three characters or more, Chinese ones included; a shorter term
(``AI``, ``芯片``) is still matched, by a scan instead of the index.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from chipwatch.text.normalize import normalize_text

__all__ = ["MAX_TERMS", "MIN_INDEXED_CHARS", "fold_for_search", "search_terms"]

MIN_INDEXED_CHARS = 3
"""A trigram index finds terms of at least this many characters."""
MAX_TERMS = 16
"""Terms read from one query; the rest are ignored (a query is a few words, not a document)."""


def fold_for_search(text: str | None) -> str:
    """``text`` folded for search (see the module docstring); ``""`` for ``None`` or blank text."""
    if not text:
        return ""
    # Folded before and after: "İ" folds to "i" and a combining dot that normalisation then drops; NFKC
    # can make capitals ("ℌ" is "H") that only the second fold lowers.
    folded = normalize_text(text.casefold()).casefold()
    if not folded.isascii():
        folded = _ACCENTED.sub(lambda m: _unaccent(m.group()), folded)
    return " ".join(folded.split())


# Greek and Cyrillic letters that carry accents (normalize_text strips those of Latin letters only): the
# tonos of "ί", the breve of "й", the diaeresis of "ё". Kana and Hangul keep their marks, which change
# the syllable.
_ACCENTED = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff\u0400-\u04ff]+")


@lru_cache(maxsize=4096)
def _unaccent(run: str) -> str:
    return unicodedata.normalize(
        "NFC", "".join(ch for ch in unicodedata.normalize("NFD", run) if not unicodedata.combining(ch))
    )


def search_terms(query: str) -> list[str]:
    """The distinct folded terms of a search query, in order: words split on whitespace, each to be found
    as a substring of the title or the summary (all of them must be). At most :data:`MAX_TERMS`."""
    terms = list(dict.fromkeys(fold_for_search(query).split(" ")))
    return [t for t in terms if t][:MAX_TERMS]
