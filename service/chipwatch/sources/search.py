"""Item search: the query over the databases' trigram indexes of the folded title and summary.

Items carry their title and summary folded for search (``search_title``, ``search_summary``; see
:mod:`chipwatch.text.search`). The migration indexes them by character trigrams:

- SQLite: an FTS5 table ``items_fts`` with the ``trigram`` tokenizer over those two columns, the items
  table as its external content, kept in step by triggers; ranked by ``bm25`` with the title weighing
  :data:`TITLE_WEIGHT` times the summary;
- PostgreSQL: ``pg_trgm`` GIN indexes on both columns, used by ``LIKE '%term%'``; ranked by trigram word
  similarity of the query to the title (weighing :data:`TITLE_WEIGHT` times) and to the summary.

Every term of the query must occur in the title or the summary. Results are ranked, then the most
recently stored first, and paged by that key. Terms shorter than three characters cannot use a trigram
index: they are checked on the rows the longer terms found, or, when the query has no longer term, by a
scan of the newest items first (no ranking then). Neither index nor table is in the SQLModel metadata
(SQLAlchemy cannot describe them), so :func:`outside_metadata` tells Alembic's comparison to leave them
alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Integer,
    and_,
    cast,
    column,
    false,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
)
from sqlalchemy.sql import Select

from chipwatch.sources.models import Item
from chipwatch.text.search import MIN_INDEXED_CHARS, search_terms

__all__ = [
    "FTS_TABLE",
    "SCORE_SCALE",
    "TITLE_WEIGHT",
    "TRIGRAM_INDEXES",
    "SearchPlan",
    "outside_metadata",
    "search_plan",
]

FTS_TABLE = "items_fts"
TRIGRAM_INDEXES = ("ix_items_search_title_trgm", "ix_items_search_summary_trgm")
TITLE_WEIGHT = 4.0
_FTS = table(FTS_TABLE, column("rowid", Integer))
SCORE_SCALE = 1_000_000
"""Relevance is an integer (score x this), so a page cursor carries it exactly."""


def outside_metadata(name: str | None, type_: str, _parent_names: Any = None) -> bool:
    """Alembic ``include_name`` hook: False for the search objects the migrations make by hand (the FTS5
    table and its shadow tables, the trigram indexes), True for everything else."""
    if type_ == "table" and name is not None and name.startswith(FTS_TABLE):
        return False
    return not (type_ == "index" and name in TRIGRAM_INDEXES)


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """How one query is answered.

    ``ranked`` is a select of ``item_id`` and ``score`` columns (an integer, higher is more relevant) over
    the trigram index, to be paged by ``(score, item_id)`` (:meth:`ranked_where` adds conditions on
    items). ``None`` when the query has no term of three characters or more: then ``where`` alone selects
    the items (a scan, listed newest first). ``where`` is also the condition the short terms add to a
    ranked query on SQLite. ``index_only``: ``ranked`` reads the FTS table alone (SQLite).
    """

    ranked: Select | None
    where: Any
    index_only: bool

    def ranked_where(self, conditions: list[Any]) -> Select:
        """``ranked`` with ``conditions`` on items (and the short terms) applied."""
        assert self.ranked is not None
        conditions = [*conditions, *([self.where] if self.where is not None else [])]
        if not conditions:
            return self.ranked
        ranked = self.ranked.join(Item, Item.id == _FTS.c.rowid) if self.index_only else self.ranked
        return ranked.where(*conditions)


def _contains(term: str) -> Any:
    return or_(
        Item.search_title.contains(term, autoescape=True), Item.search_summary.contains(term, autoescape=True)
    )


def _fts5_query(terms: list[str]) -> str:
    """Each term as an FTS5 phrase (quoted, quotes doubled); phrases side by side must all occur."""
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


def search_plan(q: str, *, dialect: str) -> SearchPlan:
    """The plan for the search ``q`` (see :class:`SearchPlan`): every folded term of ``q`` must be a
    substring of the item's folded title or summary; a query with no term matches nothing. ``dialect``
    is ``sqlite`` or ``postgresql``."""
    terms = search_terms(q)
    long_terms = [t for t in terms if len(t) >= MIN_INDEXED_CHARS]
    short_terms = [t for t in terms if len(t) < MIN_INDEXED_CHARS]
    if not long_terms:
        scan = and_(*map(_contains, short_terms)) if short_terms else false()
        return SearchPlan(None, scan, index_only=False)
    if dialect == "postgresql":
        query = " ".join(terms)
        similarity = TITLE_WEIGHT * func.word_similarity(query, Item.search_title) + func.word_similarity(
            query, Item.search_summary
        )
        score = cast(func.round(similarity * SCORE_SCALE), Integer).label("score")
        ranked = select(Item.id.label("item_id"), score).where(and_(*map(_contains, terms)))
        return SearchPlan(ranked, None, index_only=False)
    score = literal_column(
        f"CAST(round(-bm25({FTS_TABLE}, {TITLE_WEIGHT}, 1.0) * {SCORE_SCALE}) AS INTEGER)", Integer
    ).label("score")
    ranked = (
        select(_FTS.c.rowid.label("item_id"), score)
        .select_from(_FTS)
        .where(text(f"{FTS_TABLE} MATCH :fts_query").bindparams(fts_query=_fts5_query(long_terms)))
    )
    where = and_(*map(_contains, short_terms)) if short_terms else None
    return SearchPlan(ranked, where, index_only=True)
