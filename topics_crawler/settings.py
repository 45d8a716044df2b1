"""Scrapy settings for topics_crawler, grouped by concern.

Everything secret comes from the environment, never from this file.
"""

from __future__ import annotations

import os

# --- Project -----------------------------------------------------------------
BOT_NAME = "topics_crawler"
SPIDER_MODULES = ["topics_crawler.spiders"]
NEWSPIDER_MODULE = "topics_crawler.spiders"
COMMANDS_MODULE = "topics_crawler.commands"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = os.environ.get("TOPICS_CRAWLER_LOG_LEVEL", "INFO")

# --- Identity and politeness -------------------------------------------------
USER_AGENT = (
    "topics_crawler/0.1 (+https://github.com/topics-crawler/topics_crawler; "
    "research crawler for Medium tag pages)"
)
ROBOTSTXT_OBEY = True
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
DOWNLOAD_TIMEOUT = 30
RETRY_TIMES = 3

# --- Concurrency ---------------------------------------------------------------
CONCURRENT_REQUESTS = 8
CONCURRENT_REQUESTS_PER_DOMAIN = 4

# --- Medium mirror -------------------------------------------------------------
# Every medium.com request goes to this base URL (a local site, an archive);
# items keep canonical https://medium.com URLs.
MEDIUM_BASE_URL = os.environ.get("MEDIUM_BASE_URL", "https://medium.com")

REQUEST_FINGERPRINTER_CLASS = "topics_crawler.fingerprint.CanonicalUrlFingerprinter"
DOWNLOADER_MIDDLEWARES = {
    "topics_crawler.middlewares.mirror.MediumMirrorMiddleware": 950,
}

# --- Progress and stats ----------------------------------------------------------
LOGSTATS_INTERVAL = 60.0
EXTENSIONS = {
    "scrapy.extensions.logstats.LogStats": None,
    "topics_crawler.extensions.progress.CrawlProgress": 500,
}

# --- Record and replay -------------------------------------------------------------
# Crawl once with ``-s HTTPCACHE_ENABLED=1`` (responses stored under .scrapy/httpcache),
# re-run the parsers offline with ``-s REPLAY=1`` (stored responses only, no network).
HTTPCACHE_ENABLED = False
HTTPCACHE_DIR = "httpcache"
HTTPCACHE_POLICY = "scrapy.extensions.httpcache.DummyPolicy"
HTTPCACHE_STORAGE = "scrapy.extensions.httpcache.FilesystemCacheStorage"
HTTPCACHE_GZIP = True
