"""The race read models: the board and the scorecard, their verification levels, cache and ETag."""

PROBLEM = "application/problem+json"


def test_race_board(client):
    r = client.get("/v1/race")
    assert r.status_code == 200
    race = r.json()
    assert (
        race["signal_counts"]["open"]
        + race["signal_counts"].get("resolved", 0)
        + race["signal_counts"].get("pending_review", 0)
        == len(race["signals"])
        == 10
    )
    ids = {s["id"] for s in race["signals"]}
    assert {"jalapeno-104x-reproduced", "vera-rubin-scorecard", "jalapeno-100mw-2026"} <= ids
    headline = {h["id"]: h for h in race["headline_results"]}
    viral = [h for h in headline.values() if h["value"] == 104.3]
    assert len(viral) == 1
    assert viral[0]["verification"] == "witnessed" and viral[0]["reported_by"] == "openai"
    assert any(
        h["verification"] == "independent" and h["reported_by"] == "coreweave" for h in headline.values()
    )
    funding = race["latest_funding"]
    dates = [f["announced_on"] for f in funding if f["announced_on"]]
    assert dates == sorted(dates, reverse=True)
    assert any(f["vendor"] == "xiwang" and f["post_money_valuation"] == 20e9 for f in funding)


def test_scorecard_jalapeno_vs_gb300(client):
    r = client.get("/v1/race/scorecard", params={"chip": "jalapeno", "baseline": "gb300"})
    assert r.status_code == 200
    card = r.json()
    assert card["independently_verified"] is False
    assert "independent" not in card["verification_levels"]
    models = {m["model"]: m for m in card["models"]}
    r1 = models["deepseek-r1"]["single_user_speed"]
    speed = [e for e in r1 if e["value"] == 700]
    assert speed and speed[0]["baseline_value"] == 169
    assert speed[0]["ratio_to_baseline"] == round(700 / 169, 3)
    assert speed[0]["verification"] == "witnessed"
    assert speed[0]["reported_by"] == "openai" and speed[0]["witnessed_by"] == "semianalysis"
    assert speed[0]["source"]["name"]
    kimi_iso = models["kimi-k2-5"]["iso_interactivity_throughput"]
    assert any(
        e["value"] == 9 and e["comparator"] == "gt" and e["interactivity_tok_s_user"] == 100 for e in kimi_iso
    )
    per_kw = models["gpt-oss-120b"]["per_kw_ratio"]
    assert any(e["value_min"] == 1.5 and e["value_max"] == 1.9 for e in per_kw)
    # A GB200-only comparison (the 53.7x iso-speed figure) does not belong on the GB300 card.
    assert not any(
        e["value"] == 53.7
        for m in card["models"]
        for slot in m.values()
        if isinstance(slot, list)
        for e in slot
    )


def test_scorecard_refuses_unknown_chip(client):
    r = client.get("/v1/race/scorecard", params={"chip": "no-such-chip"})
    assert r.status_code == 422 and r.headers["content-type"].startswith(PROBLEM)
    assert "chip" in r.json()["detail"]
    assert client.get("/v1/race/scorecard").status_code == 422


def test_cached_reads_follow_writes_at_once(client, admin_headers):
    before = client.get("/v1/race/scorecard", params={"chip": "jalapeno", "baseline": "gb300"}).json()
    rid = next(e["id"] for m in before["models"] for e in m["single_user_speed"] if e["value"] == 700)
    r = client.patch(
        f"/v1/results/{rid}",
        json={"verification": "independent", "reproduced_by": "coreweave"},
        headers=admin_headers,
    )
    assert r.status_code == 200, r.text
    after = client.get("/v1/race/scorecard", params={"chip": "jalapeno", "baseline": "gb300"}).json()
    entry = next(e for m in after["models"] for e in m["single_user_speed"] if e["id"] == rid)
    assert entry["verification"] == "independent"
    assert "independent" in after["verification_levels"]


def test_etag_and_304(client, admin_headers):
    first = client.get("/v1/race")
    etag = first.headers["etag"]
    again = client.get("/v1/race", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    # A write that leaves the board as it was keeps the ETag; one that changes it does not.
    client.patch("/v1/chips/jalapeno", json={"status": "volume"}, headers=admin_headers)
    assert client.get("/v1/race", headers={"If-None-Match": etag}).status_code == 304
    headline = first.json()["headline_results"][0]
    client.patch(f"/v1/results/{headline['id']}", json={"notes": "revised"}, headers=admin_headers)
    changed = client.get("/v1/race", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert changed.json()["headline_results"][0]["notes"] == "revised"


def test_cached_board_still_needs_the_read_token(client, monkeypatch):
    from chipwatch.config import get_settings

    assert client.get("/v1/race").status_code == 200
    assert client.get("/v1/signals").status_code == 200  # both answers are now cached
    monkeypatch.setenv("CHIPWATCH_READ_TOKEN", "reader")
    get_settings.cache_clear()
    for path in ("/v1/race", "/v1/signals"):
        denied = client.get(path)
        assert denied.status_code == 401
        assert denied.headers["content-type"].startswith("application/problem+json")
        assert client.get(path, headers={"Authorization": "Bearer reader"}).status_code == 200


def test_query_variants_are_cached_apart(client):
    everything = client.get("/v1/signals").json()["items"]
    page = client.get("/v1/signals", params={"limit": 3}).json()
    assert [s["id"] for s in page["items"]] == [s["id"] for s in everything[:3]]
    assert page["next_cursor"]
    again = client.get("/v1/signals", params={"limit": 3}).json()
    assert again == page
    bad = client.get("/v1/signals", params={"status": "maybe"})
    assert bad.status_code == 422
