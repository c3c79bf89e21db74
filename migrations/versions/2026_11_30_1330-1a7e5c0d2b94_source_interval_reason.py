"""source interval reason: why a source is checked as often as it is, in words

Revision ID: 1a7e5c0d2b94
Revises: c62a1c5e9833
Create Date: 2026-11-30 13:30:00

Null until the source's next check (chipwatch.sources.schedule gives the reason).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = '1a7e5c0d2b94'
down_revision: str | None = 'c62a1c5e9833'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('sources', schema=None) as batch_op:
        reason = sa.Column('interval_reason', sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True)
        batch_op.add_column(reason)


def downgrade() -> None:
    with op.batch_alter_table('sources', schema=None) as batch_op:
        batch_op.drop_column('interval_reason')
