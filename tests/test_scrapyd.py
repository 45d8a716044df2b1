"""Scrapyd deployment: the project egg deployed to a real scrapyd and scheduled with arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from scrapyd_client.pyclient import ScrapydClient

from tests.services import ROOT, ScrapydServer, building_in_the_project
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

USERNAME, PASSWORD = "crawler", "s3cret-for-tests"
PROJECT = "topics_crawler"
JOB_TIMEOUT = 120.0


@pytest.fixture(scope="module")
def scrapyd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScrapydServer]:
    with ScrapydServer(tmp_path_factory.mktemp("scrapyd"), USERNAME, PASSWORD) as server:
        yield server


@pytest.fixture(scope="module")
def egg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The egg ``scrapyd-deploy`` builds from setup.py and scrapy.cfg."""
    path = tmp_path_factory.mktemp("egg") / "topics_crawler.egg"
    deploy = Path(sys.executable).with_name("scrapyd-deploy")
    with building_in_the_project():
        result = subprocess.run(
            [str(deploy), "--build-egg", str(path)],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return path


def deploy(scrapyd: ScrapydServer, egg: Path, version: str) -> dict[str, Any]:
    """What ``scrapyd-deploy`` does after building: POST the egg to addversion.json."""
    with egg.open("rb") as file:
        response = requests.post(
            f"{scrapyd.url}/addversion.json",
            data={"project": PROJECT, "version": version},
            files=[("egg", ("project.egg", file))],
            auth=(scrapyd.username, scrapyd.password),
            timeout=60,
        )
    response.raise_for_status()
    return dict(response.json())


def wait_for_job(client: ScrapydClient, job_id: str) -> str:
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline:
        state = client.status(job_id, project=PROJECT)["currstate"]
        if state == "finished":
            return str(state)
        time.sleep(0.5)
    raise TimeoutError(f"scrapyd job {job_id} not finished after {JOB_TIMEOUT:.0f} s")


def test_deploy_target_reads_credentials_from_the_environment() -> None:
    """scrapyd-client expands ``${SCRAPYD_USERNAME}``/``${SCRAPYD_PASSWORD}`` in scrapy.cfg."""
    code = (
        "import json; from scrapyd_client.utils import _get_targets; "
        "print(json.dumps(_get_targets()['local']))"
    )
    env = {**os.environ, "SCRAPYD_USERNAME": "alice", "SCRAPYD_PASSWORD": "pa55"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    target = json.loads(result.stdout)
    assert target["url"] == "http://127.0.0.1:6800"
    assert (target["username"], target["password"]) == ("alice", "pa55")
    assert target["project"] == PROJECT


def test_unauthenticated_requests_are_refused(scrapyd: ScrapydServer) -> None:
    assert requests.get(f"{scrapyd.url}/daemonstatus.json", timeout=5).status_code == 401
    wrong = requests.get(f"{scrapyd.url}/listprojects.json", auth=("crawler", "x"), timeout=5)
    assert wrong.status_code == 401


def test_egg_is_the_package_with_the_scrapy_entry_point(egg: Path) -> None:
    with zipfile.ZipFile(egg) as archive:
        names = archive.namelist()
        entry_points = archive.read("EGG-INFO/entry_points.txt").decode()
    assert "[scrapy]" in entry_points
    assert "settings = topics_crawler.settings" in entry_points
    assert "topics_crawler/spiders/topics.py" in names
    assert not [name for name in names if name.startswith(("tests/", "bench/"))]


def test_scheduled_job_crawls_the_local_site(scrapyd: ScrapydServer, egg: Path) -> None:
    answer = deploy(scrapyd, egg, version="r1")
    assert answer["status"] == "ok"
    assert answer["spiders"] == 1
    client = ScrapydClient(scrapyd.url, scrapyd.username, scrapyd.password)
    assert client.spiders(PROJECT) == ["topics"]
    with SiteServer(default_site()) as site:
        job_id = client.schedule(
            PROJECT,
            "topics",
            [
                ("setting", f"MEDIUM_BASE_URL={site.base_url}"),
                ("setting", "AUTOTHROTTLE_ENABLED=False"),
                ("tags", "distributed-training"),
                ("follow", "stories"),
            ],
        )
        wait_for_job(client, job_id)
        assert site.count("/tag/distributed-training") == 1
    items_file = scrapyd.workdir / "items" / PROJECT / "topics" / f"{job_id}.jl"
    log_file = scrapyd.workdir / "logs" / PROJECT / "topics" / f"{job_id}.log"
    log = log_file.read_text("utf-8")
    items = [json.loads(line) for line in items_file.read_text("utf-8").splitlines()]
    types = {item["item_type"] for item in items}
    assert {"tag_page", "story"} <= types, log[-3000:]
    stories = [item for item in items if item["item_type"] == "story"]
    assert len(stories) == len({story["story_id"] for story in stories}) > 1
    assert all(story["url"].startswith("https://medium.com/") for story in stories)
    assert "INFO: Spider closed (finished)" in log
    assert "Run summary: story " in log
