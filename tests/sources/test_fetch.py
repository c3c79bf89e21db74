"""Fetching against real local servers: validators, caching, redirects, limits, hostile servers, SSRF."""

from __future__ import annotations

import asyncio
import gzip
import re
import socket
import struct
import threading
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from werkzeug.wrappers import Request, Response

from chipwatch import USER_AGENT, netguard
from chipwatch.config import Settings
from chipwatch.kit.retry_after import parse_retry_after
from chipwatch.sources.errors import FeedParseError, UnsafeXMLError
from chipwatch.sources.fetch import FetchResult, fetch_feed, make_client, parse_max_age
from chipwatch.sources.parse import parse_feed

FEED = (
    b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Local</title>'
    b"<item><title>Groq ships LPU v2</title><link>https://example.com/lpu</link></item></channel></rss>"
)
NOW = datetime(2026, 9, 1, tzinfo=UTC)


@pytest.fixture
def httpserver(httpserver_ipv4):
    """pytest-httpserver bound to 127.0.0.1 (the plugin's default host is "localhost")."""
    return httpserver_ipv4


def settings(**overrides) -> Settings:
    values = {"allow_private_networks": True, "fetch_timeout_s": 5.0}
    values.update(overrides)
    return Settings(**values)


def fetch(url: str, cfg: Settings | None = None, **kwargs) -> FetchResult:
    cfg = cfg or settings()

    async def go() -> FetchResult:
        async with make_client(cfg) as client:
            return await fetch_feed(client, url, settings=cfg, **kwargs)

    return asyncio.run(go())


# --------------------------------------------------------------------------------------------------
# Ordinary responses


def test_ok_fetch_returns_body_headers_and_validators(httpserver):
    httpserver.expect_request("/feed.xml").respond_with_data(
        FEED,
        content_type="application/rss+xml; charset=utf-8",
        headers={
            "ETag": '"v1"',
            "Last-Modified": "Tue, 25 Aug 2026 10:00:00 GMT",
            "Cache-Control": "max-age=900",
        },
    )
    result = fetch(httpserver.url_for("/feed.xml"))
    assert result.status == "ok"
    assert result.http_status == 200
    assert result.body == FEED
    assert result.final_url == result.url == httpserver.url_for("/feed.xml")
    assert result.headers["content-type"] == "application/rss+xml; charset=utf-8"
    assert result.etag == '"v1"'
    assert result.last_modified == "Tue, 25 Aug 2026 10:00:00 GMT"
    assert result.max_age_s == 900
    assert result.retry_after_s is None
    assert result.permanent_redirect_to is None
    assert result.error is None
    assert 0 < result.elapsed_s < 5
    request, _ = httpserver.log[0]
    assert request.headers["User-Agent"] == USER_AGENT
    assert request.headers["Accept-Encoding"] == "gzip, deflate"
    assert "If-None-Match" not in request.headers
    parsed = parse_feed(result.body, url=result.final_url, headers=result.headers, now=NOW)
    assert parsed.entries[0].title == "Groq ships LPU v2"


def test_conditional_get_304_keeps_or_updates_validators(httpserver):
    httpserver.expect_request("/feed.xml", headers={"If-None-Match": '"v1"'}).respond_with_data(
        "", status=304, headers={"ETag": '"v1"'}
    )
    result = fetch(
        httpserver.url_for("/feed.xml"), etag='"v1"', last_modified="Tue, 25 Aug 2026 10:00:00 GMT"
    )
    assert result.status == "not_modified"
    assert result.http_status == 304
    assert result.body is None
    assert result.etag == '"v1"'
    # The server sent no Last-Modified with the 304: the stored one is kept.
    assert result.last_modified == "Tue, 25 Aug 2026 10:00:00 GMT"
    request, _ = httpserver.log[0]
    assert request.headers["If-None-Match"] == '"v1"'
    assert request.headers["If-Modified-Since"] == "Tue, 25 Aug 2026 10:00:00 GMT"


def test_new_validators_replace_old_ones(httpserver):
    httpserver.expect_request("/feed.xml").respond_with_data(FEED, headers={"ETag": 'W/"v2"'})
    result = fetch(
        httpserver.url_for("/feed.xml"), etag='"v1"', last_modified="Mon, 24 Aug 2026 10:00:00 GMT"
    )
    assert result.status == "ok"
    assert result.etag == 'W/"v2"'
    assert result.last_modified == "Mon, 24 Aug 2026 10:00:00 GMT"


