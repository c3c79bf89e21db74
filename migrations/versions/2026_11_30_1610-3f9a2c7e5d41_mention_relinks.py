"""mention relinks: stored items matched again when an entity's names change

Revision ID: 3f9a2c7e5d41
Revises: 7c41d9e2a6b8
Create Date: 2026-11-30 16:10:00

Items are linked to the entities their text names when they are stored; an alias added later reached
only the items stored after it. A relink row per entity whose names changed records how far a
background pass has got in matching the stored items again.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = '3f9a2c7e5d41'
down_revision: str | None = '7c41d9e2a6b8'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'mention_relinks',
        sa.Column('entity_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('history_id', sa.Integer(), nullable=False),
        sa.Column('next_item_id', sa.Integer(), nullable=False),
        sa.Column('requested_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('done_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('entity_id'),
    )


def downgrade() -> None:
    op.drop_table('mention_relinks')
