"""listing indexes walk the sort: mention rows carry their item's sort time

Revision ID: 9d3b6e21f0a4
Revises: 1a7e5c0d2b94
Create Date: 2026-11-30 14:00:00

items?mentions=X reads (entity_id, sort_at, item_id) from its end instead of sorting every mentioning
item; a source's listing index ends in id so PostgreSQL walks it for the (sort_at, id) order too.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '9d3b6e21f0a4'
down_revision: str | None = '1a7e5c0d2b94'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Added nullable, filled from the items, then made NOT NULL.
    with op.batch_alter_table('item_mentions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('sort_at', sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE item_mentions SET sort_at = "
        "(SELECT items.sort_at FROM items WHERE items.id = item_mentions.item_id)"
    )
    with op.batch_alter_table('item_mentions', schema=None) as batch_op:
        batch_op.alter_column('sort_at', existing_type=sa.DateTime(timezone=True), nullable=False)
        batch_op.drop_index('ix_mentions_entity')
        batch_op.create_index('ix_mentions_entity_sort', ['entity_id', 'sort_at', 'item_id'], unique=False)
    with op.batch_alter_table('items', schema=None) as batch_op:
        batch_op.drop_index('ix_items_source_sort')
        batch_op.create_index('ix_items_source_sort', ['source_id', 'sort_at', 'id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('items', schema=None) as batch_op:
        batch_op.drop_index('ix_items_source_sort')
        batch_op.create_index('ix_items_source_sort', ['source_id', 'sort_at'], unique=False)
    with op.batch_alter_table('item_mentions', schema=None) as batch_op:
        batch_op.drop_index('ix_mentions_entity_sort')
        batch_op.create_index('ix_mentions_entity', ['entity_id'], unique=False)
        batch_op.drop_column('sort_at')
