"""SIGKILL at every step of a dataset commit, the first one and a later one, then the same
command again: it completes, with every entity once (issue 21, recovery before judgement).

A forked child runs the crawl (in-process, the synthetic spider) with the file system
calls of the commit counted: each rename, each file flushed, each file or folder
removed, each twin cut back. At step ``k`` it kills itself with SIGKILL. The parent then
runs the same crawl and checks the dataset against one made without a kill.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.test_dataset import crawl, current, rows
from topics_crawler.dataset import commit as commit_module
from topics_crawler.items import Author, Item, Story, TagPage

pytestmark = pytest.mark.slow

FIRST: list[Item] = [
    Story(story_id=f"{i:012x}", title=f"Story {i}", claps=i, tags=["ai"]) for i in range(1, 6)
] + [Author(username="ada", followers=1), TagPage(tag="ai", followers=5)]
LATER: list[Item] = [
    Story(story_id=f"{2:012x}", title="Story 2, edited", claps=200),
    Story(story_id=f"{9:012x}", title="Story 9", claps=9),
    Author(author_id="a1", username="ada", followers=2),
]
#: What a step is: the calls that change the directory.
STEPS: dict[Any, str] = {
    os: "replace rename fsync ftruncate link",
    shutil: "rmtree",
}


def _counting(kill_at: int | None, counter: list[int]) -> Callable[[], None]:
    """Patch the step calls to count (and kill at ``kill_at``); returns the undo."""
    saved: list[tuple[Any, str, Any]] = []
    armed = [False]

    def step() -> None:
        if armed[0]:
            counter[0] += 1
            if counter[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    def wrap(owner: Any, name: str) -> None:
        original = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            step()
            return original(*args, **kwargs)

        saved.append((owner, name, original))
        setattr(owner, name, counted)

    for owner, names in STEPS.items():
        for name in names.split():
            wrap(owner, name)
    wrap(pathlib.Path, "unlink")
    wrap(pathlib.Path, "rename")
    original_commit = commit_module.commit_stage

    def commit_stage(*args: Any, **kwargs: Any) -> Any:
        armed[0] = True
        try:
            return original_commit(*args, **kwargs)
        finally:
            armed[0] = False

    saved.append((commit_module, "commit_stage", original_commit))
    commit_module.commit_stage = commit_stage  # type: ignore[assignment]
    from topics_crawler.dataset import extension

    saved.append((extension, "commit_stage", extension.commit_stage))
    extension.commit_stage = commit_stage  # type: ignore[assignment]

    def undo() -> None:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)

    return undo


def run_child(dataset: Path, items: list[Item], kill_at: int | None, report: Path) -> int:
    """Fork; the child crawls with steps counted (killed at ``kill_at``); its exit status."""
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            counter = [0]
            _counting(kill_at, counter)
            crawl(dataset, items)
            report.write_text(json.dumps(counter[0]))
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def snapshot(dataset: Path) -> dict[str, Any]:
    """What the dataset holds, every entity once (checked), without times."""
    out: dict[str, Any] = {}
    for stem, key in (("stories", "story_id"), ("authors", "username"), ("tag_pages", "tag")):
        table = rows(dataset / f"{stem}.parquet")
        keys = [row[key] for row in table]
        assert len(keys) == len(set(keys)), f"an entity twice in {stem}"
        out[stem] = sorted(
            json.dumps({k: v for k, v in r.items() if k != "scraped_at"}, sort_keys=True)
            for r in table
        )
        twin = current(dataset / f"{stem}.jsonl", key)
        assert len(twin) == len(table), f"the twin of {stem} has every entity"
    manifest = json.loads((dataset / "manifest.json").read_text("utf-8"))
    assert manifest["counts"]["story"] == len(out["stories"])
    assert not list(dataset.glob(".*.next")), "a commit's files left over"
    assert not (dataset / ".staging").exists()
    assert not (dataset / ".commit.json").exists()
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    first = tmp_path_factory.mktemp("ref") / "first"
    crawl(first, FIRST)
    later = first.parent / "later"
    shutil.copytree(first, later)
    crawl(later, LATER)
    return {"first": snapshot(first), "later": snapshot(later), "seed": first}


def steps_of(base: Path | None, items: list[Item], scratch: Path) -> int:
    dataset = scratch / "count"
    if base is not None:
        shutil.copytree(base, dataset)
    report = scratch / "steps.json"
    assert run_child(dataset, items, None, report) == 0
    shutil.rmtree(dataset)
    return int(json.loads(report.read_text()))


@pytest.mark.parametrize("which", ["first", "later"])
def test_a_kill_at_every_step_of_a_commit_then_the_same_command_completes(
    reference: dict[str, Any], tmp_path: Path, which: str
) -> None:
    base = None if which == "first" else reference["seed"]
    items = FIRST if which == "first" else LATER
    total = steps_of(base, items, tmp_path)
    assert total > 20, "the commit's steps are counted"
    for kill_at in range(1, total + 1):
        dataset = tmp_path / f"kill-{kill_at}"
        if base is not None:
            shutil.copytree(base, dataset)
        status = run_child(dataset, items, kill_at, tmp_path / "unused")
        assert status == -signal.SIGKILL, f"step {kill_at} of {total} was not reached"
        crawl(dataset, items)  # the same command
        assert snapshot(dataset) == reference[which], f"killed at step {kill_at} of {total}"
        shutil.rmtree(dataset)
