"""seed digests: per seeded row, the seed entry and the row as the last seed load left them

Revision ID: 5eed0d16e57a
Revises: 402092bf75cc
Create Date: 2026-11-30 12:30:00

A seed load applies a seeded row only where its seed entry changed since the last load, and keeps an
edit made since (chipwatch.seed_state). The table starts empty: the first load after this migration
takes each row that equals its seed entry as seeded, and a row that differs as edited when its fact
history shows a change other than a seed's.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = '5eed0d16e57a'
down_revision: str | None = '402092bf75cc'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'seed_digests',
        sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('row_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column('seed_sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('row_sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('loaded_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('kind', 'row_id'),
    )


def downgrade() -> None:
    op.drop_table('seed_digests')
