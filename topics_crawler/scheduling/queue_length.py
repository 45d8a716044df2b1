"""How many requests wait in the crawl's scheduler, whichever scheduler runs.

:func:`requests_waiting` asks the scheduler itself, through Scrapy's public
``crawler.engine.scheduler`` (Scrapy 2.19) and ``len()``, which Scrapy's scheduler
documents ("the total amount of enqueued requests") and every scheduler of the project
answers the same way:

* Scrapy's scheduler (memory or ``JOBDIR`` disk queues): the requests in its queues,
  the ones the not-before gate holds aside included;
* the crash-safe journal scheduler (``JOBDIR`` through the resume add-on): the pending
  requests, resumed ones included, and the gate's;
* the Redis scheduler: the requests queued in Redis for any worker plus the ones this
  worker's gate holds aside — this worker's view of the shared queue. Requests other
  workers took (being downloaded, or held in their gates, at most
  ``SCHEDULER_HELD_MAX`` each) are leased to them and not counted. Every worker sees
  the same shared queue, so a bound on this number bounds the shared queue, whichever
  worker checks it.

Not the stats ``scheduler/enqueued`` − ``scheduler/dequeued``: those count this process's
traffic, not what waits. A resumed ``JOBDIR`` run takes out requests an earlier run put
in, and a Redis worker takes out requests other workers put in, so the difference runs
below what waits (negative, even) and a bound on it bounds nothing.
"""

from __future__ import annotations

from collections.abc import Sized
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


def requests_waiting(crawler: Crawler) -> int | None:
    """Requests waiting in ``crawler``'s scheduler (see the module docstring); None before
    the crawl opens its scheduler, or for a scheduler that has no ``len()``."""
    try:
        scheduler = crawler.engine.scheduler
    except RuntimeError:  # Scrapy's "Crawler.engine is not set yet"
        return None
    if not isinstance(scheduler, Sized):
        return None
    return len(scheduler)