@pytest.mark.parametrize(
    ("status", "message"),
    [(404, "HTTP 404 NOT FOUND"), (410, "HTTP 410 GONE"), (500, "HTTP 500 INTERNAL SERVER ERROR")],
)
def test_http_errors_are_results(httpserver, status, message):
    httpserver.expect_request("/feed.xml").respond_with_data("nope", status=status)
    result = fetch(httpserver.url_for("/feed.xml"), etag='"old"')
    assert result.status == "error"
    assert result.http_status == status
    assert result.error == message
    assert result.body is None
    assert result.etag == '"old"'


def test_429_retry_after_seconds(httpserver):
    httpserver.expect_request("/feed.xml").respond_with_data(
        "slow down", status=429, headers={"Retry-After": "120"}
    )
    result = fetch(httpserver.url_for("/feed.xml"))
    assert result.status == "error"
    assert result.http_status == 429
    assert result.retry_after_s == 120
    assert "429" in result.error


def test_503_retry_after_http_date(httpserver):
    when = datetime.now(UTC) + timedelta(hours=1)
    httpserver.expect_request("/feed.xml").respond_with_data(
        "maintenance", status=503, headers={"Retry-After": format_datetime(when, usegmt=True)}
    )
    result = fetch(httpserver.url_for("/feed.xml"))
    assert result.http_status == 503
    assert 3500 < result.retry_after_s <= 3600


def test_cookies_are_not_kept_between_fetches(httpserver):
    httpserver.expect_request("/a").respond_with_data(FEED, headers={"Set-Cookie": "track=1; Path=/"})
    httpserver.expect_request("/b").respond_with_data(FEED)
    cfg = settings()

    async def go():
        async with make_client(cfg) as client:
            await fetch_feed(client, httpserver.url_for("/a"), settings=cfg)
            await fetch_feed(client, httpserver.url_for("/b"), settings=cfg)

    asyncio.run(go())
    assert "Cookie" not in httpserver.log[1][0].headers


def test_make_client_configuration():
    client = make_client(settings(allow_private_networks=False))
    try:
        assert client.follow_redirects is False
        assert client.headers["User-Agent"] == USER_AGENT
        assert isinstance(client._transport, netguard.GuardedTransport)
        assert client._transport.allow_private is False
    finally:
        asyncio.run(client.aclose())


# --------------------------------------------------------------------------------------------------
# Redirects


def chain(httpserver, statuses: list[int], final: bytes = FEED) -> str:
    """Serve /r0 -> /r1 -> ... with the given redirect statuses, then the feed; return the first URL."""
    for i, status in enumerate(statuses):
        target = f"/r{i + 1}" if i % 2 == 0 else httpserver.url_for(f"/r{i + 1}")  # relative and absolute
        httpserver.expect_request(f"/r{i}").respond_with_data("", status=status, headers={"Location": target})
    httpserver.expect_request(f"/r{len(statuses)}").respond_with_data(final, headers={"ETag": '"end"'})
    return httpserver.url_for("/r0")


def test_permanent_chain_reports_the_new_url(httpserver):
    result = fetch(chain(httpserver, [301, 308, 301]))
    assert result.status == "ok"
    assert result.redirects == 3
    assert result.final_url == httpserver.url_for("/r3")
    assert result.permanent_redirect_to == httpserver.url_for("/r3")
    assert result.etag == '"end"'
    assert result.body == FEED


def test_a_temporary_hop_means_no_permanent_redirect(httpserver):
    result = fetch(chain(httpserver, [301, 302, 308]))
    assert result.status == "ok"
    assert result.final_url == httpserver.url_for("/r3")
    assert result.permanent_redirect_to is None


def test_five_hops_are_followed_six_are_too_many(httpserver):
    assert fetch(chain(httpserver, [307] * 5)).status == "ok"
    httpserver.clear()
    result = fetch(chain(httpserver, [301] * 6))
    assert result.status == "error"
    assert result.error == "too many redirects (more than 5)"
    assert result.permanent_redirect_to is None
    assert len(httpserver.log) == 6  # the seventh URL was never requested


def test_redirect_without_location_is_an_error(httpserver):
    httpserver.expect_request("/feed.xml").respond_with_data("", status=302)
    result = fetch(httpserver.url_for("/feed.xml"))
    assert result.error == "HTTP 302 redirect without a Location header"


