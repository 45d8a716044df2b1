"""Distributed add-on: ``REDIS_URL`` makes workers share one frontier on Redis (scrapy-redis).

    scrapy crawl topics -a tags=llm -s REDIS_URL=redis://redis.internal:6379/0   # on each machine

With ``REDIS_URL`` set (setting or environment variable) the crawl uses
:class:`~topics_crawler.distributed.scheduler.RedisScheduler` (shared queue and
seen-set), :class:`~topics_crawler.distributed.redis_dedupe_state.RedisDedupeState`
(items deduplicated across workers),
:class:`~topics_crawler.distributed.rate_budget.RedisRateBudget` (one rate budget per
egress address: workers behind one address share its ceiling and learned rate),
:class:`~topics_crawler.distributed.start.SharedStartRequests` (start requests go
through the shared seen-set),
:class:`~topics_crawler.distributed.checkpoint.LeaseCheckpoint` (a request a worker
took goes back to the queue if the worker dies before its page is on disk) and
:class:`~topics_crawler.distributed.workers.WorkerCoordinator` (workers stop when
the shared queue stays empty). Without it this add-on does nothing and nothing
about Redis is imported: components are named by import path and only loaded here.
"""

from __future__ import annotations

import logging

from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from topics_crawler.errors import CrawlNotStarted, NothingToDo, check_or_log

logger = logging.getLogger(__name__)

SCHEDULER = "topics_crawler.distributed.scheduler.RedisScheduler"
DEDUPE_STATE = "topics_crawler.distributed.redis_dedupe_state.RedisDedupeState"
RATE_BUDGET = "topics_crawler.distributed.rate_budget.RedisRateBudget"
COORDINATOR = "topics_crawler.distributed.workers.WorkerCoordinator"
COORDINATOR_PRIORITY = 550
START_MIDDLEWARE = "topics_crawler.distributed.start.SharedStartRequests"
#: Right after Scrapy's StartSpiderMiddleware (25), before anything else sees the requests.
START_MIDDLEWARE_PRIORITY = 26
CHECKPOINT_MIDDLEWARE = "topics_crawler.distributed.checkpoint.LeaseCheckpoint"
#: Outermost: it must see each callback's final output.
CHECKPOINT_MIDDLEWARE_PRIORITY = 1


class DistributedAddon:
    """Scrapy add-on (``ADDONS``) behind the ``REDIS_URL`` setting."""

    @staticmethod
    def preflight(settings: BaseSettings) -> None:
        """Raise :class:`~topics_crawler.errors.CrawlNotStarted` when ``REDIS_URL`` is set
        but Redis does not answer (the crawl does not start, nothing is written), and
        :class:`~topics_crawler.errors.NothingToDo` when the crawl it would join has
        finished (this worker's state settled first: its feeds cut back)."""
        if not settings.get("REDIS_URL"):
            return
        # Imported here: without REDIS_URL nothing about Redis is loaded.
        from topics_crawler.distributed.connection import (  # noqa: PLC0415
            RedisUnavailableError,
            connect,
        )
        from topics_crawler.distributed.local_state import (  # noqa: PLC0415
            settle_finished,
            unfinished_overwritten_feed,
        )
        from topics_crawler.distributed.marker import finished_crawl, lost_crawl  # noqa: PLC0415

        try:
            server = connect(settings)
        except RedisUnavailableError as exc:
            raise CrawlNotStarted(str(exc)) from None  # the cause is in the message
        try:
            lost = lost_crawl(settings, server)
            finished = finished_crawl(settings, server)
        finally:
            server.close()
        if lost is not None:
            raise CrawlNotStarted(lost)
        if finished is not None:
            settle_finished(settings)
            raise NothingToDo(finished)
        feed = unfinished_overwritten_feed(settings)
        if feed is not None:
            raise CrawlNotStarted(
                f"{feed} holds this worker's part of an unfinished distributed crawl and -O "
                "would overwrite it; use -o (append) to continue the crawl"
            )

    def update_settings(self, settings: BaseSettings) -> None:
        """Check that Redis answers, then switch the distributed components on."""
        if not settings.get("REDIS_URL"):
            raise NotConfigured
        check_or_log(self.preflight, settings)
        if settings.get("DATASET_DIR"):
            logger.warning(
                "DATASET_DIR with REDIS_URL: a killed worker's dataset staging files are not "
                "merged, while the pages it finished are not fetched again; give each worker "
                "an appending JSON lines feed too (-o worker-<name>.jsonl)"
            )
        if settings.get("JOBDIR"):
            logger.warning(
                "JOBDIR is ignored with REDIS_URL: the queue and seen-set live in Redis, "
                "and restarting the workers resumes the crawl"
            )
        settings.set("SCHEDULER", SCHEDULER, priority="addon")
        settings.set("DEDUPE_STATE_CLASS", DEDUPE_STATE, priority="addon")
        settings.set("RATE_BUDGET_CLASS", RATE_BUDGET, priority="addon")
        settings["EXTENSIONS"].set(COORDINATOR, COORDINATOR_PRIORITY, priority="addon")
        settings["SPIDER_MIDDLEWARES"].set(
            START_MIDDLEWARE, START_MIDDLEWARE_PRIORITY, priority="addon"
        )
        settings["SPIDER_MIDDLEWARES"].set(
            CHECKPOINT_MIDDLEWARE, CHECKPOINT_MIDDLEWARE_PRIORITY, priority="addon"
        )
