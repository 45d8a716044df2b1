"""Every setting the project reads, checked before a crawl starts: one table, one line per error.

``scrapy crawl`` runs :func:`settings_error` while it reads the command line
(:mod:`topics_crawler.commands.crawl`): a bad value (``-s RENDER_MODE=sometimes``,
an unwritable ``JOBDIR``) prints one ``error:`` line and exits with status 2,
before anything starts or is written.

:data:`RULES` is the table: setting name → check. A check takes the raw value
(a string when it came from ``-s``) and the settings, and returns why the value
is wrong, or None. Unset (None) values are not checked: the component falls back
to its default. To cover a new setting, add one row built from the small checks
of :mod:`topics_crawler.commands.value_checks` (``choice``, ``number``, ``flag``,
``writable_dir``…).
"""

from __future__ import annotations

from collections.abc import Mapping

from scrapy.settings import BaseSettings

from topics_crawler.commands.value_checks import (
    Check,
    choice,
    count_map,
    flag,
    header_value,
    host_list,
    http_url,
    images_enabled,
    importable,
    importable_or_off,
    key_prefix,
    loopback_host,
    number,
    number_map,
    port_list,
    redis_url,
    status_list,
    telnet_console,
    writable_dir,
    writable_file,
)
from topics_crawler.safety.secrets import SESSION_SECRETS, secret_values


def secrets_error(settings: BaseSettings) -> str | None:
    """``NAME: why`` for a session secret (environment first, as the crawl reads them)
    that cannot be sent as it is, or None."""
    for name, value in secret_values(settings).items():
        if name in SESSION_SECRETS:
            problem = header_value(value, settings)
            if problem is not None:
                return f"{name}: {problem}"
    return None


_POSITIVE = number(minimum=0.0)
_COUNT = number(minimum=0, whole=True)
_RATIO = number(minimum=0.0, maximum=1.0)