def test_redirect_to_another_scheme_is_refused(httpserver):
    httpserver.expect_request("/feed.xml").respond_with_data(
        "", status=301, headers={"Location": "file:///etc/passwd"}
    )
    result = fetch(httpserver.url_for("/feed.xml"))
    assert result.status == "error"
    assert "scheme 'file' is not allowed" in result.error


# --------------------------------------------------------------------------------------------------
# Size limits and content encodings


def test_oversize_body_with_content_length_is_refused_before_reading(httpserver):
    httpserver.expect_request("/big").respond_with_data(b"x" * 5000)
    result = fetch(httpserver.url_for("/big"), settings(fetch_max_bytes=1024))
    assert result.status == "error"
    assert result.error == "response larger than 1024 bytes (Content-Length: 5000)"
    assert result.body is None


def test_oversize_streamed_body_is_cut_off(httpserver):
    sent = []

    def handler(request: Request) -> Response:
        def chunks() -> Iterator[bytes]:
            for _ in range(1000):
                sent.append(1)
                yield b"y" * 512

        return Response(chunks(), content_type="application/xml")  # chunked, no Content-Length

    httpserver.expect_request("/stream").respond_with_handler(handler)
    result = fetch(httpserver.url_for("/stream"), settings(fetch_max_bytes=4096))
    assert result.status == "error"
    assert result.error == "response larger than 4096 bytes"


def test_gzip_and_deflate_bodies_are_decoded(httpserver):
    httpserver.expect_request("/gz").respond_with_data(
        gzip.compress(FEED), headers={"Content-Encoding": "gzip"}
    )
    httpserver.expect_request("/zlib").respond_with_data(
        zlib.compress(FEED), headers={"Content-Encoding": "deflate"}
    )
    raw = zlib.compressobj(wbits=-15)
    raw_deflate = raw.compress(FEED) + raw.flush()
    httpserver.expect_request("/raw").respond_with_data(raw_deflate, headers={"Content-Encoding": "deflate"})
    two_members = gzip.compress(FEED[:50]) + gzip.compress(FEED[50:])
    httpserver.expect_request("/multi").respond_with_data(two_members, headers={"Content-Encoding": "gzip"})
    for path in ("/gz", "/zlib", "/raw", "/multi"):
        result = fetch(httpserver.url_for(path))
        assert (path, result.status, result.body) == (path, "ok", FEED)


def gzip_bomb(megabytes: int) -> bytes:
    """A valid single-stream gzip body that inflates to ``megabytes`` MiB of zeros.

    Each MiB is compressed once and ended with a full flush, which resets the compressor, so the same
    segment can be repeated; the trailer carries the real CRC and length.
    """
    chunk = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    segment = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    final_block = compressor.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(megabytes):
        crc = zlib.crc32(chunk, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, (megabytes << 20) & 0xFFFFFFFF)
    return header + segment * megabytes + final_block + trailer


def test_gzip_bomb_is_never_inflated_into_memory(httpserver):
    bomb = gzip_bomb(300)
    assert len(bomb) < 400_000  # ~300 KB on the wire for 300 MiB inflated
    httpserver.expect_request("/bomb").respond_with_data(bomb, headers={"Content-Encoding": "gzip"})
    cfg = settings()  # the default 15 MiB cap
    tracemalloc.start()
    try:
        result = fetch(httpserver.url_for("/bomb"), cfg)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "error"
    assert result.error == f"response larger than {cfg.fetch_max_bytes} bytes"
    assert peak < 64 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"


def test_says_gzip_but_is_not(httpserver):
    httpserver.expect_request("/fake").respond_with_data(FEED, headers={"Content-Encoding": "gzip"})
    result = fetch(httpserver.url_for("/fake"))
    assert result.status == "error"
    assert result.error.startswith("response body is not valid gzip (Content-Encoding: gzip)")


def test_truncated_gzip_is_an_error(httpserver):
    httpserver.expect_request("/cut").respond_with_data(
        gzip.compress(FEED)[:-12], headers={"Content-Encoding": "gzip"}
    )
    assert fetch(httpserver.url_for("/cut")).error == "response body ended inside the gzip stream (truncated)"


@pytest.mark.parametrize(("encoding", "message"), [("br", "'br'"), ("gzip, gzip", "more than one coding")])
def test_unsupported_encodings_are_errors(httpserver, encoding, message):
    httpserver.expect_request("/enc").respond_with_data(FEED, headers={"Content-Encoding": encoding})
    result = fetch(httpserver.url_for("/enc"))
    assert result.status == "error"
    assert message in result.error


