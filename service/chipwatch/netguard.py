"""SSRF guard shared by feed fetching and webhook delivery.

A URL is refused when its scheme is not http/https or when its host resolves to any address that is
not a public unicast address: loopback, private (RFC 1918 / ULA), link-local (including the cloud
metadata address 169.254.169.254), multicast, reserved, unspecified, shared/CGNAT space (100.64/10),
or an IPv6 form that embeds one of those (IPv4-mapped, 6to4, NAT64). The address rule is off when the
caller passes ``allow_private=True`` (``CHIPWATCH_ALLOW_PRIVATE_NETWORKS=1``: tests and local demos);
the scheme rule always applies.

Checking a name and then letting the HTTP library resolve it again would allow DNS rebinding (the
second answer can differ from the first). :class:`GuardedTransport` therefore resolves once, checks
every address, and connects the socket to a checked address; the URL, the ``Host`` header and TLS SNI
keep the original host name, so certificates are still verified against it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import select
import socket
import ssl
import time
from collections.abc import Iterable
from urllib.parse import urlsplit

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = frozenset({"http", "https"})

# Ranges that Python's ``is_private``/``is_global`` do not (all) cover in every 3.11 patch release.
_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")  # RFC 6598 shared address space
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052: last 32 bits are IPv4
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: local-use translation

# One part of an inet_aton-style IPv4 literal: hex (0x..), octal (leading 0) or decimal.
_IPV4_PART = re.compile(r"^(0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$")


class BlockedAddressError(ValueError):
    """The URL's scheme or one of its host's addresses is not allowed; the message says which."""


class UnsupportedURLError(BlockedAddressError):
    """The URL is malformed, has no host, or uses a scheme other than http/https."""


class HostResolutionError(OSError):
    """The host name did not resolve to any address (DNS failure or no A/AAAA record)."""


def blocked_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` must not be contacted, as a short phrase (``"loopback"``...), or None if it is public.

    IPv6 addresses that carry an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``, 6to4 ``2002::/16``,
    NAT64 ``64:ff9b::/96``) are judged by the embedded IPv4 address, because that is where the packets
    end up.
    """
    if isinstance(ip, ipaddress.IPv6Address):
        embedded: ipaddress.IPv4Address | None = None
        form = ""
        if ip.ipv4_mapped is not None:
            embedded, form = ip.ipv4_mapped, "IPv4-mapped"
        elif ip.sixtofour is not None:
            embedded, form = ip.sixtofour, "6to4"
        elif ip in _NAT64_WELL_KNOWN:
            embedded, form = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), "NAT64"
        if embedded is not None:
            inner = blocked_reason(embedded)
            return f"{form} {inner} ({embedded})" if inner else None
        if ip in _NAT64_LOCAL:
            return "local-use NAT64"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "shared (CGNAT)"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "not globally routable"
    return None


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address written literally in ``host``, or None when ``host`` is a name.

    Accepts standard IPv4/IPv6 text (brackets and an IPv6 zone are tolerated) and the legacy
    ``inet_aton`` forms that browsers and C resolvers also accept: one to four parts, each decimal,
    octal (leading ``0``) or hex (``0x``), the last part filling the remaining bytes. So ``2130706433``,
    ``0x7f.1``, ``017700000001`` and ``127.1`` are all 127.0.0.1. Parsing these here, rather than relying
    on the platform resolver, makes the verdict the same on every libc.
    """
    text = host.strip().strip("[]")
    if not text:
        return None
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        pass
    parts = text.rstrip(".").split(".") if text != "." else []
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.match(p) for p in parts):
        return None
    values = []
    for p in parts:
        if p[:2].lower() == "0x":
            values.append(int(p[2:] or "0", 16))
        elif len(p) > 1 and p.startswith("0"):
            values.append(int(p, 8))
        else:
            values.append(int(p))
    last_bits = 8 * (5 - len(parts))
    if any(v > 255 for v in values[:-1]) or values[-1] >= 1 << last_bits:
        return None
    number = 0
    for v in values[:-1]:
        number = (number << 8) | v
    number = (number << last_bits) | values[-1]
    return ipaddress.IPv4Address(number)


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (literal addresses without DNS), in resolver order, deduplicated.

    Raises :class:`HostResolutionError` when the name does not resolve.
    """
    literal = parse_ip_literal(host)
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise HostResolutionError(f"cannot resolve host {host!r}: {exc}") from exc
    addresses: list[IPAddress] = []
    for family, _type, _proto, _canon, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise HostResolutionError(f"host {host!r} has no IPv4 or IPv6 address")
    return addresses


