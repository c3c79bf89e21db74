"""Fetching feeds over HTTP: conditional GET, manual redirects, SSRF guard, size and time limits.

One shared ``httpx.AsyncClient`` (see :func:`make_client`) serves every fetch so connections are pooled.
:func:`fetch_feed` never raises for anything the network or the server does; every outcome is a
:class:`FetchResult` with ``status`` ``ok``, ``not_modified`` or ``error`` and a readable ``error``.

Limits, and why:

* Redirects are followed by hand (at most ``fetch_max_redirects`` hops) so that each hop's target is
  checked by :mod:`chipwatch.netguard` before any connection, and so a chain made only of permanent
  redirects (301/308) can be reported for the caller to update the stored URL (RFC 9110 15.4).
* The body is decompressed here, incrementally and with an output limit, and abandoned as soon as the
  decoded size passes ``fetch_max_bytes``: a small gzip "bomb" that inflates to hundreds of MB never
  reaches memory. (httpx's own decoders inflate a whole network chunk at once, which for zeros can be
  ~1000x the chunk size.)
* One deadline (``fetch_timeout_s``) covers the whole exchange, redirects and body included, so a server
  that never answers or trickles a byte at a time cannot hold a worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import logging
import os
import re
import time
import weakref
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

import httpx

from chipwatch import USER_AGENT, netguard
from chipwatch.config import Settings, get_settings
from chipwatch.kit.retry_after import RETRY_AFTER_STATUSES, parse_retry_after

FetchStatus = Literal["ok", "not_modified", "error"]

logger = logging.getLogger(__name__)

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
PERMANENT_REDIRECTS = frozenset({301, 308})

# Only encodings this module can inflate with an output limit are offered.
ACCEPT_ENCODING = "gzip, deflate"
ACCEPT = (
    "application/atom+xml, application/rss+xml, application/rdf+xml, application/feed+json, "
    "application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, */*;q=0.5"
)


@dataclass(slots=True)
class FetchResult:
    """The outcome of one fetch (after redirects).

    ``etag``/``last_modified`` are the validators to store for the next conditional GET: the final
    response's, or the ones passed in when it sent none. ``max_age_s`` is ``Cache-Control: max-age``
    (seconds) of a successful response; ``retry_after_s`` is ``Retry-After`` (seconds from now) on a
    429/503. ``permanent_redirect_to`` is the final URL when every hop was a 301/308 and the fetch
    succeeded, else None. ``elapsed_s`` is wall time in seconds.
    """

    status: FetchStatus
    url: str
    final_url: str
    http_status: int | None = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    max_age_s: int | None = None
    retry_after_s: float | None = None
    permanent_redirect_to: str | None = None
    redirects: int = 0
    error: str | None = None
    elapsed_s: float = 0.0


# The host verdicts of each client made by make_client, shared by its transport (new connections) and
# the check before each request (see _exchange); dropped with the client.
_HOST_CHECKS: weakref.WeakKeyDictionary[httpx.AsyncClient, netguard.HostChecks] = weakref.WeakKeyDictionary()


def make_client(settings: Settings | None = None) -> httpx.AsyncClient:
    """The shared HTTP client for feed fetches (close it with ``await client.aclose()``).

    Connections go through :class:`chipwatch.netguard.GuardedTransport` (pinned to checked addresses
    unless ``allow_private_networks``); redirects are not followed automatically (:func:`fetch_feed`
    does it, checking each hop); cookies are never stored, so one feed cannot set state seen by
    another; environment proxies are ignored (a proxy would hide the real destination from the guard).
    Per-host politeness (``fetch_per_host_limit``) is left to the scheduler, which knows the hosts.
    Each host's guard verdict is kept for a minute (:class:`chipwatch.netguard.HostChecks`), for the
    check before each request and for new connections alike, so a pass resolves a host once, not
    once or twice per feed on it.
    """
    settings = settings or get_settings()
    checks = netguard.HostChecks(allow_private=settings.allow_private_networks)
    limits = httpx.Limits(
        max_connections=settings.fetch_concurrency,
        max_keepalive_connections=settings.fetch_concurrency,
        keepalive_expiry=30.0,
    )
    no_cookies = http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    client = httpx.AsyncClient(
        transport=netguard.GuardedTransport(
            allow_private=settings.allow_private_networks, limits=limits, checks=checks
        ),
        follow_redirects=False,
        timeout=httpx.Timeout(settings.fetch_timeout_s),
        headers={"User-Agent": USER_AGENT, "Accept": ACCEPT, "Accept-Encoding": ACCEPT_ENCODING},
        cookies=no_cookies,
        trust_env=False,
    )
    _HOST_CHECKS[client] = checks
    return client


class FetchSlots:
    """Concurrency limits for fetches: ``fetch_concurrency`` overall and ``fetch_per_host_limit`` per host.

    The host slot is taken first, so a fetch waiting for a busy host does not hold one of the overall
    slots that fetches to other hosts could use.
    """

    def __init__(self, settings: Settings) -> None:
        self._overall = asyncio.Semaphore(max(1, settings.fetch_concurrency))
        self._per_host = max(1, settings.fetch_per_host_limit)
        self._hosts: dict[str, asyncio.Semaphore] = {}

    @asynccontextmanager
    async def hold(self, url: str) -> AsyncIterator[None]:
        """Hold one slot for a fetch of ``url`` for the duration of the block."""
        host = (urlsplit(url).hostname or "").lower()
        semaphore = self._hosts.get(host)
        if semaphore is None:
            semaphore = self._hosts[host] = asyncio.Semaphore(self._per_host)
        async with semaphore, self._overall:
            yield


class _FetchFailed(Exception):
    """Internal: ends a fetch with ``status='error'`` and this message."""


# Largest piece inflated per zlib call: bounds the transient copy on top of the body buffer.
_INFLATE_STEP = 256 * 1024


class _Inflater:
    """Incremental gzip/deflate decoder that never produces more output than it is allowed."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        # gzip: wbits 31 (gzip header). deflate: RFC 9110 says zlib-wrapped, but some servers send raw
        # deflate; start with the zlib wrapper and switch on the first error, as browsers do.
        self._wbits = 31 if coding in ("gzip", "x-gzip") else 15
        self._d = zlib.decompressobj(self._wbits)
        self._started = False

    def feed(self, data: bytes, sink: bytearray, limit: int) -> None:
        """Inflate ``data`` into ``sink``, stopping as soon as ``sink`` holds ``limit`` bytes."""
        while data and len(sink) < limit:
            try:
                piece = self._d.decompress(data, min(_INFLATE_STEP, limit - len(sink)))
            except zlib.error as exc:
                if self._wbits == 15 and not self._started:
                    self._wbits = -15
                    self._d = zlib.decompressobj(-15)
                    continue
                raise _FetchFailed(
                    f"response body is not valid {self.coding} (Content-Encoding: {self.coding}): {exc}"
                ) from exc
            self._started = True
            sink += piece
            data = self._d.unconsumed_tail
            if self._d.eof:
                rest = self._d.unused_data
                # Concatenated gzip members are one stream (RFC 1952 2.2); trailing padding is ignored.
                if self._wbits == 31 and rest.strip(b"\x00"):
                    self._d = zlib.decompressobj(31)
                    data = rest
                else:
                    data = b""

    def finish(self) -> None:
        """Raise if the compressed stream ended early (a truncated body is not silently accepted)."""
        if self._started and not self._d.eof:
            raise _FetchFailed(f"response body ended inside the {self.coding} stream (truncated)")


