"""The SSRF guard: refused addresses, normalised host spellings, and the pinned transport."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket

import httpx
import pytest

from chipwatch import netguard
from chipwatch.netguard import BlockedAddressError, HostResolutionError, blocked_reason, check_url

ip = ipaddress.ip_address


@pytest.fixture
def httpserver(httpserver_ipv4):
    """pytest-httpserver bound to 127.0.0.1 (the plugin's default host is "localhost")."""
    return httpserver_ipv4


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("100.64.0.1", "shared (CGNAT)"),
        ("100.127.255.254", "shared (CGNAT)"),
        ("240.0.0.1", "private"),  # Python files 240/4 under is_private as well as is_reserved
        ("192.0.2.10", "private"),  # TEST-NET-1
        ("::ffff:127.0.0.1", "IPv4-mapped loopback (127.0.0.1)"),
        ("::ffff:10.1.2.3", "IPv4-mapped private (10.1.2.3)"),
        ("2002:7f00:1::", "6to4 loopback (127.0.0.1)"),
        ("2002:a9fe:a9fe::", "6to4 link-local (169.254.169.254)"),
        ("64:ff9b::7f00:1", "NAT64 loopback (127.0.0.1)"),
        ("64:ff9b::a9fe:a9fe", "NAT64 link-local (169.254.169.254)"),
        ("64:ff9b:1::1", "local-use NAT64"),
    ],
)
def test_internal_addresses_are_refused_with_the_reason(address, reason):
    assert blocked_reason(ip(address)) == reason


@pytest.mark.parametrize(
    "address",
    [
        "93.184.216.34",
        "8.8.8.8",
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",
        "2002:808:808::",
        "64:ff9b::808:808",
    ],
)
def test_public_addresses_pass(address):
    assert blocked_reason(ip(address)) is None


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0x7F000001", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("169.254.43518", "169.254.169.254"),
        ("127.0.0.1.", "127.0.0.1"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),
        ("fe80::1%eth0", "fe80::1"),
    ],
)
def test_numeric_host_spellings_are_normalised(host, expected):
    assert netguard.parse_ip_literal(host) == ip(expected)


@pytest.mark.parametrize("host", ["example.com", "256.1.1.1", "1.2.3.4.5", "08.1.1.1", "", "127.0.0.1x"])
def test_names_and_invalid_numbers_are_not_literals(host):
    assert netguard.parse_ip_literal(host) is None


def test_hex_zero_literal_is_the_unspecified_address():
    # "0x" is accepted by inet_aton as 0, so it must be judged as 0.0.0.0, not looked up as a name.
    assert netguard.parse_ip_literal("0x") == ip("0.0.0.0")


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://2130706433/", "resolves to 127.0.0.1"),
        ("http://0x7f.1/", "resolves to 127.0.0.1"),
        ("http://017700000001/", "resolves to 127.0.0.1"),
        ("http://[::ffff:127.0.0.1]/", "IPv4-mapped loopback"),
        ("http://10.0.0.1:8080/x", "private"),
        ("https://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1%25eth0]/", "link-local"),
        ("http://100.100.100.200/", "CGNAT"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://localhost:8000/", "resolves to 127.0.0.1"),
    ],
)
def test_check_url_refuses_internal_targets(url, fragment, monkeypatch):
    if "localhost" not in url:
        # Numeric hosts must be decided without asking the resolver at all.
        def no_dns(*args, **kwargs):
            raise AssertionError("numeric host sent to DNS")

        monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    with pytest.raises(BlockedAddressError) as info:
        check_url(url, allow_private=False)
    assert fragment in str(info.value)
    assert "CHIPWATCH_ALLOW_PRIVATE_NETWORKS" in str(info.value)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://127.0.0.1/", "ftp://example.com/", "//x/"])
def test_only_http_and_https_schemes(url):
    with pytest.raises(netguard.UnsupportedURLError, match="scheme"):
        check_url(url, allow_private=True)


def test_url_without_host_is_refused():
    with pytest.raises(BlockedAddressError, match="no host"):
        check_url("http:///path", allow_private=True)


def test_allow_private_allows_everything_and_returns_addresses():
    assert check_url("http://127.0.0.1:8080/feed", allow_private=True) == [ip("127.0.0.1")]
    assert check_url("http://0x7f.1/", allow_private=True) == [ip("127.0.0.1")]
    assert check_url("http://10.0.0.1/", allow_private=True) == [ip("10.0.0.1")]


def test_every_resolved_address_must_be_public(monkeypatch):
    # A name that answers with one public and one internal address is refused: the client could
    # connect to either.
    monkeypatch.setattr(
        netguard,
        "resolve_host",
        lambda host, port: [ip("93.184.216.34"), ip("10.0.0.7")],
    )
    with pytest.raises(BlockedAddressError, match=r"mixed\.test \(resolves to 10\.0\.0\.7\): private"):
        check_url("https://mixed.test/feed", allow_private=False)


