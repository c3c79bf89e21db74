"""feed truth: source time zones, date precision and reasons, item search, one evidence row per story

Revision ID: 43438047f7b1
Revises: e5a1c0f3d9b2
Create Date: 2026-11-30 11:00:00

- ``sources.timezone``: the IANA zone a source's dates are read in.
- ``items.published_precision`` / ``items.published_reason``: how precise a publication date is, and how it
  was read or why it is unknown (null for items stored before).
- ``items.content_hash``: recomputed with the title, which the content key now always includes.
- ``items.search_title`` / ``items.search_summary``: the text folded for search (chipwatch.text.search),
  filled for existing items, indexed by trigrams: an FTS5 table ``items_fts`` (tokenizer ``trigram``, the
  items table as external content, kept in step by triggers) on SQLite; ``pg_trgm`` GIN indexes on
  PostgreSQL.
- ``signal_evidence.story_link`` / ``story_title`` / ``sources``: the keys that make two items one story,
  unique per signal, side and condition, and every source that carried it. Existing item evidence gets
  its keys; a later row of a story already recorded keeps null keys (rows are never merged after the
  fact, since history rows name them).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from chipwatch.kit.time import rfc3339
from chipwatch.sources.store import content_hash
from chipwatch.text.search import fold_for_search
from chipwatch.text.stories import story_keys
from chipwatch.types import UTCDateTime

revision: str = '43438047f7b1'
down_revision: str | None = 'e5a1c0f3d9b2'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 2000

FTS_SQLITE = [
    "CREATE VIRTUAL TABLE items_fts USING fts5(search_title, search_summary, content='items', "
    "content_rowid='id', tokenize='trigram')",
    "CREATE TRIGGER items_fts_insert AFTER INSERT ON items BEGIN "
    "INSERT INTO items_fts(rowid, search_title, search_summary) "
    "VALUES (new.id, new.search_title, new.search_summary); END",
    "CREATE TRIGGER items_fts_delete AFTER DELETE ON items BEGIN "
    "INSERT INTO items_fts(items_fts, rowid, search_title, search_summary) "
    "VALUES ('delete', old.id, old.search_title, old.search_summary); END",
    "CREATE TRIGGER items_fts_update AFTER UPDATE OF search_title, search_summary ON items BEGIN "
    "INSERT INTO items_fts(items_fts, rowid, search_title, search_summary) "
    "VALUES ('delete', old.id, old.search_title, old.search_summary); "
    "INSERT INTO items_fts(rowid, search_title, search_summary) "
    "VALUES (new.id, new.search_title, new.search_summary); END",
]
FTS_POSTGRESQL = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX ix_items_search_title_trgm ON items USING gin (search_title gin_trgm_ops)",
    "CREATE INDEX ix_items_search_summary_trgm ON items USING gin (search_summary gin_trgm_ops)",
]


def _content_hash(row) -> str:
    # chipwatch.sources.store.item_content_hash over a stored row: the title is now always hashed.
    date = row.published_at.isoformat() if row.published_at and not row.published_is_estimated else ''
    return content_hash(f"{date}\n{row.title or ''}", row.content or row.summary or '')


def _fold_items(conn) -> None:
    """Fill the search columns and hash every item's content the way the store now does."""
    items = sa.table(
        'items', sa.column('id', sa.Integer), sa.column('title', sa.Text), sa.column('summary', sa.Text),
        sa.column('content', sa.Text), sa.column('published_at', UTCDateTime),
        sa.column('published_is_estimated', sa.Boolean), sa.column('content_hash', sa.String),
        sa.column('search_title', sa.Text), sa.column('search_summary', sa.Text),
    )
    last = 0
    while True:
        rows = conn.execute(
            sa.select(items).where(items.c.id > last).order_by(items.c.id).limit(BATCH)
        ).all()
        if not rows:
            return
        conn.execute(
            sa.update(items).where(items.c.id == sa.bindparam('item_id')).values(
                search_title=sa.bindparam('st'), search_summary=sa.bindparam('ss'),
                content_hash=sa.bindparam('hash'),
            ),
            [{'item_id': r.id, 'st': fold_for_search(r.title), 'ss': fold_for_search(r.summary),
              'hash': _content_hash(r)} for r in rows],
        )
        last = rows[-1].id