async def _read_body(response: httpx.Response, max_bytes: int) -> bytes:
    """The decoded body, or :class:`_FetchFailed` once it would exceed ``max_bytes``."""
    too_large = f"response larger than {max_bytes} bytes"
    encoding = response.headers.get("content-encoding", "").strip().lower()
    codings = [c.strip() for c in encoding.split(",") if c.strip() and c.strip() != "identity"]
    if len(codings) > 1:
        raise _FetchFailed(f"unsupported Content-Encoding {encoding!r} (more than one coding)")
    inflater: _Inflater | None = None
    if codings:
        if codings[0] not in ("gzip", "x-gzip", "deflate"):
            raise _FetchFailed(f"unsupported Content-Encoding {codings[0]!r}")
        inflater = _Inflater(codings[0])
    else:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise _FetchFailed(f"{too_large} (Content-Length: {declared})")
    body = bytearray()
    raw_total = 0
    async for chunk in response.aiter_raw():
        raw_total += len(chunk)
        if raw_total > max_bytes:
            raise _FetchFailed(too_large)
        if inflater is None:
            body += chunk
        else:
            # Allow one byte more than the cap, so that going over it is detectable.
            inflater.feed(chunk, body, max_bytes + 1)
        if len(body) > max_bytes:
            raise _FetchFailed(too_large)
    if inflater is not None:
        inflater.finish()
    return bytes(body)


