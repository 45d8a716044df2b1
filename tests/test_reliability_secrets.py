"""Session secrets reach medium.com (or its mirror) only, and never a log line or an item."""

from __future__ import annotations

import gzip
import logging
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from tests.fixture_cases import FIXTURES
from tests.in_process import scrapy_crawl
from tests.services import serving
from topics_crawler.safety.secrets import (
    REDACTED,
    LogRedaction,
    MediumCookieMiddleware,
    RedactingFilter,
    cookie_header,
    redactable,
    secret_values,
)

SID = "1:Zm9vYmFyLXNlc3Npb24tc2VjcmV0"
UID = "c0ffee1234abcd"
COOKIE = f"uid={UID}; lang=en"
TAG_PAGE = FIXTURES / "own" / "tag" / "distributed-training" / "input.html"


def test_secret_values_prefer_the_environment() -> None:
    settings = get_crawler(Spider, {"MEDIUM_SID": "from-settings", "MEDIUM_COOKIE": COOKIE})
    found = secret_values(settings.settings, environ={"MEDIUM_SID": SID})
    assert found == {"MEDIUM_COOKIE": COOKIE, "MEDIUM_SID": SID}
    assert cookie_header(found) == f"{COOKIE}; sid={SID}"
    assert cookie_header({}) is None


def test_redactable_covers_whole_values_and_cookie_parts() -> None:
    strings = redactable({"MEDIUM_COOKIE": COOKIE, "MEDIUM_SID": SID})
    assert [len(s) for s in strings] == sorted((len(s) for s in strings), reverse=True)
    assert COOKIE in strings
    assert UID in strings
    assert SID in strings
    assert "en" not in strings  # too short to be a secret


def test_redacting_filter_hides_secrets_in_arguments_and_tracebacks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    test_logger = logging.getLogger("tests.secrets")
    redacting = RedactingFilter([SID])
    caplog.handler.addFilter(redacting)
    try:
        with caplog.at_level(logging.DEBUG, logger="tests.secrets"):
            test_logger.info("Cookie: sid=%s", SID)
            try:
                raise ValueError(f"bad session {SID}")
            except ValueError:
                test_logger.exception("request failed")
    finally:
        caplog.handler.removeFilter(redacting)
    assert SID not in caplog.text
    assert f"Cookie: sid={REDACTED}" in caplog.text
    assert f"ValueError: bad session {REDACTED}" in caplog.text


def test_log_redaction_is_off_without_secrets() -> None:
    with pytest.raises(NotConfigured):
        LogRedaction.from_crawler(get_crawler(Spider))


def make_cookie_middleware(**settings: object) -> MediumCookieMiddleware:
    crawler = get_crawler(Spider, {"MEDIUM_SID": SID, **settings})
    return MediumCookieMiddleware.from_crawler(crawler)


@pytest.mark.parametrize(
    ("url", "gets_cookie"),
    [
        ("https://medium.com/tag/llm", True),
        ("https://humanparts.medium.com/x-c9700a7cf36d", True),
        ("https://wtfeconomy.com/wtf-e52ab9515573", False),  # a publication's own domain
        ("https://evil.example/?medium.com", False),
        ("https://medium.com.evil.example/", False),
    ],
)
def test_cookie_goes_to_medium_hosts_only(url: str, gets_cookie: bool) -> None:
    request = Request(url)
    make_cookie_middleware().process_request(request)
    assert (request.headers.get("Cookie") == f"sid={SID}".encode()) is gets_cookie


def test_cookie_merges_with_the_jar_and_is_stripped_elsewhere() -> None:
    middleware = make_cookie_middleware(MEDIUM_BASE_URL="http://127.0.0.1:8123")
    medium = Request("https://medium.com/@ev", headers={"Cookie": "jar=1"})
    middleware.process_request(medium)
    assert medium.headers["Cookie"] == f"jar=1; sid={SID}".encode()
    mirror = Request("http://127.0.0.1:8123/@ev", headers={"Cookie": f"sid={SID}"})
    middleware.process_request(mirror)
    assert mirror.headers["Cookie"] == f"sid={SID}".encode()  # the mirror stands in for Medium
    leaked = Request("https://elsewhere.example/", headers={"Cookie": f"sid={SID}"})
    middleware.process_request(leaked)
    assert "Cookie" not in leaked.headers
    assert SID not in repr(middleware)