def test_wrong_charset_declared_is_recovered_and_reported(httpserver):
    body = (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Caf\xe9</title>'
        "<item><title>M\xfcnchen AI</title></item></channel></rss>"
    ).encode("latin-1")
    httpserver.expect_request("/cs").respond_with_data(
        body, content_type="application/rss+xml; charset=utf-8"
    )
    result = fetch(httpserver.url_for("/cs"))
    feed = parse_feed(result.body, url=result.final_url, headers=result.headers, now=NOW)
    assert feed.title == "Café"
    assert feed.entries[0].title == "München AI"
    assert any("declared as utf-8" in w for w in feed.warnings)


# --------------------------------------------------------------------------------------------------
# Hostile documents over HTTP


def test_billion_laughs_over_http_is_refused_by_the_parser(httpserver):
    lol = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    )
    body = f'<?xml version="1.0"?>\n<!DOCTYPE rss [\n{lol}\n]>\n'
    body += '<rss version="2.0"><channel><title>&lol9;</title></channel></rss>'
    httpserver.expect_request("/lol").respond_with_data(body)
    result = fetch(httpserver.url_for("/lol"))
    assert result.status == "ok"
    started = time.monotonic()
    with pytest.raises(UnsafeXMLError, match="nested entity expansion"):
        parse_feed(result.body, url=result.final_url, headers=result.headers, now=NOW)
    assert time.monotonic() - started < 1


def test_xxe_over_http_never_reads_local_files(httpserver):
    body = (
        '<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY xxe SYSTEM "file:///etc/passwd">\n]>\n'
        '<rss version="2.0"><channel><title>t</title><item><title>&xxe;</title></item></channel></rss>'
    )
    httpserver.expect_request("/xxe").respond_with_data(body)
    result = fetch(httpserver.url_for("/xxe"))
    with pytest.raises(FeedParseError) as info:
        parse_feed(result.body, url=result.final_url, headers=result.headers, now=NOW)
    assert "external entity &xxe;" in str(info.value)
    assert "root:" not in str(info.value)


# --------------------------------------------------------------------------------------------------
# Servers that misbehave at the socket level


# ``silent_server`` (accepts, never answers) comes from tests/sources/conftest.py.


