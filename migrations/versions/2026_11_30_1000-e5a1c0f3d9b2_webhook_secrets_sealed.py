"""webhook secrets sealed at rest

Revision ID: e5a1c0f3d9b2
Revises: 74d792d47797
Create Date: 2026-11-30 10:00:00

The two secret columns widen to hold Fernet tokens, and every secret stored in clear is sealed with the
key in force (``CHIPWATCH_SECRET_KEYS``, else ``<data_dir>/secret_key``, generated if missing). The
downgrade opens them again.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from chipwatch.config import get_settings
from chipwatch.kit.sealing import is_sealed, seal, unseal

revision: str = 'e5a1c0f3d9b2'
down_revision: str | None = '74d792d47797'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ('secret', 'previous_secret')


def _settings():
    # chipwatch.migrate passes the settings it migrates with; the alembic command line uses the env's.
    return op.get_context().config.attributes.get('settings') or get_settings()


def _rewrite(convert, wanted) -> None:
    conn = op.get_bind()
    webhooks = sa.table('webhooks', sa.column('id', sa.String), *(sa.column(c, sa.String) for c in COLUMNS))
    rows = conn.execute(sa.select(webhooks.c.id, *(webhooks.c[c] for c in COLUMNS))).all()
    for row in rows:
        values = {c: convert(getattr(row, c)) for c in COLUMNS if getattr(row, c) is not None and wanted(getattr(row, c))}
        if values:
            conn.execute(sa.update(webhooks).where(webhooks.c.id == row.id).values(**values))


def upgrade() -> None:
    with op.batch_alter_table('webhooks', schema=None) as batch_op:
        for column in COLUMNS:
            batch_op.alter_column(column, existing_type=sa.String(length=128), type_=sa.String(length=512))
    settings = _settings()
    _rewrite(lambda v: seal(v, settings), lambda v: not is_sealed(v))


def downgrade() -> None:
    settings = _settings()
    _rewrite(lambda v: unseal(v, settings), is_sealed)
    with op.batch_alter_table('webhooks', schema=None) as batch_op:
        for column in COLUMNS:
            batch_op.alter_column(column, existing_type=sa.String(length=512), type_=sa.String(length=128))