def check_host(host: str, port: int, *, allow_private: bool) -> list[IPAddress]:
    """Resolve ``host`` and return its addresses if all of them may be contacted.

    Raises :class:`BlockedAddressError` naming the first refused address and why, or
    :class:`HostResolutionError` when the name does not resolve. Refusing the host when *any*
    address is internal (not just the first) stops a name that mixes public and internal answers.
    """
    if not host:
        raise UnsupportedURLError("URL has no host")
    addresses = resolve_host(host, port)
    if allow_private:
        return addresses
    for ip in addresses:
        reason = blocked_reason(ip)
        if reason is not None:
            shown = "" if str(ip) == host.strip("[]") else f" (resolves to {ip})"
            raise BlockedAddressError(
                f"refusing to connect to {host}{shown}: {reason} address; "
                "set CHIPWATCH_ALLOW_PRIVATE_NETWORKS=1 to allow internal targets"
            )
    return addresses


def split_url(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an http(s) URL.

    Raises :class:`UnsupportedURLError` (a :class:`BlockedAddressError`) for a malformed URL, a missing
    host or a scheme other than http/https.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise UnsupportedURLError(f"invalid URL {url!r}: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise UnsupportedURLError(f"URL scheme {scheme or '(none)'!r} is not allowed; use http or https")
    host = parts.hostname or ""
    if not host:
        raise UnsupportedURLError(f"URL {url!r} has no host")
    return scheme, host, port or (443 if scheme == "https" else 80)


def check_url(url: str, *, allow_private: bool) -> list[IPAddress]:
    """Check ``url`` for the SSRF rule and return the addresses its host resolves to.

    Raises :class:`BlockedAddressError` (a ``ValueError``) when, unless ``allow_private``, any resolved
    address is internal (see :func:`blocked_reason`), or as its subclass :class:`UnsupportedURLError`
    when the URL is malformed or its scheme is not http/https (checked even with ``allow_private``);
    :class:`HostResolutionError` (an ``OSError``) when the host does not resolve. Blocking: use
    :func:`acheck_url` from async code.
    """
    _scheme, host, port = split_url(url)
    return check_host(host, port, allow_private=allow_private)


async def acheck_url(url: str, *, allow_private: bool) -> list[IPAddress]:
    """:func:`check_url` with the DNS lookup run in a worker thread so the event loop is not blocked."""
    _scheme, host, port = split_url(url)
    if parse_ip_literal(host) is not None:
        return check_host(host, port, allow_private=allow_private)
    return await asyncio.to_thread(check_host, host, port, allow_private=allow_private)


class HostChecks:
    """The verdicts of :func:`check_host` for each (host, port), kept for ``ttl_s`` seconds.

    A pass over thousands of feeds on a few hundred hosts would otherwise resolve a host (in a worker
    thread) for every fetch, and again for every new connection. Keeping a verdict is as safe as
    making it each time: a connection only ever goes to an address that was checked, so a name that
    changes its answer meanwhile (DNS rebinding) still reaches only the checked address; a refusal or
    a failed lookup is kept as well, and raised again (a new exception of the same class and message).
    ``ttl_s`` (default 60 s) is about the shortest DNS time-to-live in common use.
    """

    def __init__(self, *, allow_private: bool, ttl_s: float = 60.0) -> None:
        self.allow_private = allow_private
        self.ttl_s = ttl_s
        self._verdicts: dict[tuple[str, int], tuple[float, list[IPAddress] | Exception]] = {}
        self._lookups: dict[tuple[str, int], asyncio.Future[list[IPAddress] | Exception]] = {}

    async def check(self, host: str, port: int) -> list[IPAddress]:
        """:func:`check_host`'s answer for ``host`` and ``port``, from the last ``ttl_s`` seconds if
        there is one; raises what it raises. Fetches asking at the same time share one lookup, run in
        a worker thread."""
        key = (host.lower(), port)
        kept = self._verdicts.get(key)
        if kept is not None and kept[0] > time.monotonic():
            verdict = kept[1]
        else:
            lookup = self._lookups.get(key)
            if lookup is None:
                lookup = self._lookups[key] = asyncio.ensure_future(self._look_up(key, host, port))
            verdict = await asyncio.shield(lookup)  # one waiter cancelled does not cancel the others'
        if isinstance(verdict, Exception):
            raise type(verdict)(str(verdict))
        return verdict

    async def _look_up(self, key: tuple[str, int], host: str, port: int) -> list[IPAddress] | Exception:
        verdict: list[IPAddress] | Exception
        try:
            if parse_ip_literal(host) is not None:  # no lookup: no thread
                verdict = check_host(host, port, allow_private=self.allow_private)
            else:
                verdict = await asyncio.to_thread(check_host, host, port, allow_private=self.allow_private)
        except (BlockedAddressError, HostResolutionError) as exc:
            verdict = exc
        finally:
            del self._lookups[key]
        if len(self._verdicts) >= 10_000:  # a bound, not an eviction policy: start afresh
            self._verdicts.clear()
        self._verdicts[key] = (time.monotonic() + self.ttl_s, verdict)
        return verdict

    async def check_url(self, url: str) -> list[IPAddress]:
        """:func:`acheck_url` for ``url``, through the kept verdicts of its host."""
        _scheme, host, port = split_url(url)
        return await self.check(host, port)


def _is_readable(sock: socket.socket | None) -> bool:
    """True when a read on ``sock`` would not block (data or end of stream waiting), or it is gone."""
    if sock is None or sock.fileno() < 0:
        return True
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class _PooledStream(httpcore.AsyncNetworkStream):
    """A connection's stream whose idle-connection probe costs one ``poll`` and nothing else.

    httpcore asks every pooled connection "is_readable" (a server that closed an idle connection
    leaves it readable) each time a request joins or leaves the pool, so a pool of 16 connections
    answers that question a dozen times per request. The asyncio stream underneath looks up the
    socket's peer name (a system call) before each poll; this wrapper keeps the socket from the
    start instead. Every other call goes to the wrapped stream unchanged.
    """

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket: socket.socket | None = inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Up to ``max_bytes`` from the wrapped stream."""
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """``buffer`` to the wrapped stream."""
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        """Close the wrapped stream."""
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """The wrapped stream's TLS stream (over the same socket), wrapped in turn."""
        return _PooledStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> object:
        """``is_readable`` from the kept socket; anything else from the wrapped stream."""
        if info == "is_readable":
            return _is_readable(self._socket)
        return self._inner.get_extra_info(info)


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """httpcore backend (asyncio) that resolves, checks and then connects to a checked address.

    ``connect_tcp`` receives the URL's host name; the TLS layer above it is later given the same host
    name for SNI and certificate checks, so only the socket's destination is pinned.
    """

    def __init__(
        self,
        *,
        allow_private: bool,
        inner: httpcore.AsyncNetworkBackend | None = None,
        checks: HostChecks | None = None,
    ) -> None:
        self._allow_private = allow_private
        self._inner = inner or httpcore.AnyIOBackend()
        self._checks = checks

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """A TCP stream to a checked address of ``host`` (any address when private networks are allowed)."""
        return _PooledStream(await self._connect(host, port, timeout, local_address, socket_options))

    async def _connect(
        self,
        host: str,
        port: int,
        timeout: float | None,
        local_address: str | None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None,
    ) -> httpcore.AsyncNetworkStream:
        if self._allow_private:
            return await self._inner.connect_tcp(
                host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
            )
        if self._checks is not None and not self._checks.allow_private:
            addresses = await self._checks.check(host, port)
        elif parse_ip_literal(host) is not None:
            addresses = check_host(host, port, allow_private=False)
        else:
            addresses = await asyncio.to_thread(check_host, host, port, allow_private=False)
        # Try each checked address in resolver order; if none answers, the last failure is raised.
        *others, last = addresses
        for ip in others:
            try:
                return await self._inner.connect_tcp(
                    str(ip), port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout):
                continue
        return await self._inner.connect_tcp(
            str(last), port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Always refused: a feed or webhook target is never a local socket."""
        raise BlockedAddressError("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        """The inner backend's sleep (httpcore's retry back-off uses it)."""
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """An ``httpx.AsyncHTTPTransport`` whose connections go only to addresses that passed the guard.

    Proxies from the environment are not used (a proxy would make the proxy, not the target, the
    checked address). ``allow_private=True`` restores plain behaviour. ``checks`` (a :class:`HostChecks`
    for the same ``allow_private``) keeps each host's verdict for a while instead of resolving the host
    for every new connection.
    """

    def __init__(
        self,
        *,
        allow_private: bool,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits = httpx.Limits(max_connections=100, max_keepalive_connections=20),
        http1: bool = True,
        http2: bool = False,
        retries: int = 0,
        checks: HostChecks | None = None,
    ) -> None:
        # The parent's constructor is not called: it would build a second pool (and SSL context) only
        # for it to be replaced. The parent's request methods use nothing but ``self._pool``.
        self.allow_private = allow_private
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=http1,
            http2=http2,
            retries=retries,
            network_backend=GuardedNetworkBackend(allow_private=allow_private, checks=checks),
        )


__all__ = [
    "ALLOWED_SCHEMES",
    "BlockedAddressError",
    "GuardedNetworkBackend",
    "GuardedTransport",
    "HostChecks",
    "HostResolutionError",
    "UnsupportedURLError",
    "IPAddress",
    "acheck_url",
    "blocked_reason",
    "check_host",
    "check_url",
    "parse_ip_literal",
    "resolve_host",
    "split_url",
]