#: Setting name → check. Add a row for each setting the project reads.
RULES: dict[str, Check] = {
    # medium, politeness
    "MEDIUM_BASE_URL": http_url,
    "ROBOTSTXT_OBEY": flag,
    "AUTOTHROTTLE_ENABLED": flag,
    "RATE_CONTROL_ENABLED": flag,
    "RATE_CEILINGS": number_map(minimum=0.0),
    "RATE_CEILING": _POSITIVE,
    "RATE_DECREASE": number(minimum=0.01, maximum=1.0),
    "RATE_ERROR_DECREASE": number(minimum=0.01, maximum=1.0),
    "RATE_INCREASE": _POSITIVE,
    "RATE_FAST_INCREASE": _POSITIVE,
    "RATE_FIRST_GUESS": number(minimum=0.001),
    "RATE_MIN": number(minimum=0.001),
    "RATE_WINDOW": number(minimum=0.1),
    "RATE_START": _POSITIVE,
    "RATE_START_INCREASE": _POSITIVE,
    "RATE_START_DECREASE": number(minimum=0.01, maximum=1.0),
    "RATE_START_UNLIMITED": number(minimum=0.001),
    "SCHEDULER_HELD_MAX": number(minimum=1, whole=True),
    "SCHEDULER_GATED_PRIORITY_QUEUE": importable,
    "AUTOTHROTTLE_START_DELAY": _POSITIVE,
    "AUTOTHROTTLE_MAX_DELAY": _POSITIVE,
    "AUTOTHROTTLE_TARGET_CONCURRENCY": number(minimum=0.01),
    "DOWNLOAD_DELAY": _POSITIVE,
    "DOWNLOAD_TIMEOUT": number(minimum=0.1),
    "DOWNLOAD_MAXSIZE": _COUNT,
    "DOWNLOAD_WARNSIZE": _COUNT,
    "CONCURRENT_REQUESTS": number(minimum=1, whole=True),
    "CONCURRENT_REQUESTS_PER_DOMAIN": number(minimum=1, whole=True),
    "LOG_LEVEL": choice("critical", "error", "warning", "info", "debug"),
    "LOG_FILE": writable_file,
    "LOGSTATS_INTERVAL": _POSITIVE,
    "PROGRESS_FIRST_LOG": _POSITIVE,
    "PROGRESS_LIVE": choice("auto", "on", "off"),
    "PROGRESS_REFRESH": number(minimum=0.05),
    "SUMMARY_ENABLED": flag,
    "DEPTH_LIMIT": _COUNT,
    "CLOSESPIDER_ITEMCOUNT": _COUNT,
    "CLOSESPIDER_PAGECOUNT": _COUNT,
    "CLOSESPIDER_TIMEOUT": _POSITIVE,
    "DNS_TIMEOUT": number(minimum=0.1),
    "DNSCACHE_ENABLED": flag,
    "DNSCACHE_SIZE": _COUNT,
    "TWISTED_DNS_RESOLVER": importable,
    # record / replay, job dir
    "REPLAY_MODE": choice("off", "record", "replay"),
    "REPLAY_DIR": writable_dir,
    "HTTPCACHE_ENABLED": flag,
    "HTTPCACHE_STORAGE": importable,
    "REPLAY_INNER_STORAGE": importable,
    "JOBDIR": writable_dir,
    "RESUME_CHECKPOINT_INTERVAL": number(minimum=0.01),
    # feeds, dataset, pipelines
    "PARQUET_ROW_GROUP_SIZE": number(minimum=1, whole=True),
    "PARQUET_COMPRESSION": choice("zstd", "snappy", "gzip", "brotli", "lz4", "none"),
    "PARQUET_COMPRESSION_LEVEL": number(whole=True),
    # DATASET_DIR: the dataset add-on's preflight checks it (one line, exit 1)
    "STATS_FILE": writable_file,
    "REJECTS_FILE": writable_file,
    "FAILURES_FILE": writable_file,
    "DEDUPE_STATE": writable_file,
    "NORMALIZE_ENABLED": flag,
    "VALIDATE_ENABLED": flag,
    "DEDUPE_ENABLED": flag,
    "DEDUPE_EMIT_ALL": flag,
    "DEDUPE_STATE_CLASS": importable,
    "RATE_BUDGET_CLASS": importable_or_off,
    "DUPEFILTER_CLASS": importable,
    "IMAGES_ENABLED": images_enabled,
    "IMAGES_STORE": writable_dir,
    "IMAGES_MAX_SIZE": number(minimum=1, whole=True),
    "IMAGES_EXPIRES": _COUNT,
    # reliability
    "RETRY_ENABLED": flag,
    "RETRY_TIMES": _COUNT,
    "RETRY_HTTP_CODES": status_list,
    "RETRY_PRIORITY_ADJUST": number(whole=True),
    "RETRY_BACKOFF_BASE": _POSITIVE,
    "RETRY_BACKOFF_MAX": _POSITIVE,
    "RETRY_AFTER_MAX": _POSITIVE,
    "RETRY_AFTER_LONG_WAIT": _POSITIVE,
    "BLOCKED_RETRY_TIMES": _COUNT,
    "LINK_SAFETY_ALLOWED_HOSTS": host_list,
    "LINK_SAFETY_ALLOWED_PORTS": port_list,
    "HEALTH_ENABLED": flag,
    "HEALTH_MIN_ITEMS": count_map,
    "HEALTH_MAX_FAILURE_RATIO": _RATIO,
    "HEALTH_MAX_REJECT_RATIO": _RATIO,
    "HEALTH_MIN_COVERAGE": number_map(minimum=0.0, maximum=1.0),
    "HEALTH_COVERAGE_MIN_PAGES": number(minimum=1, whole=True),
    "HEALTH_GRAPHQL_DRIFT": flag,
    # control servers
    "TELNETCONSOLE_ENABLED": telnet_console,
    "TELNETCONSOLE_HOST": loopback_host,
    "TELNETCONSOLE_PORT": port_list,
    "REMOTE_CONTROL_ENABLED": flag,
    # tag history, browser
    "HISTORY_PAGE_SIZE": number(minimum=1, maximum=20, whole=True),  # Medium answers 20 at most
    "HISTORY_MAX_PAGES": number(minimum=1, whole=True),
    "AUTHOR_ARCHIVE_MAX_PAGES": number(minimum=1, whole=True),
    "RENDER_MODE": choice("auto", "always", "never"),
    "RENDER_SCROLL_IDLE_TRIES": number(minimum=1, whole=True),
    "RENDER_SCROLL_PAUSE": _POSITIVE,
    "RENDER_TIME_BUDGET": _POSITIVE,
    "RENDER_SETTLE_TIMEOUT": _POSITIVE,
    "PLAYWRIGHT_MAX_CONTEXTS": number(minimum=1, whole=True),
    "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": number(minimum=1, whole=True),
    "PLAYWRIGHT_ABORT_REQUEST": importable,
    # distributed
    "REDIS_URL": redis_url,
    "REDIS_SOCKET_TIMEOUT": number(minimum=0.1),
    "REDIS_KEY_PREFIX": key_prefix,
    "SCHEDULER_QUEUE_CLASS": importable,
    "DISTRIBUTED_IDLE_CLOSE": _POSITIVE,
    "DISTRIBUTED_WORKER_TIMEOUT": number(minimum=1.0),
    "DISTRIBUTED_CHECKPOINT_INTERVAL": number(minimum=0.05),
    "DISTRIBUTED_STATE_DIR": writable_dir,
    "DISTRIBUTED_RESTART": flag,
}


def settings_error(settings: BaseSettings, rules: Mapping[str, Check] = RULES) -> str | None:
    """``NAME: why`` for the first bad setting (in table order), then the session secrets
    (:func:`secrets_error`), or None when all are fine."""
    for name, check in rules.items():
        value = settings.get(name)
        if value is None:
            continue
        problem = check(value, settings)
        if problem is not None:
            return f"{name}: {problem}"
    return secrets_error(settings) if rules is RULES else None
