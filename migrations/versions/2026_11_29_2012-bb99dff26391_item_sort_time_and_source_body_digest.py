"""item sort time and source body digest

Revision ID: bb99dff26391
Revises: a7e0b0a69649
Create Date: 2026-11-29 20:12:31.532717
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = 'bb99dff26391'
down_revision: str | None = 'a7e0b0a69649'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Added nullable, filled from the existing columns, then made NOT NULL, so stored items keep
    # their order: published_at, or first_seen_at when the feed gave no usable date.
    with op.batch_alter_table('items', schema=None) as batch_op:
        batch_op.add_column(sa.Column('sort_at', sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE items SET sort_at = COALESCE(published_at, first_seen_at)")
    with op.batch_alter_table('items', schema=None) as batch_op:
        batch_op.alter_column('sort_at', existing_type=sa.DateTime(timezone=True), nullable=False)
        batch_op.create_index('ix_items_sort', ['sort_at', 'id'], unique=False)
        batch_op.create_index('ix_items_source_sort', ['source_id', 'sort_at'], unique=False)

    with op.batch_alter_table('sources', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('last_body_sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table('sources', schema=None) as batch_op:
        batch_op.drop_column('last_body_sha256')

    with op.batch_alter_table('items', schema=None) as batch_op:
        batch_op.drop_index('ix_items_source_sort')
        batch_op.drop_index('ix_items_sort')
        batch_op.drop_column('sort_at')
