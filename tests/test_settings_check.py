"""Every bad setting is one line: a case per row of ``settings_check.RULES``, the real
command line for a few, and the project's own settings pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.settings import BaseSettings
from scrapy.utils.project import get_project_settings

from tests.in_process import python_m
from topics_crawler.commands.settings_check import RULES, settings_error

BLOCKER = "{blocker}"  # replaced by a path under a regular file: never writable, even as root

#: One bad value per setting, and the start of the error it must give.
BAD_VALUES: dict[str, tuple[str, str]] = {
    "MEDIUM_BASE_URL": ("ftp://medium.com", "'ftp://medium.com' is not an http(s) URL"),
    "ROBOTSTXT_OBEY": ("maybe", "'maybe' is not true or false"),
    "AUTOTHROTTLE_ENABLED": ("sure", "'sure' is not true or false"),
    "RATE_CONTROL_ENABLED": ("adaptive", "'adaptive' is not true or false"),
    "RATE_CEILINGS": ('{"medium.com": "fast"}', "medium.com: 'fast' is not a number"),
    "RATE_CEILING": ("-1", "'-1' is below 0"),
    "RATE_DECREASE": ("2", "'2' is above 1"),
    "RATE_ERROR_DECREASE": ("0", "'0' is below 0.01"),
    "RATE_INCREASE": ("more", "'more' is not a number"),
    "RATE_FAST_INCREASE": ("-0.1", "'-0.1' is below 0"),
    "RATE_FIRST_GUESS": ("0", "'0' is below 0.001"),
    "RATE_MIN": ("0", "'0' is below 0.001"),
    "RATE_WINDOW": ("0", "'0' is below 0.1"),
    "RATE_START": ("-1", "'-1' is below 0"),
    "RATE_START_INCREASE": ("fast", "'fast' is not a number"),
    "RATE_START_DECREASE": ("2", "'2' is above 1"),
    "RATE_START_UNLIMITED": ("0", "'0' is below 0.001"),
    "SCHEDULER_HELD_MAX": ("0", "'0' is below 1"),
    "SCHEDULER_GATED_PRIORITY_QUEUE": ("scrapy.pqueues.Nope", "'scrapy.pqueues.Nope' cannot be"),
    "AUTOTHROTTLE_START_DELAY": ("-1", "'-1' is below 0"),
    "AUTOTHROTTLE_MAX_DELAY": ("soon", "'soon' is not a number"),
    "AUTOTHROTTLE_TARGET_CONCURRENCY": ("0", "'0' is below 0.01"),
    "DOWNLOAD_DELAY": ("nan", "'nan' is not a number"),
    "DOWNLOAD_TIMEOUT": ("0", "'0' is below 0.1"),
    "DOWNLOAD_MAXSIZE": ("32MB", "'32MB' is not a whole number"),
    "DOWNLOAD_WARNSIZE": ("-1", "'-1' is below 0"),
    "CONCURRENT_REQUESTS": ("0", "'0' is below 1"),
    "CONCURRENT_REQUESTS_PER_DOMAIN": ("2.5", "'2.5' is not a whole number"),
    "LOG_LEVEL": ("LOUD", "'LOUD' is not one of critical, error, warning, info, debug"),
    "LOG_FILE": (f"{BLOCKER}/crawl.log", "file {blocker}/crawl.log is not writable"),
    "LOGSTATS_INTERVAL": ("-5", "'-5' is below 0"),
    "PROGRESS_FIRST_LOG": ("soon", "'soon' is not a number"),
    "PROGRESS_LIVE": ("always", "'always' is not one of auto, on, off"),
    "PROGRESS_REFRESH": ("0", "'0' is below 0.05"),
    "SUMMARY_ENABLED": ("loud", "'loud' is not true or false"),
    "DEPTH_LIMIT": ("deep", "'deep' is not a whole number"),
    "CLOSESPIDER_ITEMCOUNT": ("-1", "'-1' is below 0"),
    "CLOSESPIDER_PAGECOUNT": ("1e3", "'1e3' is not a whole number"),
    "CLOSESPIDER_TIMEOUT": ("-60", "'-60' is below 0"),
    "DNS_TIMEOUT": ("0", "'0' is below 0.1"),
    "DNSCACHE_ENABLED": ("cached", "'cached' is not true or false"),
    "DNSCACHE_SIZE": ("big", "'big' is not a whole number"),
    "TWISTED_DNS_RESOLVER": ("no.such.Resolver", "'no.such.Resolver' cannot be imported"),
    "REPLAY_MODE": ("rewind", "'rewind' is not one of off, record, replay"),
    "REPLAY_DIR": (f"{BLOCKER}/replay", "directory {blocker}/replay is not writable"),
    "JOBDIR": (f"{BLOCKER}/job", "directory {blocker}/job is not writable"),
    "HTTPCACHE_ENABLED": ("cache", "'cache' is not true or false"),
    "HTTPCACHE_STORAGE": ("scrapy.NoStorage", "'scrapy.NoStorage' cannot be imported"),
    "REPLAY_INNER_STORAGE": ("nowhere.Storage", "'nowhere.Storage' cannot be imported"),
    "RESUME_CHECKPOINT_INTERVAL": ("0", "'0' is below 0.01"),
    "PARQUET_ROW_GROUP_SIZE": ("0", "'0' is below 1"),
    "PARQUET_COMPRESSION": ("zip", "'zip' is not one of zstd"),
    "PARQUET_COMPRESSION_LEVEL": ("max", "'max' is not a whole number"),
    "STATS_FILE": (f"{BLOCKER}/stats.json", "file {blocker}/stats.json is not writable"),
    "REJECTS_FILE": (f"{BLOCKER}/r.jsonl", "file {blocker}/r.jsonl is not writable"),
    "FAILURES_FILE": (f"{BLOCKER}/f.jsonl", "file {blocker}/f.jsonl is not writable"),
    "DEDUPE_STATE": (f"{BLOCKER}/d.sqlite", "file {blocker}/d.sqlite is not writable"),
    "NORMALIZE_ENABLED": ("2", "'2' is not true or false"),
    "VALIDATE_ENABLED": ("yes please", "'yes please' is not true or false"),
    "DEDUPE_ENABLED": ("enabled", "'enabled' is not true or false"),
    "DEDUPE_EMIT_ALL": ("all", "'all' is not true or false"),
    "RATE_BUDGET_CLASS": ("topics_crawler.Nobudget", "'topics_crawler.Nobudget' cannot be"),
    "DEDUPE_STATE_CLASS": ("topics_crawler.Nope", "'topics_crawler.Nope' cannot be imported"),
    "DUPEFILTER_CLASS": ("topics_crawler.NoFilter", "'topics_crawler.NoFilter' cannot be"),
    "IMAGES_ENABLED": ("sometimes", "'sometimes' is not true or false"),
    "IMAGES_STORE": (f"{BLOCKER}/images", "directory {blocker}/images is not writable"),
    "IMAGES_MAX_SIZE": ("0", "'0' is below 1"),
    "IMAGES_EXPIRES": ("-1", "'-1' is below 0"),
    "RETRY_ENABLED": ("y", "'y' is not true or false"),
    "RETRY_TIMES": ("three", "'three' is not a whole number"),
    "RETRY_HTTP_CODES": ("500,5xx", "'5xx' is not an HTTP status code"),
    "RETRY_PRIORITY_ADJUST": ("lower", "'lower' is not a whole number"),
    "RETRY_BACKOFF_BASE": ("-0.5", "'-0.5' is below 0"),
    "RETRY_BACKOFF_MAX": ("inf", "'inf' is not a number"),
    "RETRY_AFTER_MAX": ("long", "'long' is not a number"),
    "RETRY_AFTER_LONG_WAIT": ("-1", "'-1' is below 0"),
    "BLOCKED_RETRY_TIMES": ("-2", "'-2' is below 0"),
    "LINK_SAFETY_ALLOWED_HOSTS": ("https://evil.example/", "'https://evil.example/' is not a host"),
    "LINK_SAFETY_ALLOWED_PORTS": ("443,70000", "'70000' is not a TCP port"),
    "HEALTH_ENABLED": ("on?", "'on?' is not true or false"),
    "HEALTH_MIN_ITEMS": ('{"story": -1}', "story: -1 is not a whole number >= 0"),
    "HEALTH_MAX_FAILURE_RATIO": ("25", "'25' is above 1"),
    "HEALTH_MAX_REJECT_RATIO": ("-0.1", "'-0.1' is below 0"),
    "HEALTH_MIN_COVERAGE": ('{"tag": 50}', "tag: 50 is above 1"),
    "HEALTH_COVERAGE_MIN_PAGES": ("0", "'0' is below 1"),
    "HEALTH_GRAPHQL_DRIFT": ("sometimes", "'sometimes' is not true or false"),
    "TELNETCONSOLE_ENABLED": ("True", "on, but TELNETCONSOLE_PASSWORD is not set"),
    "TELNETCONSOLE_HOST": ("0.0.0.0", "'0.0.0.0' is not a loopback address"),
    "TELNETCONSOLE_PORT": ("[6023]", "'[6023]' is not a TCP port"),
    "REMOTE_CONTROL_ENABLED": ("open", "'open' is not true or false"),
    "HISTORY_PAGE_SIZE": ("21", "'21' is above 20"),
    "HISTORY_MAX_PAGES": ("0", "'0' is below 1"),
    "AUTHOR_ARCHIVE_MAX_PAGES": ("none", "'none' is not a whole number"),
    "RENDER_MODE": ("sometimes", "'sometimes' is not one of auto, always, never"),
    "RENDER_SCROLL_IDLE_TRIES": ("0", "'0' is below 1"),
    "RENDER_SCROLL_PAUSE": ("-1", "'-1' is below 0"),
    "RENDER_TIME_BUDGET": ("forever", "'forever' is not a number"),
    "RENDER_SETTLE_TIMEOUT": ("-3", "'-3' is below 0"),
    "PLAYWRIGHT_MAX_CONTEXTS": ("0", "'0' is below 1"),
    "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": ("many", "'many' is not a whole number"),
    "PLAYWRIGHT_ABORT_REQUEST": ("no.Predicate", "'no.Predicate' cannot be imported"),
    "REDIS_URL": ("http://redis:6379", "'http://redis:6379' is not a redis://"),
    "REDIS_SOCKET_TIMEOUT": ("0", "'0' is below 0.1"),
    "REDIS_KEY_PREFIX": ("my crawl", "'my crawl' is not a usable key prefix"),
    "SCHEDULER_QUEUE_CLASS": ("scrapy_redis.queue.Nope", "'scrapy_redis.queue.Nope' cannot be"),
    "DISTRIBUTED_IDLE_CLOSE": ("-1", "'-1' is below 0"),
    "DISTRIBUTED_WORKER_TIMEOUT": ("0.5", "'0.5' is below 1"),
    "DISTRIBUTED_CHECKPOINT_INTERVAL": ("0", "'0' is below 0.05"),
    "DISTRIBUTED_STATE_DIR": (f"{BLOCKER}/state", "directory {blocker}/state is not writable"),
    "DISTRIBUTED_RESTART": ("please", "'please' is not true or false"),
}


@pytest.fixture
def blocker(tmp_path: Path) -> str:
    path = tmp_path / "a-file"
    path.write_text("not a folder", encoding="utf-8")
    return str(path)


def test_every_rule_has_a_bad_value_case() -> None:
    assert sorted(BAD_VALUES) == sorted(RULES)


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
def test_a_bad_value_is_one_reason(name: str, blocker: str) -> None:
    value, expected = (text.replace(BLOCKER, blocker) for text in BAD_VALUES[name])
    error = settings_error(BaseSettings({name: value}))
    assert error is not None
    assert error.startswith(f"{name}: {expected}"), error
    assert "\n" not in error


def test_the_project_settings_pass() -> None:
    assert settings_error(get_project_settings()) is None


@pytest.mark.parametrize(
    ("setting", "good"),
    [
        ("TELNETCONSOLE_ENABLED", {"TELNETCONSOLE_ENABLED": "1", "TELNETCONSOLE_PASSWORD": "pw"}),
        ("LINK_SAFETY_ALLOWED_PORTS", {"LINK_SAFETY_ALLOWED_PORTS": "8443, 8080"}),
        ("LINK_SAFETY_ALLOWED_HOSTS", {"LINK_SAFETY_ALLOWED_HOSTS": ["example.org"]}),
        ("HEALTH_MIN_ITEMS", {"HEALTH_MIN_ITEMS": '{"story": 10, "author": 0}'}),
        ("REDIS_URL", {"REDIS_URL": "redis://:pw@redis.internal:6379/0"}),
        ("RENDER_MODE", {"RENDER_MODE": "NEVER"}),
    ],
)
def test_good_values_pass(setting: str, good: dict[str, object]) -> None:
    assert settings_error(BaseSettings(good)) is None, setting


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("RENDER_MODE", "sometimes", "RENDER_MODE: 'sometimes' is not one of auto, always, never"),
        ("JOBDIR", f"{BLOCKER}/job", "JOBDIR: directory {blocker}/job is not writable: "),
        ("REPLAY_MODE", "rewind", "REPLAY_MODE: 'rewind' is not one of off, record, replay"),
        ("TELNETCONSOLE_ENABLED", "1", "TELNETCONSOLE_ENABLED: on, but TELNETCONSOLE_PASSWORD"),
        ("RETRY_TIMES", "-1", "RETRY_TIMES: '-1' is below 0"),
    ],
)
def test_scrapy_crawl_refuses_a_bad_setting_in_one_line(
    setting: str, value: str, expected: str, blocker: str
) -> None:
    value, expected = value.replace(BLOCKER, blocker), expected.replace(BLOCKER, blocker)
    process = python_m("scrapy", "crawl", "topics", "-a", "tags=ai", "-s", f"{setting}={value}")
    assert process.returncode == 2, process.stderr
    assert process.stdout == ""
    (line,) = process.stderr.splitlines()
    assert line.startswith(f"scrapy crawl topics: error: {expected}"), line
