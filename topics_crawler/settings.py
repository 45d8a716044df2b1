"""Scrapy settings for topics_crawler, grouped by concern.

Everything secret comes from the environment, never from this file.
"""

from __future__ import annotations

import os
from typing import Literal

# --- Project -----------------------------------------------------------------
BOT_NAME = "topics_crawler"
SPIDER_MODULES = ["topics_crawler.spiders"]
NEWSPIDER_MODULE = "topics_crawler.spiders"
COMMANDS_MODULE = "topics_crawler.commands"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = os.environ.get("TOPICS_CRAWLER_LOG_LEVEL", "INFO")

# --- Components ----------------------------------------------------------------
# Every add-on, downloader middleware and extension, each dict assigned once here; the
# settings each one reads live in its section below.
ADDONS = {
    "topics_crawler.output.per_type.PerTypeFeeds": 50,  # Feeds: one feed per %(item_type)s
    "topics_crawler.replay.addon.RecordReplay": 100,  # Record and replay
    "topics_crawler.dataset.DatasetAddon": 500,  # Feeds and dataset
    "topics_crawler.distributed.addon.DistributedAddon": 700,  # Distributed
    "topics_crawler.resume.addon.CrashSafeResume": 710,  # Distributed (JOBDIR)
    "topics_crawler.egress.zyte.ZyteApiEgress": 800,  # Egress: Zyte API with ZYTE_API_KEY
}
DOWNLOADER_MIDDLEWARES: dict[str, int | None] = {
    "topics_crawler.safety.links.LinkSafetyMiddleware": 50,  # Reliability
    # Debugging: scrapy parse/shell requests get the entity kind a crawl's would carry.
    "topics_crawler.middlewares.entity_kind.EntityKindMiddleware": 80,
    # Medium mirror; before robots.txt (100): mirrored URLs obey the mirror's own robots.txt.
    "topics_crawler.middlewares.mirror.MediumMirrorMiddleware": 90,
    # Reliability: None disables Scrapy's retry, replaced by RetryAfterMiddleware.
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "topics_crawler.middlewares.retry_after.RetryAfterMiddleware": 550,
    # Reliability: a lookup the resolver refused fails as UnsafeUrl before retry sees it.
    "topics_crawler.safety.links.RefusedAddressMiddleware": 560,
    "topics_crawler.middlewares.rate.AdaptiveRateMiddleware": 565,  # Politeness
    "topics_crawler.middlewares.blocked.BlockedPageMiddleware": 580,
    "topics_crawler.middlewares.render_policy.RenderPolicyMiddleware": 585,  # Browser
    "topics_crawler.safety.secrets.MediumCookieMiddleware": 720,  # Reliability
    # Egress: after HttpProxyMiddleware (750), a proxied target's name is checked here.
    "topics_crawler.egress.proxies.ProxiedAddressMiddleware": 760,
}
EXTENSIONS: dict[str, int | None] = {
    "topics_crawler.safety.secrets.LogRedaction": 0,  # Reliability
    "scrapy.extensions.logstats.LogStats": None,  # Progress: replaced by CrawlProgress
    "topics_crawler.extensions.progress.CrawlProgress": 500,  # Progress and stats
    "topics_crawler.extensions.failures.FailureLog": 700,  # Reliability
    "topics_crawler.extensions.health.CrawlHealth": 800,  # Reliability
    "topics_crawler.extensions.summary.RunSummary": 850,  # Progress and stats (after health)
    "topics_crawler.extensions.stats_file.StatsFile": 900,  # Progress and stats
}
# ITEM_PIPELINES, FEED_EXPORTERS and DOWNLOAD_HANDLERS stay with their concerns below.