# Redirects and 304s carry no body worth reading, or a short one; reading up to this much lets the
# connection go back to the pool (a response closed unread closes its connection, so every 304 would
# cost a new TCP and TLS handshake). A longer body is abandoned and the connection closed.
_DRAIN_LIMIT = 64 * 1024


async def _drain(response: httpx.Response) -> None:
    """Read and discard a short body so the connection can be reused; give up past ``_DRAIN_LIMIT``."""
    seen = 0
    async for chunk in response.aiter_raw():
        seen += len(chunk)
        if seen > _DRAIN_LIMIT:
            return


def parse_max_age(cache_control: str | None) -> int | None:
    """``max-age`` seconds from a Cache-Control header; None when absent, invalid or ``no-store``."""
    if not cache_control:
        return None
    directives = [d.strip().lower() for d in cache_control.split(",")]
    if "no-store" in directives:
        return None
    for directive in directives:
        m = re.fullmatch(r'max-age\s*=\s*"?(\d+)"?', directive)
        if m:
            return int(m.group(1))
    return None


def _root_os_error(exc: BaseException) -> OSError | None:
    """The innermost OSError with an errno behind a wrapped exception (e.g. ConnectionRefusedError)."""
    found = None
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 10:
        if isinstance(current, OSError) and current.errno is not None:
            found = current
        current = current.__cause__ or current.__context__
        seen += 1
    return found


def _describe(exc: BaseException) -> str:
    """A readable one-line reason for a network failure."""
    text = str(exc) or type(exc).__name__
    root = _root_os_error(exc)
    if root is not None and root is not exc and root.errno and root.errno > 0:
        # e.g. "Connection refused: Connect call failed ('192.0.2.1', 443)"
        meaning = os.strerror(root.errno)
        detail = root.strerror or text
        text = meaning if detail == meaning else f"{meaning}: {detail}"
    if isinstance(exc, netguard.UnsupportedURLError):
        return f"invalid URL: {text}"
    if isinstance(exc, netguard.BlockedAddressError):
        return f"blocked: {text}"
    if isinstance(exc, netguard.HostResolutionError):
        return f"DNS lookup failed: {text}"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__}): {text}"
    if isinstance(exc, httpx.ConnectError):
        lowered = text.lower()
        if "ssl" in lowered or "certificate" in lowered or "tls" in lowered:
            return f"TLS error: {text}"
        if "name or service not known" in lowered or "nodename nor servname" in lowered:
            return f"DNS lookup failed: {text}"
        return f"connection failed: {text}"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"HTTP protocol error: {text}"
    if isinstance(exc, (httpx.InvalidURL, httpx.UnsupportedProtocol)):
        return f"invalid URL: {text}"
    if isinstance(exc, httpx.HTTPError):
        return f"{type(exc).__name__}: {text}"
    return f"network error ({type(exc).__name__}): {text}"


# A server may close a kept-alive connection just as the next request goes out on it (its idle timeout,
# 5 s for Apache and uvicorn, ending at that moment): the request then fails before any answer, through
# no fault of the feed. A GET is safe to send again; once, on another connection.
_CLOSED_BEFORE_ANSWER = "Server disconnected without sending a response"


async def _send(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> httpx.Response:
    """The response to a GET of ``url`` with its body still to read (the caller closes it), sent again
    once when the connection was closed before any answer."""
    request = client.build_request("GET", url, headers=headers)
    try:
        return await client.send(request, stream=True)
    except httpx.RemoteProtocolError as exc:
        if not str(exc).startswith(_CLOSED_BEFORE_ANSWER):
            raise
        logger.debug("connection closed before an answer for %s; sending once more", url)
        return await client.send(request, stream=True)


@dataclass(slots=True)
class _Progress:
    url: str
    hops: int = 0
    all_permanent: bool = True
    http_status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)


async def fetch_feed(
    client: httpx.AsyncClient,
    url: str,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
    settings: Settings | None = None,
    allow_private: bool | None = None,
) -> FetchResult:
    """GET ``url`` as a conditional request and return what happened; never raises for network errors.

    ``etag``/``last_modified`` are the stored validators (sent as If-None-Match / If-Modified-Since).
    ``allow_private`` overrides ``settings.allow_private_networks`` for this fetch's pre-connection
    checks. Outcomes: 2xx -> ``ok`` with the decoded ``body``; 304 -> ``not_modified``; anything else
    (4xx/5xx, too many redirects, body over ``fetch_max_bytes``, bad Content-Encoding, blocked address,
    DNS/TLS/connection failure, total time over ``fetch_timeout_s``) -> ``error`` with a message.
    """
    settings = settings or get_settings()
    allow = settings.allow_private_networks if allow_private is None else allow_private
    progress = _Progress(url=url)
    started = time.monotonic()
    try:
        async with asyncio.timeout(settings.fetch_timeout_s):
            result = await _exchange(client, url, etag, last_modified, settings, allow, progress)
    except TimeoutError:
        message = f"timed out after {settings.fetch_timeout_s:g} s (total limit)"
        result = _failure(url, progress, etag, last_modified, message)
    result.elapsed_s = time.monotonic() - started
    return result


