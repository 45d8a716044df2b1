"""Scrapyd deployment as docs/deploy.md says: the dependencies installed on the Scrapyd host
(this virtualenv), a plain egg of the project deployed to a real scrapyd, jobs scheduled
with arguments; a job that cannot start is finished with its reason in its log."""

from __future__ import annotations

import json
import os
import re
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
from topics_crawler.dataset import lock
from topics_crawler.site.content import default_site
from topics_crawler.site.server import SiteServer

pytestmark = pytest.mark.integration

USERNAME, PASSWORD = "crawler", "s3cret-for-tests"
PROJECT = "topics_crawler"
JOB_TIMEOUT = 120.0
#: What docs/deploy.md installs on the Scrapyd host (the ``pip install`` line's arguments).
HOST_INSTALL = (
    "-r", "requirements-runtime.txt", "-c", "requirements.txt", "scrapyd", "setuptools<81",
)  # fmt: skip


@pytest.fixture(scope="module")
def scrapyd_host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Scrapyd host's virtualenv as docs/deploy.md builds it: the runtime lock, Scrapyd
    and setuptools<81 — and not the project, which comes in the egg. Its Python."""
    venv = tmp_path_factory.mktemp("host") / "venv"
    uv = Path(sys.executable).with_name("uv")
    for command in (
        [str(uv), "venv", "--quiet", "--python", sys.executable, str(venv)],
        [str(uv), "pip", "install", "--quiet", "--python", str(venv / "bin/python"),
         *HOST_INSTALL],
    ):  # fmt: skip
        done = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
        )
        assert done.returncode == 0, done.stderr[-3000:]
    python = venv / "bin/python"
    project = subprocess.run(
        [str(python), "-c", "import topics_crawler"], cwd=venv, capture_output=True, check=False
    )
    assert project.returncode != 0, "the project must come from the egg"
    return python


@pytest.fixture(scope="module")
def scrapyd(
    tmp_path_factory: pytest.TempPathFactory, scrapyd_host: Path
) -> Iterator[ScrapydServer]:
    workdir = tmp_path_factory.mktemp("scrapyd")
    with ScrapydServer(workdir, USERNAME, PASSWORD, python=str(scrapyd_host)) as server:
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


@pytest.fixture(scope="module")
def client(scrapyd: ScrapydServer, egg: Path) -> ScrapydClient:
    """A client of the scrapyd the egg is deployed to (version r1)."""
    answer = deploy(scrapyd, egg, version="r1")
    assert answer["status"] == "ok"
    assert answer["spiders"] == 1
    return ScrapydClient(scrapyd.url, scrapyd.username, scrapyd.password)


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


def test_the_egg_is_the_package_alone_with_the_scrapy_entry_point(egg: Path) -> None:
    """A plain egg: the project, not its dependencies (the Scrapyd host has them)."""
    with zipfile.ZipFile(egg) as archive:
        names = archive.namelist()
        entry_points = archive.read("EGG-INFO/entry_points.txt").decode()
    assert "[scrapy]" in entry_points
    assert "settings = topics_crawler.settings" in entry_points
    assert "topics_crawler/spiders/topics.py" in names
    assert "topics_crawler/site/medium-schema.graphql" in names
    assert {name.split("/")[0] for name in names} == {"topics_crawler", "EGG-INFO"}
    assert egg.stat().st_size < 5_000_000


def test_scheduled_job_crawls_the_local_site(scrapyd: ScrapydServer, client: ScrapydClient) -> None:
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
    runner = f"args=['{scrapyd.python}', '-m', 'scrapyd.runner', 'crawl', 'topics',"
    assert runner in console_after(scrapyd, job_id)  # the host's Python ran the job


def finished_job(scrapyd: ScrapydServer, job_id: str) -> dict[str, Any]:
    """The job's entry among the finished ones of ``listjobs.json``."""
    answer = requests.get(
        f"{scrapyd.url}/listjobs.json", params={"project": PROJECT},
        auth=(scrapyd.username, scrapyd.password), timeout=10,
    ).json()  # fmt: skip
    (job,) = [job for job in answer["finished"] if job["id"] == job_id]
    return dict(job)


def job_log(scrapyd: ScrapydServer, job: dict[str, Any]) -> list[str]:
    """The lines of the job's log, read where ``listjobs.json`` says it is served."""
    assert job["log_url"] == f"/logs/{PROJECT}/topics/{job['id']}.log", job
    response = requests.get(
        scrapyd.url + job["log_url"], auth=(scrapyd.username, scrapyd.password), timeout=10
    )
    response.raise_for_status()
    return response.text.splitlines()


def console_after(scrapyd: ScrapydServer, job_id: str) -> str:
    """Scrapyd's own log from the start of the job on."""
    console = (scrapyd.workdir / "scrapyd-twistd.log").read_text("utf-8")
    return console[console.index(f"job={job_id!r}") :]


def test_a_bad_argument_finishes_the_job_with_the_reason_in_its_log(
    scrapyd: ScrapydServer, client: ScrapydClient
) -> None:
    """A job Scrapyd started but the crawl refused: finished, one log line saying why, and
    Scrapyd's console shows the line as written (braces included)."""
    job_id = client.schedule(PROJECT, "topics", [("tags", "{ai}"), ("max_stories", "2")])
    assert wait_for_job(client, job_id) == "finished"
    job = finished_job(scrapyd, job_id)
    (line,) = job_log(scrapyd, job)
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[topics_crawler\.commands\.crawl\] ERROR: "
        r"scrapy crawl topics: error: tags: '\{ai\}' is not a tag slug.*",
        line,
    ), line
    assert job["items_url"] is None  # nothing crawled, nothing written
    console = console_after(scrapyd, job_id)
    assert "Unable to format event" not in console
    assert f"stderr] {line.partition('ERROR: ')[2]}" in console
    assert "Process died: exitstatus=2" in console


def test_a_dataset_another_crawl_holds_finishes_the_job_naming_the_holder(
    scrapyd: ScrapydServer,
    client: ScrapydClient,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dataset's lock held by a Scrapyd-like crawl (its command line has ``FEEDS={…}``):
    the second job is finished at once, its log naming the holder."""
    monkeypatch.setattr(sys, "argv", [
        "/usr/lib/python3/dist-packages/scrapyd/runner.py", "crawl", "topics",
        "-s", 'FEEDS={"file:///items/1.jl": {"format": "jsonlines"}}', "-a", "_job=first",
    ])  # fmt: skip
    held = lock.acquire(tmp_path)
    try:
        job_id = client.schedule(PROJECT, "topics", [
            ("tags", "distributed-training"), ("setting", f"DATASET_DIR={tmp_path}"),
        ])  # fmt: skip
        assert wait_for_job(client, job_id) == "finished"
    finally:
        held.release()
    (line,) = job_log(scrapyd, finished_job(scrapyd, job_id))
    assert line.endswith(
        f"ERROR: scrapy crawl topics: error: crawl not started: {tmp_path} is being written "
        f"by another crawl: pid {os.getpid()} on {held.holder['host']} since "
        f"{held.holder['since']} (Scrapyd job first: scrapy crawl topics -s "
        'FEEDS={"file:///items/1.jl": {"format": "jsonlines"}} -a _job=first); '
        "wait for it to finish or choose another DATASET_DIR"
    ), line
    console = console_after(scrapyd, job_id)
    assert "Unable to format event" not in console
    assert f"stderr] {line.partition('ERROR: ')[2]}" in console
    assert "Process died: exitstatus=1" in console