# --- Identity and politeness -------------------------------------------------
USER_AGENT = (
    "topics_crawler/0.1 (+https://github.com/topics-crawler/topics_crawler; "
    "research crawler for Medium tag pages)"
)
ROBOTSTXT_OBEY = True
# The adaptive rate control (topics_crawler/middlewares/rate.py) owns every slot's delay;
# AutoThrottle stays off (two writers of slot.delay fight). RATE_CEILINGS: requests/s per
# host (and its subdomains) at most; see README "Politeness".
AUTOTHROTTLE_ENABLED = False
RATE_CONTROL_ENABLED = True
RATE_CEILINGS = {"medium.com": 5.0}
RATE_CEILING = 0.0  # other hosts (the mirror, custom domains): no ceiling, learned from 429s
# How a host's rate is learned (topics_crawler/middlewares/rate.py has the rules in words):
# first contact at RATE_START requests/s (0: unpaced), x e^RATE_START_INCREASE a second while
# it binds, cut by RATE_START_DECREASE at the first limit, unpaced past RATE_START_UNLIMITED;
# then a 429 cuts to RATE_DECREASE x the rate answers arrived at (at least RATE_FIRST_GUESS the
# first time), success adds RATE_INCREASE a second (RATE_FAST_INCREASE until the second cut),
# never below RATE_MIN; rates measured over RATE_WINDOW seconds.
RATE_START = 4
RATE_START_INCREASE = 0.7
RATE_START_DECREASE = 0.5
RATE_START_UNLIMITED = 200.0
RATE_DECREASE = 0.85
RATE_INCREASE = 0.01
RATE_FAST_INCREASE = 0.1
RATE_FIRST_GUESS = 1.0
RATE_MIN = 0.05
RATE_WINDOW = 5.0
# RATE_BUDGET_CLASS: one budget per egress address shared by the workers behind it (ceiling
# and learned rate; topics_crawler/middlewares/rate_budget.py). Not set here: the distributed
# add-on sets it with REDIS_URL (an add-on's setting loses to this file's); -s
# RATE_BUDGET_CLASS= turns it off (each worker paces itself).
DOWNLOAD_TIMEOUT = 30
# The largest real Medium page in the captures is ~0.5 MB; 32 MiB leaves 60x room and caps
# what one runaway response (a broken mirror, an endless body) costs (Scrapy: 1 GiB). A page
# over it is cancelled and recorded as failed, reason too_large (failures.jsonl, stats).
DOWNLOAD_MAXSIZE = 32 * 1024 * 1024
DOWNLOAD_WARNSIZE = 8 * 1024 * 1024
RETRY_TIMES = 3

# --- Concurrency ---------------------------------------------------------------
CONCURRENT_REQUESTS = 8
CONCURRENT_REQUESTS_PER_DOMAIN = 4

# --- Medium mirror -------------------------------------------------------------
# Every medium.com request goes to this base URL (a local site, an archive);
# items keep canonical https://medium.com URLs.
MEDIUM_BASE_URL = os.environ.get("MEDIUM_BASE_URL", "https://medium.com")

# --- Scheduling ------------------------------------------------------------------
# A request's fingerprint is its canonical medium.com URL, or its entity's identity (every
# URL alias of one story is one request; topics_crawler/scheduling/fingerprint.py).
REQUEST_FINGERPRINTER_CLASS = "topics_crawler.scheduling.fingerprint.CanonicalUrlFingerprinter"
# The seen-set of requests on disk (memory flat in crawl size;
# topics_crawler/scheduling/dupefilter.py).
DUPEFILTER_CLASS = "topics_crawler.scheduling.dupefilter.DiskDupeFilter"
# Not-yet-due requests (a retry's backoff or Retry-After, a rate-limited host) wait in the
# scheduler, not in a download slot where they would hold CONCURRENT_REQUESTS
# (topics_crawler/scheduling/not_before.py; the JOBDIR and Redis schedulers use the same gate).
SCHEDULER_PRIORITY_QUEUE = "topics_crawler.scheduling.not_before.NotBeforePriorityQueue"
SCHEDULER_HELD_MAX = 1000  # requests held aside at most (past it the queue waits)

# --- Progress and stats ----------------------------------------------------------
LOGSTATS_INTERVAL = 60.0  # seconds between progress lines in the log
PROGRESS_FIRST_LOG = 10.0  # seconds to the first one
PROGRESS_LIVE = "auto"  # a live line on stderr when it is a terminal: auto | on | off
PROGRESS_REFRESH = 1.0  # seconds between redraws of the live line
STATS_FILE = None  # e.g. -s STATS_FILE=data/run-stats.json
# Scrapy's dump of every stat at INFO buried the verdict: logged at DEBUG instead, and written
# to STATS_FILE (topics_crawler/extensions/stats_file.py).
STATS_DUMP = False
# A "Run summary: …" line at the end, and scrapy crawl's last lines on stderr whatever the log
# settings (topics_crawler/extensions/summary.py, closing.py).
SUMMARY_ENABLED = True

