"""items written since: indexes on when an item was first stored and last updated

Revision ID: 7c41d9e2a6b8
Revises: 5b8e4c2a7d13
Create Date: 2026-11-30 16:00:00

A signal created or changed is matched against the stored items in a read snapshot; its write
transaction then reads only the items stored or updated since that snapshot. Without these indexes that
read scanned every item while holding the write lock.
"""

from collections.abc import Sequence

from alembic import op

revision: str = '7c41d9e2a6b8'
down_revision: str | None = '5b8e4c2a7d13'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_items_first_seen', 'items', ['first_seen_at'], unique=False)
    op.create_index('ix_items_updated', 'items', ['updated_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_items_updated', table_name='items')
    op.drop_index('ix_items_first_seen', table_name='items')
