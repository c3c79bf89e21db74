"""dataset imports aliases and fact provenance

Revision ID: 74d792d47797
Revises: c13f4a7e2b01
Create Date: 2026-11-30 09:35:12.105288
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = '74d792d47797'
down_revision: str | None = 'c13f4a7e2b01'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


FACT_TABLES = ('chips', 'deployments', 'funding_rounds', 'results')
# Tables whose base model gained an ``attributes`` column (chips had one already).
ATTRIBUTE_TABLES = ('deployments', 'funding_rounds', 'results')


def _provenance_columns() -> list[sa.Column]:
    return [
        sa.Column('dataset', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column('dataset_scope', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('dataset_version', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('import_id', sa.Integer(), nullable=True),
        sa.Column('row_key', sqlmodel.sql.sqltypes.AutoString(length=400), nullable=True),
        sa.Column('link', sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=True),
        sa.Column('certainty', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column('import_sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('derived', sa.JSON(), nullable=True),
        sa.Column('retired_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('retired_in_import_id', sa.Integer(), nullable=True),
    ]


def upgrade() -> None:
    op.create_table(
        'aliases',
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('alias', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column('target_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('note', sa.Text(), nullable=True),
        sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('tokens', sqlmodel.sql.sqltypes.AutoString(length=400), nullable=False),
        sa.Column('origin', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('kind', 'tokens', name='uq_aliases_kind_tokens'),
    )
    op.create_table(
        'imports',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('source_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('url', sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=True),
        sa.Column('file_name', sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True),
        sa.Column('sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('commit', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('scopes', sa.JSON(), nullable=False),
        sa.Column('strict', sa.Boolean(), nullable=False),
        sa.Column('actor', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
        *(sa.Column(name, sa.Integer(), nullable=False) for name in (
            'rows_read', 'inserted', 'updated', 'unchanged', 'retired', 'restored', 'skipped', 'waiting',
            'duplicates')),
        sa.Column('error', sa.Text(), nullable=True),
        sa.Column('report', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['source_id'], ['sources.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('imports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_imports_kind'), ['kind'], unique=False)
        batch_op.create_index(batch_op.f('ix_imports_source_id'), ['source_id'], unique=False)

    op.create_table(
        'waiting_rows',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('dataset', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('dataset_scope', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column('row_key', sqlmodel.sql.sqltypes.AutoString(length=400), nullable=False),
        sa.Column('import_id', sa.Integer(), nullable=False),
        sa.Column('dataset_version', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('record', sa.JSON(), nullable=False),
        sa.Column('names', sa.JSON(), nullable=False),
        sa.Column('since', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['import_id'], ['imports.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('waiting_rows', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_waiting_rows_import_id'), ['import_id'], unique=False)
        batch_op.create_index('ix_waiting_rows_key', ['dataset', 'row_key'], unique=False)

    # New JSON columns are added nullable, filled for the rows already there, then made NOT NULL.
    for table in FACT_TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            for column in _provenance_columns():
                batch_op.add_column(column)
            if table in ATTRIBUTE_TABLES:
                batch_op.add_column(sa.Column('attributes', sa.JSON(), nullable=True))
            if table == 'funding_rounds':
                batch_op.add_column(sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True))
            batch_op.create_index(batch_op.f(f'ix_{table}_dataset'), ['dataset'], unique=False)
        op.execute(f"UPDATE {table} SET derived = '[]'")
        if table in ATTRIBUTE_TABLES:
            op.execute(f"UPDATE {table} SET attributes = '{{}}'")
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column('derived', existing_type=sa.JSON(), nullable=False)
            if table in ATTRIBUTE_TABLES:
                batch_op.alter_column('attributes', existing_type=sa.JSON(), nullable=False)

    with op.batch_alter_table('sources', schema=None) as batch_op:
        batch_op.alter_column(
            'kind', existing_type=sa.VARCHAR(length=10), type_=sa.String(length=32), existing_nullable=False
        )


def downgrade() -> None:
    with op.batch_alter_table('sources', schema=None) as batch_op:
        batch_op.alter_column(
            'kind', existing_type=sa.String(length=32), type_=sa.VARCHAR(length=10), existing_nullable=False
        )
    for table in reversed(FACT_TABLES):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(batch_op.f(f'ix_{table}_dataset'))
            if table == 'funding_rounds':
                batch_op.drop_column('status')
            if table in ATTRIBUTE_TABLES:
                batch_op.drop_column('attributes')
            for column in reversed(_provenance_columns()):
                batch_op.drop_column(column.name)
    with op.batch_alter_table('waiting_rows', schema=None) as batch_op:
        batch_op.drop_index('ix_waiting_rows_key')
        batch_op.drop_index(batch_op.f('ix_waiting_rows_import_id'))
    op.drop_table('waiting_rows')
    with op.batch_alter_table('imports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_imports_source_id'))
        batch_op.drop_index(batch_op.f('ix_imports_kind'))
    op.drop_table('imports')
    op.drop_table('aliases')
