"""Links in feeds: the canonical form used to recognise one story behind differently written URLs, and
relative links resolved against the document. Pure.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

# Query parameters that only track the click and never select content (dropped by normalise_link).
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "rb_clickid",
    }
)
TRACKING_PREFIXES = ("utm_",)


def normalise_link(url: str) -> str:
    """A canonical form of ``url`` for de-duplication.

    Lower-cases scheme and host, drops the default port (80/443), the fragment, ``utm_*`` and other
    click-tracking parameters (``TRACKING_PARAMS``), sorts the remaining query parameters, makes an
    empty path ``/`` and removes a trailing slash from any other path. Strings that are not absolute
    URLs come back stripped but otherwise unchanged.
    """
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    if not parts.scheme or not parts.netloc:
        return text
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and not ((scheme == "http" and port == 80) or (scheme == "https" and port == 443)):
        host = f"{host}:{port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        host = f"{userinfo}@{host}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in TRACKING_PARAMS and not k.lower().startswith(TRACKING_PREFIXES)
    ]
    return urlunsplit((scheme, host, path, urlencode(sorted(query)), ""))


def absolute_http(link: str | None, base: str) -> str | None:
    """``link`` resolved against ``base`` if the result is an http(s) URL, else None."""
    if not link or not isinstance(link, str):
        return None
    try:
        resolved = urljoin(base, link.strip())
        scheme = urlsplit(resolved).scheme.lower()
    except ValueError:
        return None
    return resolved if scheme in ("http", "https") else None


__all__ = ["TRACKING_PARAMS", "TRACKING_PREFIXES", "absolute_http", "normalise_link"]
