"""A crawl of two hosts, for tests/test_not_before_crawl.py: one rate-limited, one healthy.

    python -m tests.two_hosts_crawl <limited base URL> <healthy base URL> <out.json> [mode]

Requests the pages ``/a/<n>`` of the first host interleaved with ``/b/<n>`` of the
second (one of the first per five), through the project's retry, rate and scheduler
components only (no Medium spider, no robots.txt). Writes each response as ``[seconds
since the start, host, status]`` and, every 20 ms, how many requests of each host were
in the downloader's ``active`` set (what counts against ``CONCURRENT_REQUESTS``), and
the scheduler's and retry's counts at the end.
Modes: ``plain``: Scrapy's own priority queue instead of the not-before gate;
``journal``: the crash-safe ``JOBDIR`` scheduler (``<out.json>.job``); ``redis <URL>``:
the Redis scheduler on that server. Without one: Scrapy's scheduler through the gate.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response
from scrapy.utils.asyncio import create_looping_call

JOURNAL_SCHEDULER = "topics_crawler.resume.scheduler.JournalScheduler"
REDIS_SCHEDULER = "topics_crawler.distributed.scheduler.RedisScheduler"
LIMITED_PAGES = 12
HEALTHY_PAGES = 40


class TwoHostsSpider(Spider):
    name = "two_hosts"

    def __init__(self, limited: str, healthy: str, out: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limited, self.healthy, self.out = limited, healthy, out
        self.started = time.monotonic()
        self.responses: list[list[Any]] = []
        self.samples: list[list[Any]] = []

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> TwoHostsSpider:
        spider: TwoHostsSpider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.response_downloaded, signals.response_downloaded)
        crawler.signals.connect(spider.opened_spider, signals.spider_opened)
        crawler.signals.connect(spider.closed_spider, signals.spider_closed)
        return spider

    def opened_spider(self) -> None:
        self.sampler = create_looping_call(self.sample)
        self.sampler.start(0.02)

    async def start(self) -> AsyncIterator[Request]:
        # One seed page; its callback schedules the rest at once (start requests are
        # taken lazily, which would hide how the scheduler hands requests out).
        yield Request(f"{self.healthy}/b/seed", callback=self.schedule_all)

    def schedule_all(self, response: Response) -> Iterator[Request]:
        healthy = iter(range(HEALTHY_PAGES))
        for n in range(LIMITED_PAGES):
            yield Request(f"{self.limited}/a/{n}")
            for m in [next(healthy, None) for _ in range(HEALTHY_PAGES // LIMITED_PAGES)]:
                if m is not None:
                    yield Request(f"{self.healthy}/b/{m}")
        for m in healthy:
            yield Request(f"{self.healthy}/b/{m}")

    def parse(self, response: Response) -> None:
        return None

    def response_downloaded(self, response: Response, request: Request) -> None:
        host = urlsplit(response.url).hostname
        self.responses.append([time.monotonic() - self.started, host, response.status])

    def sample(self) -> None:
        engine = self.crawler.engine
        if engine is None:
            return
        active = Counter(urlsplit(r.url).hostname for r in engine.downloader.active)
        self.samples.append([time.monotonic() - self.started, dict(active)])

    def closed_spider(self) -> None:
        if self.sampler.running:
            self.sampler.stop()
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        counts = {k: v for k, v in stats.items() if k.startswith(("scheduler/", "retry/count"))}
        with open(self.out, "w", encoding="utf-8") as file:
            result = {"responses": self.responses, "samples": self.samples, "stats": counts}
            json.dump(result, file)


def main(argv: list[str]) -> None:
    limited, healthy, out, *mode = argv
    settings: dict[str, Any] = {
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": 4,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
        "RETRY_TIMES": 10,
        "RATE_START": 0,
        "RATE_FIRST_GUESS": 20,  # the limited host comes back quickly after its pause
        "REMOTE_CONTROL_ENABLED": False,
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
            "topics_crawler.middlewares.retry_after.RetryAfterMiddleware": 550,
            "topics_crawler.middlewares.rate.AdaptiveRateMiddleware": 565,
        },
        "SCHEDULER_PRIORITY_QUEUE": (
            "scrapy.pqueues.ScrapyPriorityQueue"
            if mode == ["plain"]
            else "topics_crawler.scheduling.not_before.NotBeforePriorityQueue"
        ),
    }
    if mode == ["journal"]:
        settings |= {"SCHEDULER": JOURNAL_SCHEDULER, "JOBDIR": f"{out}.job"}
    elif mode[:1] == ["redis"]:
        settings |= {
            "SCHEDULER": REDIS_SCHEDULER,
            "REDIS_URL": mode[1],
            "DISTRIBUTED_STATE_DIR": f"{out}.state",
        }
    process = CrawlerProcess(settings)
    process.crawl(TwoHostsSpider, limited=limited, healthy=healthy, out=out)
    process.start()


if __name__ == "__main__":
    main(sys.argv[1:])
