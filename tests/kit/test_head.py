"""``HEAD`` is answered as ``GET`` is, without the body: status and headers alike."""

from __future__ import annotations


def test_head_answers_the_get_status_and_headers_without_a_body(client):
    for path in ("/healthz", "/v1/race", "/v1/signals/jalapeno-104x-reproduced", "/v1/signals.atom", "/"):
        get, head = client.get(path), client.head(path)
        assert head.status_code == get.status_code == 200, path
        assert head.content == b"", path
        assert head.headers["content-type"] == get.headers["content-type"], path
        assert head.headers["content-length"] == str(len(get.content)), path
    etag = client.get("/v1/signals/jalapeno-104x-reproduced").headers["etag"]
    cached = client.head("/v1/signals/jalapeno-104x-reproduced", headers={"if-none-match": etag})
    assert cached.status_code == 304 and cached.content == b""
    missing = client.head("/v1/chips/no-such-chip")
    assert missing.status_code == 404 and missing.content == b""
    assert client.head("/v1/imports/1/nothing").status_code == 404


def test_head_on_a_write_only_path_is_still_refused(client):
    assert client.head("/v1/signals/jalapeno-104x-reproduced/resolve").status_code == 405
