"""``chipwatch serve``: the port is bound before anything starts, then uvicorn serves the API on it.

Binding first means a port in use is one line and a non-zero exit, before the scheduler has checked a
single feed; uvicorn binding it itself would fail only after the app's start-up (scheduler included)
had run.
"""

from __future__ import annotations

import logging
import socket

import uvicorn
from uvicorn.supervisors import Multiprocess

from chipwatch.config import Settings
from chipwatch.logs import log_config

log = logging.getLogger("chipwatch.serve")
LISTEN_BACKLOG = 2048  # uvicorn's default


class CannotListen(RuntimeError):
    """The address cannot be bound; ``str(exc)`` is one line naming it and the reason."""


def base_url(host: str, port: int) -> str:
    """``http://host:port``, with an IPv6 address in brackets."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening; raises :class:`CannotListen`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except (OSError, OverflowError) as exc:
        sock.close()
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CannotListen(f"cannot listen on {base_url(host, port)}: {reason}") from exc
    return sock


def serve(settings: Settings, *, host: str, port: int, workers: int = 1) -> bool:
    """Bind ``host:port``, then serve ``chipwatch.app:create_served_app`` on it until stopped (SIGINT,
    SIGTERM).

    Returns False when the app failed to start (its start-up raised); raises :class:`CannotListen`
    before anything starts when the address cannot be bound. With ``workers`` > 1 uvicorn runs that
    many processes on the one socket.
    """
    sock = listen(host, port)
    config = uvicorn.Config(
        "chipwatch.app:create_served_app",
        factory=True,
        workers=workers,
        log_config=log_config(settings),
        log_level=None,
        access_log=settings.access_log,
        proxy_headers=bool(settings.forwarded_allow_ips),
        forwarded_allow_ips=settings.forwarded_allow_ips,
    )
    what = "API and scheduled jobs" if settings.scheduler_enabled else "API only"
    log.info("listening on %s (%s, %d worker process%s)", base_url(host, port), what, workers,
             "es" if workers > 1 else "")
    try:
        if workers > 1:
            Multiprocess(config, sockets=[sock]).run()
            return True
        server = uvicorn.Server(config)
        server.run(sockets=[sock])
        return server.started
    finally:
        sock.close()