@pytest.fixture
def trickle_server() -> Iterator[str]:
    """A server that sends headers, then one body byte every 50 ms for as long as the client stays."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    sock.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                try:
                    conn.recv(65536)
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: 100000\r\n\r\n"
                    )
                    while not stop.is_set():
                        conn.sendall(b"<")
                        time.sleep(0.05)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/feed.xml"
    finally:
        stop.set()
        thread.join(timeout=2)
        sock.close()


def test_never_answering_server_hits_the_total_timeout(silent_server):
    result = fetch(silent_server, settings(fetch_timeout_s=1.0))
    assert result.status == "error"
    assert result.error.startswith("timed out")
    assert 0.9 <= result.elapsed_s < 2.5


def test_trickling_server_hits_the_total_timeout(trickle_server):
    # Every read succeeds quickly, so only a deadline over the whole exchange can stop this.
    result = fetch(trickle_server, settings(fetch_timeout_s=1.0))
    assert result.status == "error"
    assert result.error == "timed out after 1 s (total limit)"
    assert result.http_status == 200
    assert 0.9 <= result.elapsed_s < 2.5


def test_connection_refused_is_a_readable_error():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    result = fetch(f"http://127.0.0.1:{port}/")
    assert result.status == "error"
    assert result.error.startswith("connection failed: Connection refused")


def test_dns_failure_is_a_readable_error():
    result = fetch("http://no-such-host.invalid/feed.xml", settings(allow_private_networks=False))
    assert result.status == "error"
    assert result.error.startswith("DNS lookup failed: cannot resolve host 'no-such-host.invalid'")


def test_tls_failure_is_a_readable_error(httpserver):
    # Speaking TLS to a plain HTTP server fails the handshake.
    result = fetch(f"https://127.0.0.1:{httpserver.port}/feed.xml")
    assert result.status == "error"
    assert result.error.startswith(("TLS error", "connection failed", "HTTP protocol error"))


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://exa mple.com/", "DNS lookup failed"),
        ("http://[::1/", "invalid URL: invalid URL 'http://[::1/'"),
        ("not a url", "invalid URL: URL scheme '(none)' is not allowed"),
        ("", "invalid URL"),
        ("ftp://example.com/feed", "invalid URL: URL scheme 'ftp' is not allowed"),
    ],
)
def test_malformed_urls_are_errors_not_exceptions(url, message):
    result = fetch(url)
    assert result.status == "error"
    assert result.error.startswith(message)
    assert "Unknown error" not in result.error


# --------------------------------------------------------------------------------------------------
# SSRF guard


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("http://127.0.0.1:{port}/feed.xml", "loopback"),
        ("http://[::ffff:127.0.0.1]:{port}/feed.xml", "IPv4-mapped loopback"),
        ("http://2130706433:{port}/feed.xml", "loopback"),
        ("http://0x7f.1:{port}/feed.xml", "loopback"),
        ("http://localhost:{port}/feed.xml", "loopback"),
        ("http://10.0.0.1/feed.xml", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ],
)
def test_internal_targets_are_refused_without_traffic(httpserver, template, reason):
    httpserver.expect_request("/feed.xml").respond_with_data(FEED)
    url = template.format(port=httpserver.port)
    result = fetch(url, settings(allow_private_networks=False))
    assert result.status == "error"
    assert result.error.startswith("blocked: refusing to connect")
    assert reason in result.error
    assert result.http_status is None
    assert httpserver.log == []
    assert result.elapsed_s < 1  # refused before any connection attempt (10.0.0.1 would hang)


@pytest.fixture
def local_server_is_public(monkeypatch):
    """Treat 127.0.0.1 (the test server) as a public address; every other address keeps its verdict."""
    real = netguard.blocked_reason
    local = netguard.parse_ip_literal("127.0.0.1")
    monkeypatch.setattr(netguard, "blocked_reason", lambda ip: None if ip == local else real(ip))


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.1/admin", "private"),
        ("http://127.0.0.2:{port}/feed.xml", "loopback"),
        ("http://0x7f000002:{port}/feed.xml", "loopback"),
    ],
)
def test_redirect_to_an_internal_address_is_refused_at_the_hop(
    httpserver, local_server_is_public, target, reason
):
    location = target.format(port=httpserver.port)
    httpserver.expect_request("/feed.xml").respond_with_data("", status=302, headers={"Location": location})
    result = fetch(httpserver.url_for("/feed.xml"), settings(allow_private_networks=False))
    assert result.status == "error"
    assert result.error.startswith("blocked: refusing to connect")
    assert reason in result.error
    assert result.final_url == location
    assert result.redirects == 1
    assert len(httpserver.log) == 1  # the first, allowed request only


def test_allowed_public_fetch_goes_through_the_guard(httpserver, local_server_is_public):
    httpserver.expect_request("/feed.xml").respond_with_data(FEED)
    result = fetch(httpserver.url_for("/feed.xml"), settings(allow_private_networks=False))
    assert result.status == "ok"
    assert result.body == FEED


def test_a_client_resolves_each_host_once_for_its_checks_and_connections(
    httpserver, local_server_is_public, monkeypatch
):
    """Three feeds on one host through one client (so one pass): one lookup serves the check before
    each request and the new connections alike; the socket still goes to the checked address."""
    httpserver.expect_request(re.compile(r"^/feed/\d$")).respond_with_data(FEED)
    lookups: list[str] = []

    def resolve(host, port):
        lookups.append(host)
        return [netguard.parse_ip_literal("127.0.0.1")]

    monkeypatch.setattr(netguard, "resolve_host", resolve)
    cfg = settings(allow_private_networks=False)

    async def go() -> list[FetchResult]:
        async with make_client(cfg) as client:
            urls = [f"http://feeds.test:{httpserver.port}/feed/{i}" for i in range(3)]
            return list(await asyncio.gather(*(fetch_feed(client, u, settings=cfg) for u in urls)))

    results = asyncio.run(go())
    assert [r.status for r in results] == ["ok", "ok", "ok"]
    assert lookups == ["feeds.test"]
    assert len(httpserver.log) == 3


def test_a_refused_host_stays_refused_for_every_fetch_of_a_client(httpserver, monkeypatch):
    """A kept refusal is raised again for each fetch (same reason), without asking DNS again."""
    lookups: list[str] = []

    def resolve(host, port):
        lookups.append(host)
        return [netguard.parse_ip_literal("10.0.0.7")]

    monkeypatch.setattr(netguard, "resolve_host", resolve)
    cfg = settings(allow_private_networks=False)

    async def go() -> list[FetchResult]:
        async with make_client(cfg) as client:
            return [await fetch_feed(client, f"http://inside.test/feed/{i}", settings=cfg) for i in range(2)]

    results = asyncio.run(go())
    assert [r.status for r in results] == ["error", "error"]
    assert results[0].error == results[1].error
    assert results[0].error.startswith("blocked: refusing to connect to inside.test (resolves to 10.0.0.7)")
    assert lookups == ["inside.test"]
    assert httpserver.log == []


def test_allow_private_argument_overrides_settings_for_the_pre_check(httpserver):
    httpserver.expect_request("/feed.xml").respond_with_data(FEED)
    result = fetch(
        httpserver.url_for("/feed.xml"), settings(allow_private_networks=True), allow_private=False
    )
    assert result.status == "error"
    assert "loopback" in result.error
    assert httpserver.log == []


# --------------------------------------------------------------------------------------------------
# Header helpers


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("max-age=600", 600),
        ("public, max-age=3600, must-revalidate", 3600),
        ('max-age="60"', 60),
        ("no-store, max-age=600", None),
        ("no-cache", None),
        ("max-age=abc", None),
        (None, None),
    ],
)
def test_parse_max_age(value, expected):
    assert parse_max_age(value) == expected


def test_parse_retry_after():
    now = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
    assert parse_retry_after("30", now=now) == 30
    assert parse_retry_after("Tue, 01 Sep 2026 12:05:00 GMT", now=now) == 300
    assert parse_retry_after("Tue, 01 Sep 2026 11:00:00 GMT", now=now) == 0
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after("", now=now) is None
    assert parse_retry_after("-5", now=now) is None


# --------------------------------------------------------------------------------------------------
# Connection reuse


@pytest.fixture
def keepalive_server() -> Iterator[tuple[str, list[int]]]:
    """An HTTP/1.1 keep-alive server: /304 answers 304, /301 redirects to /304; records client ports."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    ports: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            ports.append(self.client_address[1])
            if self.path == "/301":
                self.send_response(301)
                self.send_header("Location", "/304")
                self.send_header("Content-Length", "9")
                self.end_headers()
                self.wfile.write(b"moved ...")
                return
            self.send_response(304)
            self.send_header("ETag", '"v1"')
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", ports
    finally:
        server.shutdown()
        server.server_close()