def _story_evidence(conn) -> None:
    evidence = sa.table(
        'signal_evidence', sa.column('id', sa.Integer), sa.column('signal_id', sa.String),
        sa.column('ref_kind', sa.String), sa.column('ref_id', sa.String), sa.column('side', sa.String),
        sa.column('condition_index', sa.Integer), sa.column('trust', sa.String),
        sa.column('source_id', sa.String), sa.column('title', sa.Text), sa.column('url', sa.String),
        sa.column('published_at', UTCDateTime), sa.column('story_link', sa.String),
        sa.column('story_title', sa.String), sa.column('sources', sa.JSON),
    )
    items = sa.table('items', sa.column('id', sa.Integer), sa.column('link_norm', sa.String),
                     sa.column('title', sa.Text))
    rows = conn.execute(
        sa.select(evidence, items.c.link_norm, items.c.title.label('item_title'))
        .select_from(evidence.outerjoin(items, sa.cast(items.c.id, sa.String) == evidence.c.ref_id))
        .where(evidence.c.ref_kind == 'item').order_by(evidence.c.id)
    ).all()
    seen: set[tuple] = set()
    for r in rows:
        link_key, title_key = story_keys(r.link_norm, r.item_title if r.item_title is not None else r.title)
        place = (r.signal_id, r.side, r.condition_index)
        keys = {}
        for column, key in (('story_link', link_key), ('story_title', title_key)):
            if key is not None and (place, column, key) not in seen:
                seen.add((place, column, key))
                keys[column] = key
        entry = {'source_id': r.source_id, 'item_id': int(r.ref_id) if r.ref_id.isdigit() else None,
                 'title': r.title, 'url': r.url, 'trust': r.trust,
                 'published_at': rfc3339(r.published_at)}
        conn.execute(sa.update(evidence).where(evidence.c.id == r.id).values(sources=[entry], **keys))


def upgrade() -> None:
    conn = op.get_bind()
    with op.batch_alter_table('sources') as batch_op:
        batch_op.add_column(sa.Column('timezone', sa.String(length=64), nullable=True))
    with op.batch_alter_table('items') as batch_op:
        batch_op.add_column(sa.Column('published_precision', sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column('published_reason', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('search_title', sa.Text(), server_default='', nullable=False))
        batch_op.add_column(sa.Column('search_summary', sa.Text(), server_default='', nullable=False))
    with op.batch_alter_table('signal_evidence') as batch_op:
        batch_op.add_column(sa.Column('story_link', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('story_title', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('sources', sa.JSON(), server_default='[]', nullable=False))
    _fold_items(conn)
    _story_evidence(conn)
    # The server defaults stay: rows written without these columns (bulk loads) get empty text and an
    # empty list, and altering them away would rebuild the tables on SQLite.
    with op.batch_alter_table('signal_evidence') as batch_op:
        batch_op.create_index(
            'ux_evidence_story_link', ['signal_id', 'side', 'condition_index', 'story_link'], unique=True
        )
        batch_op.create_index(
            'ux_evidence_story_title', ['signal_id', 'side', 'condition_index', 'story_title'], unique=True
        )
    # Made last: the items table above may be rebuilt by batch mode on SQLite, which would drop triggers.
    for statement in FTS_SQLITE if conn.dialect.name == 'sqlite' else FTS_POSTGRESQL:
        op.execute(statement)
    if conn.dialect.name == 'sqlite':
        op.execute("INSERT INTO items_fts(items_fts) VALUES ('rebuild')")


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == 'sqlite':
        for name in ('items_fts_insert', 'items_fts_delete', 'items_fts_update'):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS items_fts")
    else:
        op.execute("DROP INDEX IF EXISTS ix_items_search_title_trgm")
        op.execute("DROP INDEX IF EXISTS ix_items_search_summary_trgm")
    with op.batch_alter_table('signal_evidence') as batch_op:
        batch_op.drop_index('ux_evidence_story_title')
        batch_op.drop_index('ux_evidence_story_link')
        batch_op.drop_column('sources')
        batch_op.drop_column('story_title')
        batch_op.drop_column('story_link')
    with op.batch_alter_table('items') as batch_op:
        batch_op.drop_column('search_summary')
        batch_op.drop_column('search_title')
        batch_op.drop_column('published_reason')
        batch_op.drop_column('published_precision')
    with op.batch_alter_table('sources') as batch_op:
        batch_op.drop_column('timezone')
