"""result entities: an index of the chips, baselines and models each result names

Revision ID: 5b8e4c2a7d13
Revises: 9d3b6e21f0a4
Create Date: 2026-11-30 14:15:00

results?chip=X read the rows for X from this table instead of matching text in every result's JSON
lists; filled here from the stored results.
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = '5b8e4c2a7d13'
down_revision: str | None = '9d3b6e21f0a4'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ROLES = {'chip_ids': 'chip', 'baseline_ids': 'baseline', 'model_ids': 'model'}


def _ids(value) -> list[str]:
    if isinstance(value, str):  # SQLite hands JSON back as text here
        value = json.loads(value)
    return [v for v in value or [] if isinstance(v, str) and v]


def upgrade() -> None:
    table = op.create_table(
        'result_entities',
        sa.Column('role', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column('entity_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('result_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.ForeignKeyConstraint(['result_id'], ['results.id'], ),
        sa.PrimaryKeyConstraint('role', 'entity_id', 'result_id'),
    )
    with op.batch_alter_table('result_entities', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_result_entities_result_id'), ['result_id'], unique=False)
    results = sa.table(
        'results', sa.column('id', sa.String), *(sa.column(c, sa.Text) for c in _ROLES)
    )
    conn = op.get_bind()
    rows = [
        {'role': role, 'entity_id': entity_id, 'result_id': row.id}
        for row in conn.execute(sa.select(results))
        for column, role in _ROLES.items()
        for entity_id in sorted(set(_ids(getattr(row, column))))
    ]
    if rows:
        op.bulk_insert(table, rows)


def downgrade() -> None:
    with op.batch_alter_table('result_entities', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_result_entities_result_id'))
    op.drop_table('result_entities')