def _failure(
    url: str, progress: _Progress, etag: str | None, last_modified: str | None, message: str
) -> FetchResult:
    retry_after = None
    if progress.http_status in RETRY_AFTER_STATUSES:
        retry_after = parse_retry_after(progress.headers.get("retry-after"))
    return FetchResult(
        status="error",
        url=url,
        final_url=progress.url,
        http_status=progress.http_status,
        headers=progress.headers,
        etag=etag,
        last_modified=last_modified,
        retry_after_s=retry_after,
        redirects=progress.hops,
        error=message,
    )


async def _exchange(
    client: httpx.AsyncClient,
    url: str,
    etag: str | None,
    last_modified: str | None,
    settings: Settings,
    allow_private: bool,
    progress: _Progress,
) -> FetchResult:
    request_headers = {}
    if etag:
        request_headers["If-None-Match"] = etag
    if last_modified:
        request_headers["If-Modified-Since"] = last_modified
    checks = _HOST_CHECKS.get(client)
    if checks is not None and checks.allow_private:
        checks = None  # this fetch is guarded although the client's own verdicts are not
    try:
        while True:
            # The guard runs before any connection for this hop; the transport checks again at connect
            # time against the address it actually uses.
            if allow_private:
                netguard.split_url(progress.url)
            elif checks is not None:
                await checks.check_url(progress.url)
            else:
                await netguard.acheck_url(progress.url, allow_private=False)
            async with contextlib.aclosing(await _send(client, progress.url, request_headers)) as response:
                progress.http_status = response.status_code
                progress.headers = {k.lower(): v for k, v in response.headers.items()}
                status = response.status_code
                if status in REDIRECT_STATUSES:
                    location = response.headers.get("location", "").strip()
                    if not location:
                        raise _FetchFailed(f"HTTP {status} redirect without a Location header")
                    if progress.hops >= settings.fetch_max_redirects:
                        raise _FetchFailed(f"too many redirects (more than {settings.fetch_max_redirects})")
                    progress.hops += 1
                    progress.all_permanent = progress.all_permanent and status in PERMANENT_REDIRECTS
                    progress.url = str(response.url.join(location))
                    await _drain(response)
                    continue
                if status == 304:
                    await _drain(response)
                    return _success("not_modified", url, progress, None, etag, last_modified)
                if status >= 400:
                    reason = response.reason_phrase or ""
                    raise _FetchFailed(f"HTTP {status} {reason}".rstrip())
                if not 200 <= status < 300:
                    raise _FetchFailed(f"unexpected HTTP status {status}")
                body = await _read_body(response, settings.fetch_max_bytes)
                return _success("ok", url, progress, body, etag, last_modified)
    except _FetchFailed as exc:
        return _failure(url, progress, etag, last_modified, str(exc))
    except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, OSError, ValueError) as exc:
        # BlockedAddressError is a ValueError, HostResolutionError an OSError.
        return _failure(url, progress, etag, last_modified, _describe(exc))
    except Exception as exc:
        # A fetch must never take the worker down; keep the traceback for whoever reads the logs.
        logger.exception("unexpected error fetching %s", progress.url)
        return _failure(url, progress, etag, last_modified, f"unexpected error: {type(exc).__name__}: {exc}")


def _success(
    status: FetchStatus,
    url: str,
    progress: _Progress,
    body: bytes | None,
    etag: str | None,
    last_modified: str | None,
) -> FetchResult:
    headers = progress.headers
    return FetchResult(
        status=status,
        url=url,
        final_url=progress.url,
        http_status=progress.http_status,
        body=body,
        headers=headers,
        etag=headers.get("etag") or etag,
        last_modified=headers.get("last-modified") or last_modified,
        max_age_s=parse_max_age(headers.get("cache-control")),
        permanent_redirect_to=progress.url if progress.hops and progress.all_permanent else None,
        redirects=progress.hops,
    )


__all__ = [
    "FetchResult",
    "FetchSlots",
    "FetchStatus",
    "fetch_feed",
    "make_client",
    "parse_max_age",
]
