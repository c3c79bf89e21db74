"""Webhook secrets are encrypted at rest (Fernet), the key is the owner's alone, clear secrets of older
databases are sealed by the migration, and keys rotate without a delivery going unsigned."""

from __future__ import annotations

import stat

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import StatementError
from standardwebhooks.webhooks import Webhook
from typer.testing import CliRunner

from chipwatch.cli import app
from chipwatch.config import Settings, get_settings
from chipwatch.db import dispose_engines, get_engine, session_scope
from chipwatch.kit.sealing import SealError, forget_keys, key_path, unseal
from chipwatch.migrate import alembic_config
from chipwatch.webhooks.keys import rotate_keys
from tests.fixtures.database import _pg_admin_engine, postgres_url
from tests.fixtures.webhooks import deliver, endpoint_row, health_event, set_env, subscribe

SEALING_REVISION = "e5a1c0f3d9b2"
CLEAR = "whsec_" + "A" * 32


def _stored(endpoint_id: str) -> tuple[str, str | None]:
    with get_engine().connect() as conn:
        row = conn.execute(
            text("SELECT secret, previous_secret FROM webhooks WHERE id = :id"), {"id": endpoint_id}
        ).one()
    return row.secret, row.previous_secret


def _opens_with(token: str, key: str) -> bool:
    try:
        Fernet(key.encode()).decrypt(token.encode())
    except Exception:
        return False
    return True


@pytest.fixture(autouse=True)
def _fresh_keyring():
    forget_keys()
    yield
    forget_keys()


def test_a_new_secret_is_stored_encrypted_and_still_signs(client, admin_headers, receiver):
    created = client.post("/v1/webhooks", json={"url": receiver.url()}, headers=admin_headers)
    assert created.status_code == 201, created.text
    secret, endpoint_id = created.json()["secret"], created.json()["id"]
    stored, previous = _stored(endpoint_id)
    assert stored.startswith("gAAAAA") and secret not in stored and "whsec_" not in stored
    assert previous is None
    assert unseal(stored) == secret
    # The key was generated on first use, owner-only, in the data directory.
    path = key_path(get_settings())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert _opens_with(stored, path.read_text().strip())
    # Deliveries are signed with the clear secret the ORM reads back.
    health_event()
    deliver()
    (request,) = receiver.wait_for(1)
    payload = Webhook(secret).verify(request.body, request.headers)
    assert payload["type"] == "source.health_changed"


def test_rotating_the_endpoint_secret_seals_both_secrets(client, admin_headers, receiver):
    created = client.post("/v1/webhooks", json={"url": receiver.url()}, headers=admin_headers)
    endpoint_id = created.json()["id"]
    first = endpoint_row(endpoint_id).secret
    rotated = client.post(f"/v1/webhooks/{endpoint_id}/rotate-secret", headers=admin_headers).json()
    stored, previous = _stored(endpoint_id)
    assert stored.startswith("gAAAAA") and previous.startswith("gAAAAA")
    assert (unseal(stored), unseal(previous)) == (rotated["secret"], first)


