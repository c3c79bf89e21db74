"""source removal: sources.removed_at

Revision ID: c62a1c5e9833
Revises: 5eed0d16e57a
Create Date: 2026-11-30 13:00:00

A removed source (DELETE /v1/sources/{id}) keeps its row and its items; the column is null for sources
in use.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'c62a1c5e9833'
down_revision: str | None = '5eed0d16e57a'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('sources', schema=None) as batch_op:
        batch_op.add_column(sa.Column('removed_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('sources', schema=None) as batch_op:
        batch_op.drop_column('removed_at')
