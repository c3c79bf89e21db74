"""fact retraction: retracted_at and retraction_reason on every knowledge-base table

Revision ID: 64f2353ef419
Revises: 43438047f7b1
Create Date: 2026-11-30 11:30:00

A retracted fact keeps its row (DELETE /v1/{kind}/{id} marks it); both columns are null for facts in force.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '64f2353ef419'
down_revision: str | None = '43438047f7b1'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ('vendors', 'chips', 'models', 'benchmarks', 'results', 'funding_rounds', 'deployments', 'claims')


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('retracted_at', sa.DateTime(timezone=True), nullable=True))
            batch_op.add_column(sa.Column('retraction_reason', sa.Text(), nullable=True))


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column('retraction_reason')
            batch_op.drop_column('retracted_at')
