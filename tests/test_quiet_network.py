"""Quiet by default: no control server listens, and a crawl touches the network only for
the pages it asked for (no public suffix list download, no lookups of other names).

The crawl runs under a Python audit hook (``sys.addaudithook``) that records every
socket connect, bind and name lookup of the crawling process (a process of its own: an
audit hook cannot be removed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.crawl_helpers import ROOT
from tests.in_process import scrapy_crawl
from tests.services import free_port
from topics_crawler.site.server import SiteView

AUDITED = textwrap.dedent(
    """
    import json, sys
    events = []
    def hook(event, args):
        if event in ("socket.connect", "socket.bind", "socket.getaddrinfo",
                     "socket.gethostbyname", "socket.gethostbyname_ex", "socket.sendto"):
            on_socket = event in ("socket.connect", "socket.bind", "socket.sendto")
            address = args[1] if on_socket else args[0]
            events.append([event, repr(address)])
    sys.addaudithook(hook)
    from scrapy.utils.project import get_project_settings
    get_project_settings()  # imports the project, as `scrapy crawl` does first
    # Scrapy's cookie middleware checks a cookie's Domain against the public suffix
    # list (tldextract): exercise it, with an empty tldextract cache.
    from scrapy import Request, Spider
    from scrapy.http import Response
    from scrapy.utils.test import get_crawler
    from scrapy.downloadermiddlewares.cookies import CookiesMiddleware
    cookies = CookiesMiddleware.from_crawler(get_crawler(Spider))
    request = Request("https://medium.com/tag/llm")
    headers = {"Set-Cookie": "uid=lo_1; Domain=medium.com; Path=/"}
    cookies.process_response(request, Response(request.url, headers=headers, request=request))
    from scrapy.cmdline import execute
    try:
        execute(sys.argv[2:])
    finally:
        with open(sys.argv[1], "w") as out:
            json.dump(events, out)
    """
)


@pytest.mark.integration
def test_a_crawl_reaches_only_the_pages_it_asked_for(site: SiteView, tmp_path: Path) -> None:
    script = tmp_path / "audited.py"
    script.write_text(AUDITED, "utf-8")
    events_path, log_path = tmp_path / "events.json", tmp_path / "crawl.log"
    env = {**os.environ, "TLDEXTRACT_CACHE": str(tmp_path / "tldextract-cache")}
    env.pop("MEDIUM_BASE_URL", None)
    env.pop("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", None)
    command = [sys.executable, str(script), str(events_path), "scrapy", "crawl", "topics"]
    command += ["-a", "tags=distributed-training", "-a", "max_stories=2"]
    command += ["-O", str(tmp_path / "items.jsonl")]
    for setting in (
        f"MEDIUM_BASE_URL={site.base_url}",
        f"LOG_FILE={log_path}",
        "LOG_LEVEL=DEBUG",
        "AUTOTHROTTLE_ENABLED=False",
        "HEALTH_ENABLED=False",
    ):
        command += ["-s", setting]
    process = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    port = site.port
    assert process.returncode == 0, process.stderr[-2000:]
    events = json.loads(events_path.read_text("utf-8"))
    log = log_path.read_text("utf-8")
    assert "Crawled (200)" in log
    connects = {address for event, address in events if event == "socket.connect"}
    assert connects == {repr(("127.0.0.1", port))}, events
    lookups = {
        address for event, address in events if "gethostbyname" in event or "addrinfo" in event
    }
    assert lookups <= {repr("127.0.0.1")}, lookups
    # No telnet console (6023+), no remote-control server (127.0.0.1, port 0). What is
    # left is urllib3's IPv6 probe at import: a bind to ::1, port 0, never listened on.
    binds = {address for event, address in events if event == "socket.bind"}
    assert binds <= {repr(("::1", 0))}, binds
    assert "Telnet" not in log
    assert "Remote control" not in log


@pytest.mark.integration
def test_control_servers_switched_on_listen_on_loopback_and_log_no_password(
    site: SiteView, tmp_path: Path
) -> None:
    password = "telnet-pw-0f3c9a"
    log_path = tmp_path / "crawl.log"
    arguments = ["topics", "-a", "tags=distributed-training", "-a", "max_stories=1"]
    arguments += ["-O", str(tmp_path / "items.jsonl")]
    for setting in (
        f"MEDIUM_BASE_URL={site.base_url}",
        f"LOG_FILE={log_path}",
        "TELNETCONSOLE_ENABLED=True",
        f"TELNETCONSOLE_PASSWORD={password}",
        f"TELNETCONSOLE_PORT={free_port()}",
        "REMOTE_CONTROL_ENABLED=True",
        f"REMOTE_CONTROL_JOBS_DIR={tmp_path / 'jobs'}",
        "HEALTH_ENABLED=False",
    ):
        arguments += ["-s", setting]
    process = scrapy_crawl(*arguments, timeout=180)
    log = log_path.read_text("utf-8")
    assert process.returncode == 0, process.stderr[-2000:]
    assert "Telnet console listening on 127.0.0.1:" in log
    assert "Remote control HTTP server listening" in log
    assert password not in log + process.stderr