# --- Record and replay -------------------------------------------------------------
# -s REPLAY_MODE=record stores every response under REPLAY_DIR; -s REPLAY_MODE=replay
# re-runs the parsers on them with no network (see topics_crawler/replay/addon.py).
REPLAY_MODE = "off"
REPLAY_DIR = ".scrapy/replay"
HTTPCACHE_GZIP = True

# --- Feeds and dataset ----------------------------------------------------------
# Exporters usable in any FEEDS entry: Parquet (typed schema from the item dataclass,
# zstd, one row group per PARQUET_ROW_GROUP_SIZE rows) and CSV with lists/dicts as JSON
# text. With -s DATASET_DIR=data/<name> the dataset add-on writes per-type Parquet +
# JSONL files through FEEDS and merges them into the dataset (see topics_crawler/dataset).
# Local feed files that stop the crawl on a failed write (disk full) and that the JOBDIR
# journal flushes at each checkpoint (topics_crawler/output/feeds.py). A feed URI with
# %(item_type)s is one feed per item type (item_classes); a CSV or Parquet feed of mixed
# types is refused at start (topics_crawler/output/per_type.py).
FEED_STORAGES = {
    "": "topics_crawler.output.feeds.CheckedFileFeedStorage",
    "file": "topics_crawler.output.feeds.CheckedFileFeedStorage",
}
# A run that exports nothing (nothing new) leaves a feed file as it was: an -O feed is not
# replaced by an empty one (Scrapy opens a feed at its first item).
FEED_STORE_EMPTY = False
FEED_EXPORTERS = {
    "parquet": "topics_crawler.output.exporters.ParquetItemExporter",
    "csv": "topics_crawler.output.exporters.CsvItemExporter",
}
PARQUET_ROW_GROUP_SIZE = 10_000
PARQUET_COMPRESSION = "zstd"
DATASET_DIR = None
# Settings copied into manifest.json for each run (names only; never secrets).
DATASET_MANIFEST_SETTINGS = [
    "BOT_NAME",
    "USER_AGENT",
    "ROBOTSTXT_OBEY",
    "MEDIUM_BASE_URL",
    "CONCURRENT_REQUESTS",
    "CONCURRENT_REQUESTS_PER_DOMAIN",
    "DOWNLOAD_DELAY",
    "AUTOTHROTTLE_ENABLED",
    "RATE_CEILINGS",
    "DEPTH_LIMIT",
    "CLOSESPIDER_ITEMCOUNT",
    "CLOSESPIDER_PAGECOUNT",
    "REPLAY_MODE",
    "PARQUET_ROW_GROUP_SIZE",
]

# --- Pipelines -------------------------------------------------------------------
# normalize (formats) -> validate (invalid items to rejects.jsonl) -> images (when on) ->
# dedupe (one record per entity; across runs only new or changed ones). 800+ is left for
# the export pipelines.
ITEM_PIPELINES = {
    "topics_crawler.pipelines.normalize.NormalizePipeline": 100,
    "topics_crawler.pipelines.access.AccessFilterPipeline": 150,  # -a access=free|member_only
    "topics_crawler.pipelines.validate.ValidatePipeline": 200,
    "topics_crawler.pipelines.images.StoryImagesPipeline": 250,  # off unless IMAGES_ENABLED
    "topics_crawler.pipelines.dedupe.DedupePipeline": 300,
}
# Story images (-s IMAGES_ENABLED=1, the `images` extra: Pillow) with Scrapy's ImagesPipeline,
# after validation and before dedupe (a story that gains its images counts as changed):
# IMAGES_STORE, else <DATASET_DIR>/images, else images/ beside the first local feed
# (topics_crawler/pipelines/images.py). An image over IMAGES_MAX_SIZE bytes is cancelled and
# recorded as failed (too_large); Scrapy's IMAGES_EXPIRES (90 days) keeps stored ones.
IMAGES_ENABLED = False
IMAGES_MAX_SIZE = 10 * 1024 * 1024
IMAGES_EXPIRES = 90  # days a stored image is not fetched again (Scrapy's ImagesPipeline's own)
NORMALIZE_ENABLED = True
VALIDATE_ENABLED = True
DEDUPE_ENABLED = True
# Rejected items: REJECTS_FILE, else <DATASET_DIR>/rejects.jsonl, else beside the first
# local FEEDS file, else ./rejects.jsonl.
REJECTS_FILE = None
# Cross-run state (SQLite): DEDUPE_STATE, else <DATASET_DIR>/.state/dedupe.sqlite, else
# none (in memory: a re-run emits everything). -s DEDUPE_EMIT_ALL=1 ignores the state.
DEDUPE_STATE = None
DEDUPE_EMIT_ALL = False

