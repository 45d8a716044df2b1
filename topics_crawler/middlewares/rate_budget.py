"""One rate budget per egress address: what workers that share an address share.

A server limits the requests of an *address*, not of a process: N workers behind one
address, each at its own ceiling, send N times the ceiling. With a shared budget
(``RATE_BUDGET_CLASS``; the distributed add-on sets
:class:`topics_crawler.distributed.rate_budget.RedisRateBudget` with ``REDIS_URL``) the
adaptive rate control (:mod:`topics_crawler.middlewares.rate`) asks it before each
request to a paced host for the moment the request may go, and shares its learned rate:

* **reserve** — a send slot on the address's schedule (GCRA: one slot every ``1/rate``
  seconds, whoever asks), the wait until it, and the address's learned rate;
* **lowered** — a rate limit made this worker lower the rate: it becomes the address's,
  unless another worker already lowered it after this request was sent;
* **raised** — success made it grow: the address's grows too (not sooner than a second
  after the last cut).

Keyed by host and egress address (:func:`egress_address`: ``meta["bindaddress"]``, else
``DOWNLOAD_BIND_ADDRESS``, else ``default``): workers on N addresses each get their own
budget. Without a budget each process paces itself (the slot's delay), as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from scrapy import Request
from scrapy.settings import BaseSettings

DEFAULT_EGRESS = "default"


@dataclass(frozen=True)
class Grant:
    """The budget's answer: how long to wait, and the address's shared rate."""

    wait: float = 0.0
    """Seconds before the request may go (0: now)."""
    rate: float | None = None
    """The address's learned rate, requests/s (None: none learned yet)."""
    cut_age: float | None = None
    """Seconds since the address's rate was last lowered (None: never)."""


class RateBudget(Protocol):
    """The shared schedule and learned rate of each (egress address, host)."""

    def reserve(self, key: str, rate: float | None, ceiling: float | None) -> Grant:
        """A send slot at ``rate`` (the shared one when there is one; at most ``ceiling``;
        neither: no slot, just the shared state)."""
        ...

    def lowered(self, key: str, rate: float, sent_ago: float) -> Grant:
        """This worker lowered the rate after a response to a request sent ``sent_ago``
        seconds ago."""
        ...

    def raised(self, key: str, rate: float) -> Grant:
        """This worker's rate grew to ``rate``."""
        ...


def egress_address(request: Request, settings: BaseSettings) -> str:
    """The local address a request leaves from: ``meta["bindaddress"]`` (a host or a
    ``(host, port)``), else ``DOWNLOAD_BIND_ADDRESS``, else :data:`DEFAULT_EGRESS`."""
    bound: Any = request.meta.get("bindaddress") or settings.get("DOWNLOAD_BIND_ADDRESS")
    if isinstance(bound, list | tuple):
        bound = bound[0] if bound else None
    text = str(bound or "").strip()
    if ":" in text and text.count(":") == 1:  # host:port
        text = text.partition(":")[0]
    return text or DEFAULT_EGRESS


def budget_key(egress: str, slot_key: str) -> str:
    """The budget of one host (download slot) as seen from one egress address."""
    return f"{egress}|{slot_key}"
