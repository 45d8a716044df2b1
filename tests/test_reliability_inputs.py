"""Inputs checked where they enter (issue 21): a session cookie that cannot be sent as it
is stops the crawl at start with one line (exit 2, the value never printed), and a gzip
bomb is a page recorded as ``too_large``, not as ``ignore_request``."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys

import pytest
from scrapy import Request, Spider
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.utils.project import get_project_settings
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from tests.crawl_helpers import ROOT
from topics_crawler.commands.settings_check import settings_error
from topics_crawler.middlewares.download_failures import failure_status

SECRET = "sid=1:abcdefghijklmnop"


def project_settings(**values: str) -> Settings:
    settings = get_project_settings().copy()
    settings.setdict(values, priority="cmdline")
    return settings


@pytest.mark.parametrize(
    ("cookie", "problem"),
    [
        (f"{SECRET}\r\nX-Injected: 1", "holds a line break"),
        (f"{SECRET};\nuid=2", "holds a line break"),
        (f"{SECRET}\x07", "holds a control character (0x07)"),
        (f"uid=\x00{SECRET}", "holds a control character (0x00)"),
        (f"{SECRET}\u2603", "holds characters an HTTP header cannot carry"),
    ],
)
def test_a_cookie_that_cannot_be_sent_as_it_is_is_refused(cookie: str, problem: str) -> None:
    error = settings_error(project_settings(MEDIUM_COOKIE=cookie))
    assert error is not None
    assert error.startswith(f"MEDIUM_COOKIE: {problem}")
    assert SECRET not in error
    assert "abcdefgh" not in error


def test_a_good_cookie_and_a_trailing_newline_pass() -> None:
    assert settings_error(project_settings(MEDIUM_COOKIE=f"{SECRET}; uid=lo_1234\n")) is None
    assert settings_error(project_settings(MEDIUM_SID="1:abcdefghijklmnop")) is None


def test_scrapy_crawl_refuses_a_cookie_from_the_environment_in_one_line() -> None:
    env = {**os.environ, "MEDIUM_COOKIE": f"{SECRET}\r\nX-Injected: 1"}
    process = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "topics", "-a", "tags=ai"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert process.returncode == 2, process.stderr
    (line,) = process.stderr.splitlines()
    assert line.startswith("scrapy crawl topics: error: MEDIUM_COOKIE: holds a line break")
    assert "abcdefgh" not in line


class _Spider(Spider):
    name = "gzip-bomb-test"


def test_a_gzip_bomb_is_recorded_as_too_large() -> None:
    """The real decompression middleware, a 64 KiB limit and 10 MiB of zeros in ~10 KiB."""
    crawler = get_crawler(_Spider, {"DOWNLOAD_MAXSIZE": 64 * 1024})
    crawler.spider = crawler._create_spider()
    middleware = HttpCompressionMiddleware.from_crawler(crawler)
    request = Request("https://medium.com/@ev/bomb-0123456789ab")
    bomb = gzip.compress(b"\0" * (10 * 1024 * 1024))
    response = HtmlResponse(
        request.url, body=bomb, headers={"Content-Encoding": "gzip"}, request=request
    )
    with pytest.raises(IgnoreRequest) as raised:
        middleware.process_response(request, response)
    assert failure_status(Failure(raised.value)) == (None, "too_large")
    assert failure_status(Failure(IgnoreRequest("robots.txt forbids it"))) == (
        None,
        "ignore_request",
    )
