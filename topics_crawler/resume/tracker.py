"""Marks a page done in the crawl journal once its callback's outputs are all handled.

A spider middleware (outermost, so it sees the final output) counts what each
response's callback yields; the item signals count the items that left the pipelines
(exported, dropped or failed), ``request_scheduled`` the requests that reached the
scheduler (hence the journal). When the callback has ended and the counts meet, the
page is done. Pages whose callback raised, and failed downloads (errbacks), are never
marked done: a resumed crawl fetches them again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request, signals
from scrapy.http import Response

from topics_crawler.resume.journal import CrawlJournal

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class DonePages:
    """Spider middleware feeding :attr:`CrawlJournal.progress` and marking pages done."""

    def __init__(self, crawler: Crawler, journal: CrawlJournal) -> None:
        self.journal = journal
        self.progress = journal.progress
        self.fingerprinter = crawler.request_fingerprinter
        self._parents: dict[int, str] = {}
        """id() of each yielded request not yet scheduled → its page's fingerprint."""
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(self.item_left, signal=signal)
        crawler.signals.connect(self.request_scheduled, signal=signals.request_scheduled)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler, CrawlJournal.for_jobdir(crawler.settings["JOBDIR"]))

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterable[Any]:
        fp = self._fp(response)
        for output in result:
            self._count(fp, output)
            yield output
        self._output_done(fp)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        fp = self._fp(response)
        async for output in result:
            self._count(fp, output)
            yield output
        self._output_done(fp)

    def item_left(self, item: Any, response: Any, **kwargs: Any) -> None:
        if isinstance(response, Response):  # not an errback's item (its page is not tracked)
            self._handled(self._fp(response))

    def request_scheduled(self, request: Request, **kwargs: Any) -> None:
        parent = self._parents.pop(id(request), None)
        if parent is not None:
            self._handled(parent)

    def _handled(self, fp: str) -> None:
        if fp in self.progress.yielded:
            self.progress.finished[fp] = self.progress.finished.get(fp, 0) + 1
            self._mark_if_complete(fp)

    def _fp(self, response: Response) -> str:
        return self.fingerprinter.fingerprint(response.request).hex()  # type: ignore[arg-type]

    def _count(self, fp: str, output: Any) -> None:
        if isinstance(output, Request):
            self._parents[id(output)] = fp
        self.progress.yielded[fp] = self.progress.yielded.get(fp, 0) + 1

    def _output_done(self, fp: str) -> None:
        self.progress.yielded.setdefault(fp, 0)
        self.progress.output_done.add(fp)
        self._mark_if_complete(fp)

    def _mark_if_complete(self, fp: str) -> None:
        if self.progress.complete(fp):
            self.journal.mark_done(fp)
