"""Failed-login throttling for the pages' ``/login`` form.

Each client address may fail ``login_attempts_per_minute`` times in any sliding minute (the ``limits``
library's moving window, in this process's memory); past that, ``/login`` answers 429 with Retry-After
without looking at the token, so guessing tokens through the form costs at least a minute per batch.
A successful login does not count. Several API replicas each keep their own window: the bound per
address is the per-replica figure times the replica count.
"""

from __future__ import annotations

import math
import time

from fastapi import Request
from limits import RateLimitItemPerMinute, storage, strategies


class LoginThrottle:
    """Counts failed logins per client address over a sliding minute."""

    def __init__(self, attempts_per_minute: int) -> None:
        self._item = RateLimitItemPerMinute(attempts_per_minute)
        self._limiter = strategies.MovingWindowRateLimiter(storage.MemoryStorage())

    def retry_after_s(self, request: Request) -> int | None:
        """Whole seconds until this client may try again, or ``None`` when it may try now."""
        key = _client_key(request)
        if self._limiter.test(self._item, key):
            return None
        reset_at = self._limiter.get_window_stats(self._item, key).reset_time
        return max(1, math.ceil(reset_at - time.time()))

    def failed(self, request: Request) -> None:
        """Count one failed attempt of this client."""
        self._limiter.hit(self._item, _client_key(request))


def _client_key(request: Request) -> str:
    # The peer address as the server saw it: a forwarded-for header is the client's to write, so it
    # cannot be the key (behind a proxy, run uvicorn with --forwarded-allow-ips to set the peer).
    return request.client.host if request.client else "unknown"


def throttle_of(request: Request, attempts_per_minute: int) -> LoginThrottle:
    """The app's throttle, made on first use (one per app, so test apps do not share windows)."""
    state = request.app.state
    throttle = getattr(state, "login_throttle", None)
    if throttle is None or throttle._item.amount != attempts_per_minute:
        throttle = state.login_throttle = LoginThrottle(attempts_per_minute)
    return throttle
