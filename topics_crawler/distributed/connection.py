"""The Redis client and key names every distributed component shares."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry
from scrapy.settings import BaseSettings

from topics_crawler import settings as defaults

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

    def processing(self, worker_id: str) -> str:
        """Hash of the requests ``worker_id`` has taken and not finished (lease → request)."""
        return f"{self.prefix}:processing:{worker_id}"

    @property
    def processing_pattern(self) -> str:
        return f"{self.prefix}:processing:*"

    def owned(self, worker_id: str) -> str:
        """Set of the item keys ``worker_id`` stored in :attr:`items` since its last checkpoint."""
        return f"{self.prefix}:owned:{worker_id}"

    @property
    def owned_pattern(self) -> str:
        return f"{self.prefix}:owned:*"

    @property
    def lease_counter(self) -> str:
        return f"{self.prefix}:lease-seq"

    @property
    def marker(self) -> str:
        """The crawl marker: ``<crawl id>`` while a crawl runs, ``<crawl id> finished`` after."""
        return f"{self.prefix}:crawl"

    def worker_of(self, key: bytes | str, pattern: str) -> str:
        """The worker id at the end of a ``processing:``/``owned:`` key."""
        text = key.decode() if isinstance(key, bytes) else key
        return text[len(pattern) - 1 :]

    def crawl_keys(self) -> tuple[str, ...]:
        """What one crawl leaves behind (deleted by the last worker of a finished crawl;
        the marker stays, saying the crawl finished)."""
        return (self.requests, self.seen, self.items, self.lease_counter)


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
    timeout = settings.getfloat("REDIS_SOCKET_TIMEOUT", defaults.REDIS_SOCKET_TIMEOUT)
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
