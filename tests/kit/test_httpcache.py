"""ETags, 304s and the LRU bound of the read cache."""

from __future__ import annotations

import asyncio
import threading
import time

from chipwatch.db import change_clock
from chipwatch.kit.httpcache import ReadCache, etag_matches, etag_response, strong_etag


def test_if_none_match_uses_weak_comparison_and_lists():
    tag = strong_etag(b"body")
    assert tag.startswith('"') and tag.endswith('"') and len(tag) == 26
    assert etag_matches(tag, tag)
    assert etag_matches(f'"other", W/{tag}', tag)
    assert etag_matches("*", tag)
    assert not etag_matches('"other"', tag)
    assert not etag_matches(None, tag) and not etag_matches("", tag)


def test_etag_response_answers_304_or_the_body():
    full = etag_response(None, b"<feed/>", media_type="application/atom+xml")
    assert full.status_code == 200 and full.body == b"<feed/>"
    assert full.headers["content-type"].startswith("application/atom+xml")
    assert full.headers["cache-control"] == "no-cache"
    again = etag_response(full.headers["etag"], b"<feed/>", media_type="application/atom+xml")
    assert again.status_code == 304 and again.body == b"" and again.headers["etag"] == full.headers["etag"]


def test_the_least_recently_used_entry_goes_first():
    cache = ReadCache(ttl_s=60, max_entries=3)
    for key in ("a", "b", "c"):
        cache.build_sync(key, lambda key=key: {"k": key})
    assert cache.fresh("a") is not None  # "a" is now the most recently used
    cache.build_sync("d", lambda: {"k": "d"})
    assert len(cache) == 3
    assert cache.fresh("b") is None
    assert all(cache.fresh(k) is not None for k in ("a", "c", "d"))


def test_a_write_makes_entries_stale_and_concurrent_misses_share_one_build():
    cache = ReadCache(ttl_s=60)
    calls = []

    def build():
        calls.append(1)
        return {"n": len(calls)}

    async def burst():
        return await asyncio.gather(*(cache.get("k", build) for _ in range(20)))

    answers = asyncio.run(burst())
    assert len(calls) == 1 and len({a for a in answers}) == 1
    change_clock.bump()
    assert cache.fresh("k") is None
    body, _ = asyncio.run(cache.get("k", build))
    assert body == b'{"n":2}'


def test_a_reader_after_a_write_never_gets_a_build_started_before_it():
    cache = ReadCache(ttl_s=60)
    state = {"value": "old"}
    started, release = threading.Event(), threading.Event()

    def slow_build():
        seen = state["value"]
        started.set()
        release.wait(5)
        return {"v": seen}

    async def scenario():
        before = asyncio.ensure_future(cache.get("k", slow_build))
        await asyncio.to_thread(started.wait, 5)
        state["value"] = "new"
        change_clock.bump()  # a write commits while the first build still runs
        after = asyncio.ensure_future(cache.get("k", lambda: {"v": state["value"]}))
        await asyncio.sleep(0.05)
        release.set()
        return await before, await after

    (old_body, _), (new_body, _) = asyncio.run(scenario())
    assert (old_body, new_body) == (b'{"v":"old"}', b'{"v":"new"}')
    # The older build finished last, and still did not replace the newer entry.
    assert cache.fresh("k")[0] == b'{"v":"new"}'


def test_an_entry_past_its_ttl_is_rebuilt_before_it_is_served():
    cache = ReadCache(ttl_s=0.05)
    calls = []

    def build():
        calls.append(1)
        return {"n": len(calls)}

    assert asyncio.run(cache.get("k", build))[0] == b'{"n":1}'
    time.sleep(0.1)
    assert asyncio.run(cache.get("k", build))[0] == b'{"n":2}'
