"""candidate facts: candidates read from news items, the items that carry them, and signals that require
an accepted fact

Revision ID: 402092bf75cc
Revises: 64f2353ef419
Create Date: 2026-11-30 12:00:00

- ``candidates``: one row per proposed fact (unique by kind and fact key), its status, fields,
  confidence, the verification the sources allow, the fact it corroborates or the fact accepting it wrote.
- ``candidate_items``: each item carrying a candidate, with the words it was read from.
- ``signals.require_fact``: the signal's item matches are evidence only; a knowledge-base fact decides.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '402092bf75cc'
down_revision: str | None = '64f2353ef419'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'candidates',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('fact_key', sa.String(length=64), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('fact', sa.JSON(), nullable=False),
        sa.Column('confidence', sa.Float(), nullable=False),
        sa.Column('verification', sa.String(length=20), nullable=False),
        sa.Column('independent_sources', sa.Integer(), nullable=False),
        sa.Column('corroborates_kind', sa.String(length=32), nullable=True),
        sa.Column('corroborates_id', sa.String(length=64), nullable=True),
        sa.Column('fact_kind', sa.String(length=32), nullable=True),
        sa.Column('fact_id', sa.String(length=64), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('decided_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('decided_by', sa.String(length=64), nullable=True),
        sa.Column('note', sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('kind', 'fact_key', name='uq_candidates_kind_fact_key'),
    )
    op.create_index('ix_candidates_status_kind', 'candidates', ['status', 'kind', 'id'], unique=False)
    op.create_table(
        'candidate_items',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('candidate_id', sa.Integer(), nullable=False),
        sa.Column('item_id', sa.Integer(), nullable=False),
        sa.Column('source_id', sa.String(length=64), nullable=False),
        sa.Column('trust', sa.String(length=12), nullable=False),
        sa.Column('independent', sa.Boolean(), nullable=False),
        sa.Column('part', sa.String(length=8), nullable=False),
        sa.Column('span_start', sa.Integer(), nullable=False),
        sa.Column('span_end', sa.Integer(), nullable=False),
        sa.Column('quote', sa.Text(), nullable=False),
        sa.Column('confidence', sa.Float(), nullable=False),
        sa.Column('published_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('added_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['candidate_id'], ['candidates.id']),
        sa.ForeignKeyConstraint(['item_id'], ['items.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('candidate_id', 'item_id', name='uq_candidate_items_item'),
    )
    op.create_index('ix_candidate_items_candidate_id', 'candidate_items', ['candidate_id'], unique=False)
    op.create_index('ix_candidate_items_item_id', 'candidate_items', ['item_id'], unique=False)
    with op.batch_alter_table('signals', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('require_fact', sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table('signals', schema=None) as batch_op:
        batch_op.drop_column('require_fact')
    op.drop_index('ix_candidate_items_item_id', table_name='candidate_items')
    op.drop_index('ix_candidate_items_candidate_id', table_name='candidate_items')
    op.drop_table('candidate_items')
    op.drop_index('ix_candidates_status_kind', table_name='candidates')
    op.drop_table('candidates')