def test_304s_and_redirects_leave_the_connection_reusable(keepalive_server):
    base, ports = keepalive_server
    cfg = settings()

    async def go() -> list[FetchResult]:
        async with make_client(cfg) as client:
            return [
                await fetch_feed(client, f"{base}{path}", etag='"v1"', settings=cfg)
                for path in ("/304", "/304", "/301", "/304")
            ]

    results = asyncio.run(go())
    assert [r.status for r in results] == ["not_modified"] * 4
    assert len(ports) == 5
    assert len(set(ports)) == 1, "every request after the first reuses the same connection"


# --------------------------------------------------------------------------------------------------
# Kept-alive connections closed by the server


def _closing_server(answers_per_connection: list[int]):
    """An HTTP server on 127.0.0.1 whose n-th connection answers ``answers_per_connection[n]`` requests
    (kept alive), then reads the next request and closes without answering it."""
    accepted: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        n = len(accepted)
        accepted.append(n)
        budget = answers_per_connection[n] if n < len(answers_per_connection) else 0
        try:
            for _ in range(budget):
                await reader.readuntil(b"\r\n\r\n")
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(FEED), FEED))
                await writer.drain()
            await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            pass
        writer.close()

    return serve, accepted


def test_a_request_on_a_connection_the_server_just_closed_is_sent_once_more():
    """The server's idle timeout ends as the second request goes out on the kept connection: that
    request is sent again on a new connection and the fetch succeeds."""
    serve, accepted = _closing_server([1, 1])
    cfg = settings()

    async def go() -> list[FetchResult]:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/feed.xml"
        try:
            async with make_client(cfg) as client:
                return [await fetch_feed(client, url, settings=cfg) for _ in range(2)]
        finally:
            server.close()

    results = asyncio.run(go())
    assert [(r.status, r.body) for r in results] == [("ok", FEED), ("ok", FEED)]
    assert accepted == [0, 1]


def test_a_server_that_never_answers_is_asked_twice_and_fails():
    serve, accepted = _closing_server([])
    cfg = settings()

    async def go() -> FetchResult:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/feed.xml"
        try:
            async with make_client(cfg) as client:
                return await fetch_feed(client, url, settings=cfg)
        finally:
            server.close()

    result = asyncio.run(go())
    assert result.status == "error"
    assert result.error == "HTTP protocol error: Server disconnected without sending a response."
    assert accepted == [0, 1]
