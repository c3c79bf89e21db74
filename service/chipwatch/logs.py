"""Logging set-up: plain text, or JSON lines when ``CHIPWATCH_LOG_FORMAT=json``.

Quiet by default: chipwatch's own INFO lines (a check's outcome, a worker starting) are kept, while the
libraries' per-event chatter is not: APScheduler's two lines per job run, uvicorn's start-up lines and
its access log (one line per request, on with ``CHIPWATCH_ACCESS_LOG=1``).
"""

from __future__ import annotations

import json
import logging
import logging.config
from datetime import UTC, datetime
from typing import Any

from chipwatch.config import Settings

_RESERVED = set(vars(logging.makeLogRecord({})))
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per line; structured keys passed with ``extra=`` (source_id, signal_id...) kept."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        payload.update(
            {k: v for k, v in vars(record).items() if k not in _RESERVED and not k.startswith("_")}
        )
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)


def log_config(settings: Settings) -> dict[str, Any]:
    """The :func:`logging.config.dictConfig` of the service: one stderr handler in the chosen format at
    ``settings.log_level``, libraries held at WARNING, the access log at INFO when it is on.

    uvicorn applies the same dictionary in each worker process it starts (``log_config``).
    """
    formatter: dict[str, Any] = (
        {"()": "chipwatch.logs.JsonFormatter"} if settings.log_format == "json" else {"format": TEXT_FORMAT}
    )
    quiet = {"level": "WARNING"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"chipwatch": formatter},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "chipwatch", "stream": "ext://sys.stderr"}
        },
        "root": {"handlers": ["stderr"], "level": settings.log_level.upper()},
        "loggers": {
            "httpx": quiet,
            "alembic": quiet,
            "apscheduler": quiet,
            "uvicorn": {**quiet, "handlers": [], "propagate": True},
            "uvicorn.error": {**quiet, "handlers": [], "propagate": True},
            "uvicorn.access": {
                "level": "INFO" if settings.access_log else "WARNING",
                "handlers": [],
                "propagate": True,
            },
        },
    }


def configure_logging(settings: Settings) -> None:
    """Install :func:`log_config` in this process."""
    logging.config.dictConfig(log_config(settings))
