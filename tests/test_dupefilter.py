"""The on-disk request seen-set: the same answers as Scrapy's, nothing left behind."""

from __future__ import annotations

from scrapy import Request
from scrapy.utils.test import get_crawler

from topics_crawler.scheduling.dupefilter import DiskDupeFilter


def test_each_fingerprint_is_seen_once_and_the_scratch_file_goes_at_close() -> None:
    crawler = get_crawler(
        settings_dict={"DUPEFILTER_CLASS": "topics_crawler.scheduling.dupefilter.DiskDupeFilter"}
    )
    seen = DiskDupeFilter.from_crawler(crawler)
    seen.open()
    first = Request("https://medium.com/p/aaaaaaaaaaaa")
    assert not seen.request_seen(first)
    assert seen.request_seen(first.replace())
    assert not seen.request_seen(Request("https://medium.com/p/bbbbbbbbbbbb"))
    folder = seen._folder  # the scratch folder, to check that close removes it
    assert folder is not None
    assert folder.exists()
    seen.close("finished")
    assert not folder.exists()


def test_entity_aliases_share_one_fingerprint() -> None:
    crawler = get_crawler(
        settings_dict={
            "REQUEST_FINGERPRINTER_CLASS": (
                "topics_crawler.scheduling.fingerprint.CanonicalUrlFingerprinter"
            )
        }
    )
    seen = DiskDupeFilter.from_crawler(crawler)
    meta = {"entity_key": "story:aaaaaaaaaaaa"}
    assert not seen.request_seen(Request("https://medium.com/p/aaaaaaaaaaaa", meta=meta))
    assert seen.request_seen(Request("https://medium.com/@ev/x-aaaaaaaaaaaa", meta=meta))
    seen.close("finished")