# --- Reliability -----------------------------------------------------------------
# Retries are returned at once with a not-before time (Retry-After, capped; else exponential
# backoff) that their download slot honours; 429s slow the slot down; challenge pages and
# sign-in walls are retried, then failed as challenge / signin_wall; hostile URLs are
# refused; session secrets go to medium.com only and never into logs. See
# topics_crawler/middlewares/ and extensions/.
RETRY_HTTP_CODES = [500, 502, 503, 504, 522, 524, 408, 429]
RETRY_BACKOFF_BASE = 1.0  # seconds before the first retry, doubled for each further one
RETRY_BACKOFF_MAX = 60.0
RETRY_AFTER_MAX = 300.0  # cap on a server's Retry-After (and on a slot's pause)
RETRY_AFTER_LONG_WAIT = 30.0  # waits at least this long are logged as warnings
BLOCKED_RETRY_TIMES = 2
LINK_SAFETY_ALLOWED_HOSTS: list[str] = []  # hosts besides Medium's that may be fetched
# Pages that failed for good: FAILURES_FILE, else <DATASET_DIR>/failures.jsonl, else beside
# the first local FEEDS file, named after it (out.jsonl -> out.failures.jsonl); an earlier
# run's file is renamed, never overwritten (topics_crawler/extensions/failures.py). Health
# checks at close make `scrapy crawl` exit with status 1.
FAILURES_FILE = None
HEALTH_ENABLED = True
HEALTH_MIN_ITEMS = {"story": 1}
HEALTH_MAX_FAILURE_RATIO = 0.25
HEALTH_MAX_REJECT_RATIO = 0.10
# Drift alarm: least share of parsed pages of a kind that must give each of its core fields
# (topics_crawler.pages.coverage); "<kind>/<field>" keys set one field. Judged from
# HEALTH_COVERAGE_MIN_PAGES pages of the kind on.
HEALTH_MIN_COVERAGE = {
    "tag": 0.5,
    "tag_archive": 0.5,
    "story": 0.5,
    "author": 0.5,
    "publication": 0.5,
}
HEALTH_COVERAGE_MIN_PAGES = 1
# A GraphQL operation Medium refused (its schema moved: topics_crawler/graphql/drift.py) fails
# the crawl, unless the tag day archive stood in for the tag history's listing.
HEALTH_GRAPHQL_DRIFT = True

# --- Control servers and outbound network ---------------------------------------
# Scrapy's telnet console and remote-control HTTP server both run code: off unless
# switched on; then they listen on 127.0.0.1 only and the telnet console needs
# TELNETCONSOLE_PASSWORD (a generated one would be written to the log). Every fetched
# host is checked after DNS resolution (topics_crawler/safety/resolver.py); tldextract uses
# its bundled public suffix list and never downloads one (topics_crawler/__init__.py).
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
TWISTED_DNS_RESOLVER = "topics_crawler.safety.resolver.SafeAddressResolver"
LINK_SAFETY_ALLOWED_PORTS: list[int] = []  # ports besides 80/443 that may be fetched