def test_public_name_passes_and_returns_its_addresses(monkeypatch):
    monkeypatch.setattr(netguard, "resolve_host", lambda host, port: [ip("93.184.216.34")])
    assert check_url("https://example.test/feed", allow_private=False) == [ip("93.184.216.34")]


def test_unresolvable_host_is_a_resolution_error_not_a_block():
    with pytest.raises(HostResolutionError, match="cannot resolve host 'no-such-host.invalid'"):
        check_url("http://no-such-host.invalid/", allow_private=False)


def test_async_check_matches_sync_check():
    with pytest.raises(BlockedAddressError):
        asyncio.run(netguard.acheck_url("http://localhost/", allow_private=False))
    assert asyncio.run(netguard.acheck_url("http://127.0.0.1/", allow_private=True)) == [ip("127.0.0.1")]


def test_transport_connects_to_the_checked_address_not_a_second_lookup(httpserver, monkeypatch):
    """DNS rebinding: the name is resolved once and the socket goes to that checked address,
    while the URL (and so the Host header) keeps the name."""
    httpserver.expect_request("/feed").respond_with_data("hello")
    lookups = []

    def resolve(host, port):
        lookups.append(host)
        return [ip("127.0.0.1")]

    real_reason = netguard.blocked_reason
    monkeypatch.setattr(netguard, "resolve_host", resolve)
    # Treat the test server's address as public so the guarded path is exercised.
    monkeypatch.setattr(
        netguard, "blocked_reason", lambda a: None if a == ip("127.0.0.1") else real_reason(a)
    )

    async def go():
        transport = netguard.GuardedTransport(allow_private=False)
        async with httpx.AsyncClient(transport=transport) as client:
            return await client.get(f"http://rebind.test:{httpserver.port}/feed")

    response = asyncio.run(go())
    assert response.status_code == 200
    assert response.text == "hello"
    assert lookups == ["rebind.test"]
    request, _ = httpserver.log[0]
    assert request.headers["Host"] == f"rebind.test:{httpserver.port}"


def test_transport_refuses_internal_address_before_connecting(httpserver):
    async def go():
        transport = netguard.GuardedTransport(allow_private=False)
        async with httpx.AsyncClient(transport=transport) as client:
            await client.get(httpserver.url_for("/"))

    with pytest.raises(BlockedAddressError, match="loopback"):
        asyncio.run(go())
    assert httpserver.log == []


def test_transport_with_allow_private_behaves_normally(httpserver):
    httpserver.expect_request("/").respond_with_data("ok")

    async def go():
        async with httpx.AsyncClient(transport=netguard.GuardedTransport(allow_private=True)) as client:
            return await client.get(httpserver.url_for("/"))

    assert asyncio.run(go()).text == "ok"


def test_pooled_connection_closed_by_the_server_while_idle_is_replaced():
    """A server that closes a kept-alive connection between two requests: the pool sees the idle
    connection readable (end of stream), opens a new one, and the second request succeeds."""
    accepted: list[int] = []

    async def go():
        close_now = asyncio.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(1)
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok")
            await writer.drain()
            await close_now.wait()
            writer.close()  # closes the connection it promised to keep, once the client holds it idle

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        transport = netguard.GuardedTransport(allow_private=True)
        try:
            async with httpx.AsyncClient(transport=transport) as client:
                first = await client.get(f"http://127.0.0.1:{port}/a")
                [connection] = transport._pool.connections
                stream = connection._connection._network_stream
                idle_readable = stream.get_extra_info("is_readable")
                close_now.set()
                for _ in range(100):  # the close reaches the client socket within a moment
                    if stream.get_extra_info("is_readable"):
                        break
                    await asyncio.sleep(0.01)
                readable = stream.get_extra_info("is_readable")
                second = await client.get(f"http://127.0.0.1:{port}/b")
        finally:
            server.close()
            await server.wait_closed()
        return first, idle_readable, readable, second

    first, idle_readable, readable, second = asyncio.run(go())
    assert (first.status_code, first.text) == (200, "ok")
    assert (idle_readable, readable) == (False, True)
    assert (second.status_code, second.text) == (200, "ok")
    assert len(accepted) == 2


def test_pooled_connection_kept_open_is_not_readable_and_is_reused():
    accepted: list[int] = []

    async def go():
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(1)
            with contextlib.suppress(asyncio.IncompleteReadError):  # the client's close ends the loop
                while await reader.readuntil(b"\r\n\r\n"):
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    await writer.drain()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        transport = netguard.GuardedTransport(allow_private=True)
        try:
            async with httpx.AsyncClient(transport=transport) as client:
                texts = [(await client.get(f"http://127.0.0.1:{port}/a")).text]
                [connection] = transport._pool.connections
                await asyncio.sleep(0.05)
                stream = connection._connection._network_stream
                assert isinstance(stream, netguard._PooledStream)  # the probe that keeps its socket
                readable = stream.get_extra_info("is_readable")
                texts.append((await client.get(f"http://127.0.0.1:{port}/b")).text)
                return texts, readable, len(transport._pool.connections)
        finally:
            server.close()

    assert asyncio.run(go()) == (["ok", "ok"], False, 1)
    assert len(accepted) == 1
