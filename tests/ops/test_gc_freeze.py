"""``chipwatch serve`` runs the app with its start-up objects frozen out of the cyclic collector."""

from __future__ import annotations

import gc

from fastapi.testclient import TestClient

from chipwatch.app import create_app, create_served_app


def test_the_served_app_freezes_its_start_up_objects_and_thaws_them_on_shutdown(db):
    with TestClient(create_app(scheduler=False)) as client:
        assert client.get("/healthz").status_code == 200
        assert gc.get_freeze_count() == 0  # tests and embedders keep the collector as it was
    with TestClient(create_served_app()) as client:
        assert client.get("/readyz").json() == {"status": "ready"}
        assert gc.get_freeze_count() > 10_000  # the modules, mappers and schemas of start-up
    assert gc.get_freeze_count() == 0