# --- Tag history (GraphQL, day archive) ---
# -a history=newest|most_read lists each tag's history through Medium's GraphQL endpoint
# (POST /_/graphql, TagArchiveFeedQuery) over plain HTTP, the tag's day archive standing in where
# GraphQL is refused; -a history=archive walks the day archive alone (/tag/<slug>/archive ->
# years -> months -> days). See topics_crawler/spiders/_history.py and _day_archive.py.
HISTORY_PAGE_SIZE = 20  # posts per listing request (Medium answers 20 at most, since 2023-11)
# Listing requests per tag at most (GraphQL: 20,000 stories; day archive: its pages), never loops.
HISTORY_MAX_PAGES = 1000
# -a author_stories=N pages each followed author's archive
# (topics_crawler/spiders/_author_archive.py).
AUTHOR_ARCHIVE_MAX_PAGES = 200  # archive requests per author at most, never loops

# --- Browser ---------------------------------------------------------------------
# Chromium through scrapy-playwright, only where a page needs it: RENDER_MODE=auto renders
# tag pages whose JS sections are missing over plain HTTP, pages that lack their data, and
# challenge / sign-in retries (topics_crawler/middlewares/render_policy.py); always | never.
# Debian's chromium (scripts/system-deps.sh); `playwright install` is not needed.
RENDER_MODE: Literal["auto", "always", "never"] = "auto"
RENDER_SCROLL_IDLE_TRIES = 3  # tag pages: stop after this many rounds without new cards
RENDER_SCROLL_PAUSE = 0.6  # seconds one round waits for new cards
RENDER_TIME_BUDGET = 20.0  # seconds for loading more cards on one page
RENDER_SETTLE_TIMEOUT = 5.0  # seconds to wait for a quiet network / a cleared challenge
DOWNLOAD_HANDLERS = {
    "http": "topics_crawler.browser.handler.LazyPlaywrightDownloadHandler",
    "https": "topics_crawler.browser.handler.LazyPlaywrightDownloadHandler",
}
PLAYWRIGHT_BROWSER_TYPE = "chromium"
PLAYWRIGHT_LAUNCH_OPTIONS = {
    "executable_path": os.environ.get("TOPICS_CRAWLER_CHROMIUM", "/usr/bin/chromium"),
    "headless": True,
    "args": [
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ],
}
# The crawl's one context with two pages at a time (2 cores), and one fresh context at a
# time for a managed challenge's retry, closed with its page: memory stays bounded; every
# page is closed by the handler after its response (no playwright_include_page anywhere).
PLAYWRIGHT_MAX_CONTEXTS = 2
PLAYWRIGHT_MAX_PAGES_PER_CONTEXT = 2
PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT = 30_000  # ms
PLAYWRIGHT_ABORT_REQUEST = "topics_crawler.browser.actions.abort_heavy_resource"

# --- Distributed -----------------------------------------------------------------
# -s REDIS_URL=redis://host:6379/0 (or the REDIS_URL environment variable): every worker
# started with the same command shares one request queue, seen-set and item dedupe state
# in Redis under REDIS_KEY_PREFIX; workers stop once the queue has stayed empty with all
# of them idle for DISTRIBUTED_IDLE_CLOSE seconds (topics_crawler/distributed/addon.py).
# Without REDIS_URL nothing about Redis is loaded.
REDIS_URL = os.environ.get("REDIS_URL")
REDIS_KEY_PREFIX = "topics_crawler"
REDIS_SOCKET_TIMEOUT = 10.0
DISTRIBUTED_IDLE_CLOSE = 5.0
# A request a worker took is leased to it until its page is on disk; a worker not heard
# of for DISTRIBUTED_WORKER_TIMEOUT seconds is gone and its leases go back to the queue.
# Workers remember the crawl they joined under DISTRIBUTED_STATE_DIR: a Redis that comes
# back empty stops them with one line, and one started after its crawl finished has nothing
# to do (one line, exit 0); DISTRIBUTED_RESTART=1 starts a new crawl (docs/deploy.md).
DISTRIBUTED_WORKER_TIMEOUT = 15.0
DISTRIBUTED_CHECKPOINT_INTERVAL = 1.0
DISTRIBUTED_STATE_DIR = ".scrapy/distributed"
DISTRIBUTED_RESTART = False
# -s JOBDIR=crawls/<name>: a crash-safe job (topics_crawler/resume/addon.py): killed at
# any moment, even with SIGKILL, the same command resumes it; feeds must append (-o).
RESUME_CHECKPOINT_INTERVAL = 0.5  # seconds between journal commits (work a kill may redo)
