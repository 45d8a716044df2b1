"""The Redis client and key names every distributed component shares."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry
from scrapy.settings import BaseSettings

#: Errors meaning "Redis is not there" (connection refused or lost, timeouts).
REDIS_DOWN_ERRORS: tuple[type[redis.exceptions.RedisError], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)
DEFAULT_PREFIX = "topics_crawler"


class RedisUnavailableError(RuntimeError):
    """Redis could not be reached; the message names the server and the cause."""


@dataclass(frozen=True)
class RedisKeys:
    """Names of the Redis keys of one distributed crawl: ``<REDIS_KEY_PREFIX>:<name>``."""

    prefix: str

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RedisKeys:
        return cls(settings.get("REDIS_KEY_PREFIX") or DEFAULT_PREFIX)

    @property
    def requests(self) -> str:
        return f"{self.prefix}:requests"

    @property
    def seen(self) -> str:
        return f"{self.prefix}:seen"

    @property
    def items(self) -> str:
        return f"{self.prefix}:items"

    def worker(self, worker_id: str) -> str:
        return f"{self.prefix}:worker:{worker_id}"

    @property
    def workers_pattern(self) -> str:
        return f"{self.prefix}:worker:*"

    def crawl_keys(self) -> tuple[str, ...]:
        """What one crawl leaves behind (deleted by the last worker of a finished crawl)."""
        return (self.requests, self.seen, self.items)


def redact(url: str) -> str:
    """``url`` without its password (for log lines)."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return url
    user = credentials.split(":", 1)[0]
    return f"{scheme}{sep}{user + ':***' if user else '***'}@{host}"


def redis_client(settings: BaseSettings) -> redis.Redis:
    """A client for ``REDIS_URL`` (bytes replies; ``REDIS_SOCKET_TIMEOUT``; short retries)."""
    url = settings.get("REDIS_URL")
    if not url:
        raise RedisUnavailableError("REDIS_URL is not set")
    timeout = settings.getfloat("REDIS_SOCKET_TIMEOUT", 10.0)
    return redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        health_check_interval=30,
        # Calls block the reactor: retry a blip briefly (< 0.5 s), then report Redis lost.
        retry=Retry(ExponentialBackoff(cap=0.2, base=0.05), retries=2),
    )


def connect(settings: BaseSettings) -> redis.Redis:
    """:func:`redis_client`, checked with a PING; :class:`RedisUnavailableError` if it fails."""
    client = redis_client(settings)
    try:
        client.ping()
    except REDIS_DOWN_ERRORS as exc:  # AuthenticationError is a ConnectionError
        raise RedisUnavailableError(
            f"cannot reach Redis at {redact(settings['REDIS_URL'])}: {exc}"
        ) from exc
    return client
