"""fact history

Revision ID: c13f4a7e2b01
Revises: bb99dff26391
Create Date: 2026-11-30 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = 'c13f4a7e2b01'
down_revision: str | None = 'bb99dff26391'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'fact_history',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('fact_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('action', sa.String(length=16), nullable=False),
        sa.Column('field', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('old_value', sa.JSON(), nullable=True),
        sa.Column('new_value', sa.JSON(), nullable=True),
        sa.Column('cause', sa.String(length=16), nullable=False),
        sa.Column('cause_ref', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('actor', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('changed_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('fact_history', schema=None) as batch_op:
        batch_op.create_index('ix_fact_history_fact', ['kind', 'fact_id', 'id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('fact_history', schema=None) as batch_op:
        batch_op.drop_index('ix_fact_history_fact')
    op.drop_table('fact_history')
