"""The chipwatch API and the webhook dispatcher in one process, as a service runs them.

Used by the crash test as a real process to SIGKILL.  Settings come from ``CHIPWATCH_*`` variables;
arguments: ``PORT LEASE_S POLL_INTERVAL_S``.
"""

from __future__ import annotations

import asyncio
import sys

import uvicorn

from chipwatch.app import create_app
from chipwatch.config import get_settings
from chipwatch.webhooks.jobs import start_dispatcher


async def main(port: int, lease_s: float, poll_interval_s: float) -> None:
    settings = get_settings()
    dispatcher = await start_dispatcher(settings, lease_s=lease_s, poll_interval_s=poll_interval_s)
    config = uvicorn.Config(create_app(scheduler=False), host="127.0.0.1", port=port, log_level="warning")
    try:
        await uvicorn.Server(config).serve()
    finally:
        await dispatcher.stop()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])))
