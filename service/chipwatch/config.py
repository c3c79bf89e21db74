"""One typed settings object for the whole service (environment prefix ``CHIPWATCH_``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_RETRY_SCHEDULE_S = (0, 5, 300, 1800, 7200, 18000, 36000, 36000)


class Settings(BaseSettings):
    """Service settings, read from ``CHIPWATCH_*`` environment variables and an optional ``.env``."""

    model_config = SettingsConfigDict(env_prefix="CHIPWATCH_", env_file=".env", extra="ignore")

    data_dir: Path = Path("data")
    database_url: str | None = None  # default: sqlite file under data_dir
    admin_token: str | None = None
    read_token: str | None = None
    metrics_token: str | None = None  # /metrics only; else the read token guards it, if set
    secret_keys: str | None = None  # Fernet keys, comma-separated, newest first; else <data_dir>/secret_key
    allow_private_networks: bool = False
    scheduler_enabled: bool = True
    log_format: str = Field(default="text", pattern="^(text|json)$")
    log_level: str = "INFO"
    access_log: bool = False  # one log line per HTTP request served (logger uvicorn.access)

    fetch_timeout_s: float = 20.0
    fetch_max_bytes: int = 15 * 1024 * 1024
    fetch_concurrency: int = 16
    fetch_per_host_limit: int = 2
    fetch_max_redirects: int = 5
    default_check_interval_s: int = 3600
    min_check_interval_s: int = 300
    max_check_interval_s: int = 86400
    check_batch_size: int = 50
    # A claim (feed check, webhook delivery) lasts this long and is renewed every third of it while its
    # holder works, so a dead worker's claims lapse within this time and are picked up at its next poll.
    claim_lease_s: float = Field(default=30.0, gt=0)
    # Request bodies over this many bytes answer 413; a route may declare its own cap (kit.request_limits).
    request_max_bytes: int = Field(default=1024 * 1024, gt=0)

    webhook_timeout_s: float = 15.0
    webhook_retry_schedule_s: str = ",".join(str(s) for s in DEFAULT_RETRY_SCHEDULE_S)
    webhook_disable_after_s: int = 5 * 86400
    webhook_concurrency: int = 64
    webhook_per_endpoint_concurrency: int = 4

    deadline_warning_days: int = 14

    # Pages: failed /login attempts allowed per client address in any sliding minute (then 429).
    login_attempts_per_minute: int = Field(default=10, gt=0)
    # Pages: the origins (scheme://host[:port], comma-separated) admin forms may be posted from. Unset,
    # a form's Origin must match the request's Host header; set it behind a proxy that rewrites Host.
    public_origins: str | None = None
    # The proxies (addresses, comma-separated, or *) whose X-Forwarded-For and X-Forwarded-Proto are
    # believed. Unset, no one's are: a client could otherwise name any address it likes and so escape
    # the per-address login throttle (uvicorn on its own trusts every client on 127.0.0.1).
    forwarded_allow_ips: str | None = None

    @field_validator("database_url")
    @classmethod
    def _blank_is_none(cls, v: str | None) -> str | None:
        return v or None

    @property
    def resolved_database_url(self) -> str:
        """The SQLAlchemy URL in use: ``database_url`` or ``sqlite:///<data_dir>/chipwatch.db``."""
        if self.database_url:
            url = self.database_url
            # psycopg 3 is the only PostgreSQL driver we ship.
            if url.startswith("postgresql://") or url.startswith("postgres://"):
                url = "postgresql+psycopg://" + url.split("://", 1)[1]
            return url
        return f"sqlite:///{(self.data_dir / 'chipwatch.db').as_posix()}"

    @property
    def retry_schedule_s(self) -> list[float]:
        """Webhook retry delays in seconds, one per attempt (the first is usually 0)."""
        try:
            values = [float(x) for x in self.webhook_retry_schedule_s.split(",") if x.strip()]
        except ValueError as exc:
            raise ValueError(
                f"CHIPWATCH_WEBHOOK_RETRY_SCHEDULE_S must be comma-separated seconds: {exc}"
            ) from exc
        if not values or any(v < 0 for v in values):
            raise ValueError("CHIPWATCH_WEBHOOK_RETRY_SCHEDULE_S needs at least one non-negative delay")
        return values


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings (cached; tests call ``get_settings.cache_clear()``)."""
    return Settings()
