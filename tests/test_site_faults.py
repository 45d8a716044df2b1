"""Fault injection on the local site: the plan's decisions, and each fault kind on the wire."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import time
from collections import Counter
from email.utils import parsedate_to_datetime

import pytest

from topics_crawler.middlewares.retry_after import parse_retry_after
from topics_crawler.pages import parse_page
from topics_crawler.pages._blocked import detect_block
from topics_crawler.pages.state import StateError, find_apollo_state
from topics_crawler.site.content import SiteContent, default_site
from topics_crawler.site.faults import KINDS, NO_RESPONSE, FaultPlan
from topics_crawler.site.server import SiteServer

PATHS = [f"/@author{i}" for i in range(2000)]


@pytest.fixture(scope="module")
def content() -> SiteContent:
    return default_site()


@pytest.fixture
def story_path(content: SiteContent) -> str:
    return content.story_path(next(iter(content.stories.values())))


def serve_one_kind(content: SiteContent, kind: str, **plan: object) -> SiteServer:
    """A server faulting the first request of every path with ``kind``."""
    options: dict[str, object] = {"rate": 1.0, "kinds": (kind,), "max_faults": 1, **plan}
    return SiteServer(content, faults=FaultPlan(**options))  # type: ignore[arg-type]


def fetch(server: SiteServer, path: str, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` without following redirects."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


# --- the plan ------------------------------------------------------------------------


def test_decisions_depend_only_on_seed_path_and_attempt() -> None:
    plan = FaultPlan(rate=0.2, seed=7)
    first = [plan.fault_for(path, 1) for path in PATHS]
    assert first == [FaultPlan(rate=0.2, seed=7).fault_for(path, 1) for path in PATHS]
    assert first != [FaultPlan(rate=0.2, seed=8).fault_for(path, 1) for path in PATHS]
    assert first != [plan.fault_for(path, 2) for path in PATHS], "a retry rolls again"


def test_rate_and_kind_mix_are_what_was_asked() -> None:
    plan = FaultPlan(rate=0.2, seed=7)
    faults = Counter(plan.fault_for(path, 1) for path in PATHS)
    faulted = len(PATHS) - faults.pop(None)
    assert 0.17 < faulted / len(PATHS) < 0.23
    assert set(faults) == set(KINDS)
    assert min(faults.values()) > faulted / len(KINDS) / 2


def test_no_path_is_faulted_more_than_max_faults_times() -> None:
    plan = FaultPlan(rate=1.0, seed=1, max_faults=2)
    assert [plan.fault_for("/@a", attempt) is None for attempt in (1, 2, 3, 4)] == [
        False,
        False,
        True,
        True,
    ]


def test_parse_reads_every_setting() -> None:
    plan = FaultPlan.parse(
        "rate=0.25, seed=3, kinds=500+hang, deleted=ae81651e4034+0123456789ab,"
        " permanent=/@gone, hang=0.5, retry_after=2, max_faults=4"
    )
    assert plan == FaultPlan(
        rate=0.25,
        seed=3,
        kinds=("500", "hang"),
        deleted=frozenset({"ae81651e4034", "0123456789ab"}),
        permanent=frozenset({"/@gone"}),
        hang=0.5,
        retry_after=2,
        max_faults=4,
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("rate=2", "rate must be between 0 and 1"),
        ("kinds=500+teapot", "unknown fault kinds ['teapot']"),
        ("color=red", "unknown fault setting 'color'"),
        ("rate", "expected name=value"),
        ("seed=x", "invalid literal"),
        ("hang=-1", "must not be negative"),
    ],
)
def test_parse_refuses_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        FaultPlan.parse(spec)


def test_deleted_story_matches_every_path_of_the_story() -> None:
    plan = FaultPlan(deleted=frozenset({"ae81651e4034"}))
    assert plan.is_deleted("/pub/some-title-ae81651e4034")
    assert plan.is_deleted("/p/ae81651e4034")
    assert plan.is_deleted("/_host/tensorbeat.example/some-title-ae81651e4034/")
    assert not plan.is_deleted("/pub/some-title-be81651e4034")


# --- each kind on the wire ------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503])
def test_error_status_then_the_page(content: SiteContent, story_path: str, status: int) -> None:
    with serve_one_kind(content, str(status)) as site:
        assert fetch(site, story_path)[0] == status
        assert fetch(site, story_path)[0] == 200
        assert site.requests == [("GET", story_path, status), ("GET", story_path, 200)]
        assert site.faults is not None
        assert site.faults.injected == [(story_path, 1, str(status))]


def test_429_with_retry_after_in_seconds(content: SiteContent, story_path: str) -> None:
    with serve_one_kind(content, "429", retry_after=7) as site:
        status, headers, _ = fetch(site, story_path)
    assert (status, parse_retry_after(headers["Retry-After"])) == (429, 7.0)


def test_429_with_retry_after_as_http_date(content: SiteContent, story_path: str) -> None:
    with serve_one_kind(content, "429-date", retry_after=30) as site:
        status, headers, _ = fetch(site, story_path)
    assert status == 429
    assert parsedate_to_datetime(headers["Retry-After"]).tzinfo is not None
    wait = parse_retry_after(headers["Retry-After"])
    assert wait is not None
    assert 28 <= wait <= 30


def test_hang_sends_nothing_past_the_client_timeout(content: SiteContent, story_path: str) -> None:
    with serve_one_kind(content, "hang", hang=1.0) as site:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            fetch(site, story_path, timeout=0.3)
        assert time.monotonic() - started < 1.0
        time.sleep(0.8)  # the handler gives up and logs
        assert site.requests == [("GET", story_path, NO_RESPONSE)]


def test_reset_aborts_the_connection(content: SiteContent, story_path: str) -> None:
    with serve_one_kind(content, "reset") as site:
        with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
            fetch(site, story_path)
        assert fetch(site, story_path)[0] == 200


def test_truncate_sends_half_the_declared_body(content: SiteContent, story_path: str) -> None:
    with (
        serve_one_kind(content, "truncate") as site,
        socket.create_connection(("127.0.0.1", site.port), timeout=5) as sock,
    ):
        sock.sendall(f"GET {story_path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        raw = b"".join(iter(lambda: sock.recv(65536), b""))
    head, _, body = raw.partition(b"\r\n\r\n")
    declared = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    assert head.startswith(b"HTTP/1.1 200")
    assert 0 < len(body) == declared // 2


def test_broken_state_is_a_200_whose_state_json_does_not_decode(
    content: SiteContent, story_path: str
) -> None:
    with serve_one_kind(content, "broken-state") as site:
        status, _, body = fetch(site, story_path)
        _, _, good = fetch(site, story_path)
    assert status == 200
    with pytest.raises(StateError):
        find_apollo_state(body.decode())
    assert find_apollo_state(good.decode())
    result = parse_page(body, "https://medium.com" + story_path, kind="story")
    assert any("broken Apollo state" in error for error in result.errors)
    assert result.items_of("story"), "the HTML layers still give a story"


@pytest.mark.parametrize("status", [403, 503])
def test_challenge_is_recognised_as_one(content: SiteContent, status: int) -> None:
    paths = [content.story_path(story) for story in content.stories.values()]
    path = next(p for p in paths if (len(p) % 2 == 1) == (status == 403))
    with serve_one_kind(content, "challenge") as site:
        got, headers, body = fetch(site, path)
    assert got == status
    block = detect_block(got, "http://127.0.0.1" + path, body, headers)
    assert block is not None
    assert block.reason == "challenge"
    assert b"<title>Just a moment...</title>" in body


def test_signin_redirect_lands_on_a_signin_page(content: SiteContent, story_path: str) -> None:
    with serve_one_kind(content, "signin") as site:
        status, headers, _ = fetch(site, story_path)
        location = headers["Location"]
        landed, _, body = fetch(site, location)
    assert status == 302
    assert location.startswith("/m/signin?operation=login&redirect=https%3A%2F%2Fmedium.com%2F")
    assert landed == 200
    assert b"Sign in" in body
    block = detect_block(status, "http://127.0.0.1" + story_path, b"", {"Location": location})
    assert block is not None
    assert block.reason == "signin_wall"


def test_deleted_stories_and_permanent_failures_never_recover(
    content: SiteContent, story_path: str
) -> None:
    story_id = story_path.rsplit("-", 1)[1]
    plan = FaultPlan(deleted=frozenset({story_id}), permanent=frozenset({"/@varuntej"}))
    with SiteServer(content, faults=plan) as site:
        assert [fetch(site, story_path)[0] for _ in range(4)] == [404] * 4
        assert [fetch(site, f"/p/{story_id}")[0] for _ in range(2)] == [404] * 2
        assert [fetch(site, "/@varuntej")[0] for _ in range(4)] == [500] * 4
        assert site.faults is not None
        assert site.faults.counts() == {"deleted": 6, "permanent": 4}


def test_robots_txt_is_never_faulted(content: SiteContent) -> None:
    with SiteServer(content, faults=FaultPlan(rate=1.0, max_faults=10)) as site:
        assert {fetch(site, "/robots.txt")[0] for _ in range(5)} == {200}


def test_command_line_serves_with_faults(content: SiteContent, story_path: str) -> None:
    command = [
        sys.executable,
        "-m",
        "topics_crawler.site",
        "--faults",
        "rate=1,kinds=503,max_faults=1",
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            base_url = process.stdout.readline().strip()
            port = int(base_url.rsplit(":", 1)[1])
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            statuses = []
            for _ in range(2):
                connection.request("GET", story_path)
                response = connection.getresponse()
                response.read()
                statuses.append(response.status)
            connection.close()
            assert statuses == [503, 200]
        finally:
            process.terminate()


def test_command_line_refuses_a_bad_spec_in_one_line() -> None:
    command = [sys.executable, "-m", "topics_crawler.site", "--faults", "rate=2"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "python -m topics_crawler.site: error: argument --faults: "
        "rate must be between 0 and 1, not 2.0"
    )
    assert "Traceback" not in done.stderr