class RecordingHandler(BaseHTTPRequestHandler):
    """Serves our tag page for /tag/* (refreshing the session with ``Set-Cookie``, as
    Medium does), 503 on the first request of any other page (so retries are queued),
    404 after that; remembers each Cookie header."""

    cookies: list[tuple[str, str]] = []  # noqa: RUF012 - shared by the server's handler threads
    page = b""

    def do_GET(self) -> None:
        attempts = sum(path == self.path for path, _ in self.cookies)
        self.cookies.append((self.path, self.headers.get("Cookie", "")))
        found = self.path.startswith("/tag/")
        body = self.page if found else b"not here"
        status = 200 if found else 404 if attempts or self.path == "/robots.txt" else 503
        self.send_response(status)
        if found:
            self.send_header("Set-Cookie", f"sid={SID}; Domain=medium.com; Path=/; Secure")
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def mirror_server() -> Iterator[str]:
    if not TAG_PAGE.exists():
        pytest.skip(f"tag fixture page missing: {TAG_PAGE}")
    RecordingHandler.page = TAG_PAGE.read_bytes()
    RecordingHandler.cookies = []
    with serving(RecordingHandler) as url:
        yield url


def files_under(folder: Path) -> dict[Path, bytes]:
    """Every file below ``folder``, gzip members decompressed (the HTTP cache gzips)."""
    found = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        found[path] = data
    return found


@pytest.mark.integration
def test_a_crawl_sends_the_session_but_never_logs_or_stores_it(
    mirror_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recording, dataset, job dir, failures, rejects, stats, DEBUG log: the session is
    in none of the files the crawl wrote — even with ``HTTPCACHE_STORAGE`` given on the
    command line (the highest priority), and with retries of cookie-carrying requests
    queued on disk."""
    out = tmp_path / "out"
    items = out / "items.jsonl"
    log = out / "crawl.log"
    command = ["topics", "-o", str(items)]
    command += ["-a", "tags=distributed-training", "-a", "max_stories=3"]
    for setting in (
        f"MEDIUM_BASE_URL={mirror_server}",
        f"MEDIUM_COOKIE={COOKIE}",
        f"LOG_FILE={log}",
        "LOG_LEVEL=DEBUG",
        "COOKIES_DEBUG=True",
        "RETRY_TIMES=1",
        "RETRY_BACKOFF_BASE=0.01",
        "AUTOTHROTTLE_ENABLED=False",
        "HEALTH_ENABLED=False",
        "REPLAY_MODE=record",
        f"REPLAY_DIR={out / 'replay'}",
        "HTTPCACHE_STORAGE=scrapy.extensions.httpcache.FilesystemCacheStorage",
        f"DATASET_DIR={out / 'dataset'}",
        f"JOBDIR={out / 'job'}",
        f"FAILURES_FILE={out / 'failures.jsonl'}",
        f"REJECTS_FILE={out / 'rejects.jsonl'}",
        f"STATS_FILE={out / 'stats.json'}",
    ):
        command += ["-s", setting]
    monkeypatch.setenv("MEDIUM_SID", SID)  # read when the crawl starts
    process = scrapy_crawl(*command, timeout=180)
    assert process.returncode == 0, process.stderr[-2000:]
    tag_requests = [cookie for path, cookie in RecordingHandler.cookies if path.startswith("/tag/")]
    assert tag_requests, RecordingHandler.cookies
    assert all(f"sid={SID}" in cookie and UID in cookie for cookie in tag_requests)
    retried = [p for p, _ in RecordingHandler.cookies if p.startswith("/@") or "-" in p]
    assert len(retried) > len(set(retried)), "no retry was made"
    written = files_under(tmp_path)
    names = {path.name for path in written}
    assert {"request_headers", "response_headers", "items.jsonl", "crawl.log"} <= names
    assert {"failures.jsonl", "stats.json", "manifest.json"} <= names, names
    assert any(path.is_relative_to(out / "job") for path in written)
    text = log.read_text("utf-8")
    assert "Crawled (200)" in text
    assert REDACTED in text  # the session was there, and was redacted
    stored = items.read_text("utf-8")
    assert stored.strip(), "the crawl produced no items to check"
    for path, data in written.items():
        for secret in (SID, UID):
            assert secret.encode() not in data, f"{secret} written to {path}"
    for secret in (SID, UID):
        assert secret not in process.stdout + process.stderr
    print(f"grepped {len(written)} files for the session")


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["-s", f"MEDIUM_SID={SID}"], ["-s", "MEDIUM_SID=[redacted]"]),
        ([f"-sMEDIUM_COOKIE={COOKIE}"], ["-sMEDIUM_COOKIE=[redacted]"]),
        ([f"--set=TELNETCONSOLE_PASSWORD={SID}"], ["--set=TELNETCONSOLE_PASSWORD=[redacted]"]),
        (["-s", "RETRY_TIMES=2", "-a", "tags=llm"], ["-s", "RETRY_TIMES=2", "-a", "tags=llm"]),
    ],
)
def test_recorded_command_lines_carry_no_secret(arguments: list[str], expected: list[str]) -> None:
    from topics_crawler.safety.secrets import redact_arguments

    assert redact_arguments(arguments) == expected