def test_the_key_file_rotation_reseals_every_secret_and_drops_the_old_key(db, receiver):
    one, two = subscribe(receiver.url("/a")), subscribe(receiver.url("/b"))
    path = key_path(db)
    old_key = path.read_text().strip()
    before = {e.id: endpoint_row(e.id).secret for e in (one, two)}

    result = CliRunner().invoke(app, ["secrets", "rotate"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "2 webhook endpoint(s) re-encrypted" in result.output and "1 older key(s) removed" in result.output

    (new_key,) = path.read_text().split()
    assert new_key != old_key and stat.S_IMODE(path.stat().st_mode) == 0o600
    for endpoint_id, secret in before.items():
        stored, _ = _stored(endpoint_id)
        assert _opens_with(stored, new_key) and not _opens_with(stored, old_key)
        assert endpoint_row(endpoint_id).secret == secret
    # A second rotation right away has nothing sealed under an old key left, but still moves to a new key.
    again = rotate_keys(get_settings())
    assert (again.resealed, again.dropped_keys) == (2, 1)


def test_environment_keys_rotate_in_three_steps(db, monkeypatch, receiver):
    k1, k2 = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    set_env(monkeypatch, secret_keys=k1)
    old = subscribe(receiver.url("/old"))
    secret = endpoint_row(old.id).secret
    assert _opens_with(_stored(old.id)[0], k1)
    assert not key_path(get_settings()).exists()  # the environment's keys are used, no file is made

    # 1. the new key first, the old one after it: old tokens still open, new ones are sealed by k2
    set_env(monkeypatch, secret_keys=f"{k2}, {k1}")
    assert endpoint_row(old.id).secret == secret
    new = subscribe(receiver.url("/new"))
    assert _opens_with(_stored(new.id)[0], k2)
    # 2. re-seal: only the endpoint still under k1 is rewritten
    done = rotate_keys(get_settings())
    assert (done.resealed, done.dropped_keys, done.origin) == (1, 0, "CHIPWATCH_SECRET_KEYS")
    assert _opens_with(_stored(old.id)[0], k2)
    # 3. the old key can go
    set_env(monkeypatch, secret_keys=k2)
    assert endpoint_row(old.id).secret == secret


def test_a_missing_key_is_refused_with_a_message_naming_where_keys_come_from(db, monkeypatch, receiver):
    set_env(monkeypatch, secret_keys=Fernet.generate_key().decode())
    endpoint = subscribe(receiver.url())
    set_env(monkeypatch, secret_keys=Fernet.generate_key().decode())
    with pytest.raises(SealError, match="CHIPWATCH_SECRET_KEYS"):
        unseal(_stored(endpoint.id)[0])
    set_env(monkeypatch, secret_keys="not-a-key")
    # SQLAlchemy wraps what a column type raises while binding, keeping its message.
    with pytest.raises(StatementError, match="key 1 of CHIPWATCH_SECRET_KEYS is not a Fernet key"):
        subscribe(receiver.url("/other"))


# ---------------------------------------------------------------- the migration


@pytest.fixture
def empty_database(tmp_path):
    """URL of a new, empty database (a SQLite file, or a PostgreSQL database dropped afterwards)."""
    pg = postgres_url()
    if not pg:
        yield f"sqlite:///{(tmp_path / 'old.db').as_posix()}"
        return
    name = f"chipwatch_seal_{tmp_path.name[-8:].lower().replace('-', '_')}"
    admin = _pg_admin_engine(pg)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield str(make_url(pg).set(database=name).render_as_string(hide_password=False))
    dispose_engines()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_the_migration_seals_clear_secrets_and_the_downgrade_opens_them(
    empty_database, tmp_path, monkeypatch
):
    data_dir = tmp_path / "data"
    monkeypatch.setenv("CHIPWATCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("CHIPWATCH_DATABASE_URL", empty_database)
    get_settings.cache_clear()
    settings = Settings(data_dir=data_dir, database_url=empty_database)
    cfg = alembic_config(settings)
    before = ScriptDirectory.from_config(cfg).get_revision(SEALING_REVISION).down_revision
    cfg.attributes["settings"] = settings
    command.upgrade(cfg, before)
    url = settings.resolved_database_url
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO webhooks (id, url, event_types, signal_ids, secret, previous_secret, enabled, "
                 "created_at) VALUES ('wh_old', 'http://127.0.0.1:9/h', '[]', '[]', :s, :p, true, "
                 "CURRENT_TIMESTAMP)"),
            {"s": CLEAR, "p": "whsec_" + "B" * 32},
        )
    command.upgrade(cfg, SEALING_REVISION)
    with engine.connect() as conn:
        stored, previous = conn.execute(text("SELECT secret, previous_secret FROM webhooks")).one()
    assert stored.startswith("gAAAAA") and previous.startswith("gAAAAA")
    assert (unseal(stored, settings), unseal(previous, settings)) == (CLEAR, "whsec_" + "B" * 32)
    assert stat.S_IMODE(key_path(settings).stat().st_mode) == 0o600
    with session_scope(settings, write=False) as session:
        from chipwatch.webhooks.models import Endpoint

        assert session.get(Endpoint, "wh_old").secret == CLEAR

    command.downgrade(cfg, before)
    with engine.connect() as conn:
        assert tuple(conn.execute(text("SELECT secret, previous_secret FROM webhooks")).one()) == (
            CLEAR, "whsec_" + "B" * 32)
    engine.dispose()
    dispose_engines()
