"""Record/replay add-on: settings it switches on, and what the recording stores."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from topics_crawler.replay.addon import CanonicalCacheStorage, RecordReplay
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META, MIRROR_URL_META


def settings_for(mode: str, folder: Path) -> Settings:
    settings = Settings({"REPLAY_MODE": mode, "REPLAY_DIR": str(folder)})
    RecordReplay().update_settings(settings)
    return settings


def test_record_and_replay_settings(tmp_path: Path) -> None:
    record = settings_for("record", tmp_path)
    assert record.getbool("HTTPCACHE_ENABLED")
    assert not record.getbool("HTTPCACHE_IGNORE_MISSING")
    assert record.getlist("HTTPCACHE_IGNORE_HTTP_CODES") == []
    replay = settings_for("replay", tmp_path)
    assert replay.getbool("HTTPCACHE_IGNORE_MISSING")
    assert not replay.getbool("AUTOTHROTTLE_ENABLED")
    assert replay.get("HTTPCACHE_DIR") == str(tmp_path.resolve())
    off = settings_for("off", tmp_path)
    assert not off.getbool("HTTPCACHE_ENABLED")


def test_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="REPLAY_MODE must be one of off, record, replay"):
        settings_for("rewind", tmp_path)


def test_recording_stores_canonical_url_and_no_private_headers(tmp_path: Path) -> None:
    crawler = get_crawler(Spider, {"HTTPCACHE_DIR": str(tmp_path), "HTTPCACHE_GZIP": True})
    spider = Spider("s")
    spider.crawler = crawler
    storage = CanonicalCacheStorage(crawler.settings)
    storage.open_spider(spider)
    mirror = "http://127.0.0.1:8123/@ev"
    request = Request(
        mirror,
        headers={"Cookie": "sid=SECRET", "Authorization": "Bearer SECRET", "Accept": "text/html"},
        meta={CANONICAL_URL_META: "https://medium.com/@ev", MIRROR_URL_META: mirror},
    )
    storage.store_response(spider, request, HtmlResponse(mirror, body=b"<html>hi</html>"))
    stored = {p.name: gzip.decompress(p.read_bytes()) for p in tmp_path.rglob("*") if p.is_file()}
    assert b"SECRET" not in b"".join(stored.values())
    assert b"text/html" in stored["request_headers"]
    assert b"https://medium.com/@ev" in stored["meta"]
    assert b"127.0.0.1" not in stored["meta"]
    replayed = storage.retrieve_response(spider, Request("https://medium.com/@ev"))
    assert replayed is not None
    assert replayed.url == "https://medium.com/@ev"


def test_any_header_holding_a_secret_is_not_stored(tmp_path: Path) -> None:
    crawler = get_crawler(
        Spider,
        {"HTTPCACHE_DIR": str(tmp_path), "HTTPCACHE_GZIP": False, "MEDIUM_SID": "s3cr3t-sid-value"},
    )
    spider = Spider("s")
    spider.crawler = crawler
    storage = CanonicalCacheStorage(crawler.settings)
    storage.open_spider(spider)
    url = "https://medium.com/@ev"
    request = Request(url, headers={"X-Session": "sid=s3cr3t-sid-value", "Accept": "text/html"})
    response = HtmlResponse(url, body=b"<html></html>", headers={"X-Echo": "s3cr3t-sid-value"})
    storage.store_response(spider, request, response)
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert b"s3cr3t-sid-value" not in stored
    assert b"text/html" in stored
