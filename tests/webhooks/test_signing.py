"""Signing against the Standard Webhooks vectors in ../shared/corpus and the reference verifier."""

from __future__ import annotations

import base64
import json
from datetime import datetime

import pytest
import standardwebhooks.webhooks as sw
from standardwebhooks import Webhook as StandardWebhook
from standardwebhooks.webhooks import EmptyWebhookSecretError, WebhookVerificationError

from chipwatch.webhooks import signing
from tests.fixtures.corpus import corpus_dir

VECTORS_PATH = corpus_dir() / "standard-webhooks" / "vectors.json"
VECTORS = json.loads(VECTORS_PATH.read_text()) if VECTORS_PATH.is_file() else None
needs_vectors = pytest.mark.skipif(
    VECTORS is None, reason=f"Standard Webhooks vectors not found at {VECTORS_PATH} (../shared is absent)"
)


def _cases(key: str) -> list:
    return VECTORS[key] if VECTORS else []


def _ids(cases: list) -> list[str]:
    return [c["name"] if isinstance(c, dict) and "name" in c else str(c) for c in cases]


@pytest.fixture
def frozen_now(monkeypatch):
    """Freeze the reference verifier's clock at a given Unix time (the vectors fix ``now``)."""

    def freeze(now: int) -> None:
        class Frozen(datetime):
            @classmethod
            def now(cls, tz=None):
                return datetime.fromtimestamp(now, tz)

        monkeypatch.setattr(sw, "datetime", Frozen)

    return freeze


@needs_vectors
@pytest.mark.parametrize("case", _cases("sign_vectors"), ids=_ids(_cases("sign_vectors")))
def test_sign_vectors(case):
    sig = signing.sign(case["secret"], case["msg_id"], case["timestamp"], case["payload"])
    assert sig == case["expected_signature"]
    # The prefix is optional on input: with and without ``whsec_`` the key is the same.
    prefixed = case["secret"] if case["secret"].startswith("whsec_") else "whsec_" + case["secret"]
    assert signing.sign(prefixed, case["msg_id"], str(case["timestamp"]), case["payload"]) == sig


VERIFY = _cases("verify_cases_fixed_time")


@needs_vectors
@pytest.mark.parametrize("case", VERIFY, ids=_ids(VERIFY))
def test_verify_vectors_with_the_reference_verifier(case, frozen_now):
    frozen_now(case["now"])
    verifier = StandardWebhook(case["secret"])
    if case["expect"] == "valid":
        assert verifier.verify(case["payload"], case["headers"]) == json.loads(case["payload"])
    else:
        # The reference library raises WebhookVerificationError, except for a signature that is not
        # valid base64, where binascii.Error (a ValueError) escapes: receivers must catch both.
        with pytest.raises((WebhookVerificationError, ValueError)):
            verifier.verify(case["payload"], case["headers"])


VALID = [c for c in VERIFY if c["expect"] == "valid"]


@needs_vectors
@pytest.mark.parametrize("case", VALID, ids=_ids(VALID))
def test_our_signature_is_the_valid_one_in_each_valid_vector(case):
    headers = case["headers"]
    ours = signing.signature_header([case["secret"]], headers["webhook-id"], headers["webhook-timestamp"],
                                    case["payload"])
    assert ours in headers["webhook-signature"].split(" ")


@needs_vectors
@pytest.mark.parametrize("case", _cases("secret_errors"), ids=_ids(_cases("secret_errors")))
def test_empty_secrets_are_refused(case):
    with pytest.raises(EmptyWebhookSecretError):
        signing.sign(case["secret"], "msg_1", 1614265330, "{}")


@needs_vectors
@pytest.mark.parametrize("timestamp", _cases("sign_timestamp_errors_php"))
def test_non_integer_timestamps_are_refused(timestamp):
    with pytest.raises(ValueError):
        signing.sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_1", timestamp, "{}")


@needs_vectors
def test_spec_example_signature_header_parses_into_both_entries():
    example = VECTORS["spec_example_headers"]
    entries = [entry.partition(",") for entry in example["webhook-signature"].split()]
    assert [v for v, _, _ in entries] == ["v1", "v1a"]
    # The specification's example body is minified JSON, the same form event_body produces.
    body = example["signed_content_example_minified"].split(".", 2)[2]
    parsed = json.loads(body)
    occurred_at = datetime.fromisoformat(parsed["timestamp"])
    assert signing.event_body(parsed["type"], occurred_at, parsed["data"]) == body


def test_new_secret_is_whsec_base64_of_24_bytes():
    secrets = {signing.new_secret() for _ in range(50)}
    assert len(secrets) == 50
    for s in secrets:
        assert s.startswith("whsec_")
        assert len(base64.b64decode(s.removeprefix("whsec_"), validate=True)) == 24


def test_delivery_headers_verify_with_the_reference_verifier_for_each_secret():
    current, previous = signing.new_secret(), signing.new_secret()
    data = {"webhook_id": "wh_1", "message": "hi"}
    body = signing.event_body("webhook.test", datetime(2026, 11, 29, 12, 0), data)
    headers = signing.delivery_headers([current, previous], "msg_abc", body)
    assert headers["webhook-id"] == "msg_abc" and headers["content-type"] == "application/json"
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (current, previous):
        assert StandardWebhook(secret).verify(body, headers)["data"]["message"] == "hi"
    with pytest.raises(WebhookVerificationError):
        StandardWebhook(signing.new_secret()).verify(body, headers)


def test_event_body_is_compact_utc_and_stable():
    body = signing.event_body("x", datetime(2026, 1, 2, 3, 4, 5, 600000), {"b": 1, "a": "é"})
    assert body == '{"type":"x","timestamp":"2026-01-02T03:04:05.600000Z","data":{"b":1,"a":"é"}}'
    assert signing.timestamp_seconds("1614265330") == 1614265330
    with pytest.raises(ValueError):
        signing.signature_header([], "msg_1", 1, "{}")
