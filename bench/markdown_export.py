"""Markdown export benchmark: ``topics-crawler markdown`` on 10,000 stories, against plain
file writes of the same text measured in the same run.

    .venv/bin/python -m bench.markdown_export [--stories N] [--layout hugo|jekyll]

Synthetic stories (deterministic: about 1,400 words of Markdown each, three figures, two of
them stored as images, tags, dates) are written as a ``stories.parquet`` with the project's
Parquet exporter, then timed, each the best of ``--rounds``:

* ``read``: the stories' columns read back into records (what the command reads);
* ``first``: :func:`export_stories` into an empty folder (every file written, images
  hard-linked into the site);
* ``again``: the same export once more (nothing changed: nothing written);
* ``one_percent``: again after 1 % of the stories gained claps (those files rewritten);
* ``baseline``: the same file texts written with ``Path.write_text``, nothing else.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from topics_crawler.items import Story
from topics_crawler.output.exporters import ParquetItemExporter, records_of
from topics_crawler.output.markdown_files import (
    COLUMNS,
    LAYOUTS,
    export_stories,
    story_path,
    story_text,
)

WORDS = ("gradient", "shard", "replica", "optimizer", "cluster", "batch", "tensor", "kernel")
MIRO = "https://miro.medium.com/v2/resize:fit:1400/"


def synthetic_story(index: int) -> Story:
    paragraphs = [
        " ".join(WORDS[(index + k + p) % len(WORDS)] for k in range(70)) + "." for p in range(20)
    ]
    figures = [f"![figure {n}]({MIRO}1*img-{index}-{n}.png)\n*Caption {n}*" for n in range(3)]
    body = "\n\n".join(
        paragraphs[:5] + figures[:1] + paragraphs[5:12] + figures[1:] + paragraphs[12:]
    )
    images = [
        {
            "role": "body",
            "url": f"{MIRO}1*img-{index}-{n}.png",
            "path": f"images/full/{index:08x}{n}.jpg" if n < 2 else None,
            "checksum": "0" * 32 if n < 2 else None,
            "failure": None if n < 2 else "too_large",
        }
        for n in range(3)
    ]
    return Story(
        story_id=f"{index:012x}",
        url=f"https://medium.com/@writer{index % 500}/notes-{index}-{index:012x}",
        title=f"Notes on {WORDS[index % len(WORDS)]} number {index}",
        subtitle="What the numbers say",
        author_username=f"writer{index % 500}",
        author_name=f"Writer {index % 500}",
        published_at=f"2025-{1 + index % 12:02d}-{1 + index % 28:02d}T08:00:00Z",
        updated_at="2025-12-01T08:00:00Z",
        tags=["distributed-training", WORDS[index % len(WORDS)]],
        claps=index * 3,
        is_member_only=index % 5 == 0,
        markdown=body,
        images=images,
        scraped_at="2026-01-05T12:00:00Z",
    )


def write_dataset(directory: Path, count: int) -> None:
    """``stories.parquet`` and the images its rows name (tiny files)."""
    (directory / "images" / "full").mkdir(parents=True)
    with (directory / "stories.parquet").open("wb") as file:
        exporter = ParquetItemExporter(file)
        exporter.start_exporting()
        for index in range(count):
            story = synthetic_story(index)
            exporter.export_item(story)
            for image in story.images:
                if image["path"]:
                    (directory / str(image["path"])).write_bytes(b"\xff\xd8jpeg")
        exporter.finish_exporting()


def best(rounds: int, setup: Callable[[], None], run: Callable[[], Any]) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(rounds):
        setup()
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stories", type=int, default=10_000)
    parser.add_argument("--layout", choices=sorted(LAYOUTS), default="hugo")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    layout = LAYOUTS[args.layout]
    with tempfile.TemporaryDirectory() as scratch:
        dataset, site, plain = Path(scratch, "ds"), Path(scratch, "site"), Path(scratch, "plain")
        write_dataset(dataset, args.stories)
        columns = list(COLUMNS)

        def read() -> list[dict[str, Any]]:
            return records_of(pq.read_table(dataset / "stories.parquet", columns=columns))

        read_s, stories = best(args.rounds, lambda: None, read)

        def fresh() -> None:
            shutil.rmtree(site, ignore_errors=True)

        first_s, result = best(
            args.rounds, fresh, lambda: export_stories(stories, dataset, site, layout)
        )
        assert len(result.written) == args.stories
        again_s, result = best(
            args.rounds, lambda: None, lambda: export_stories(stories, dataset, site, layout)
        )
        assert result.written == []
        changed = list(stories)

        def touch() -> None:
            for i in range(0, len(changed), 100):
                changed[i] = changed[i] | {"claps": int(changed[i]["claps"] or 0) + 1}

        one_s, result = best(
            args.rounds, touch, lambda: export_stories(changed, dataset, site, layout)
        )
        assert len(result.written) == len(range(0, len(changed), 100))
        texts = [(story_path(s, layout), story_text(s)) for s in stories]

        def plain_setup() -> None:
            shutil.rmtree(plain, ignore_errors=True)
            for folder in {Path(p).parent for p, _ in texts}:
                (plain / folder).mkdir(parents=True, exist_ok=True)

        def plain_write() -> None:
            for path, text in texts:
                (plain / path).write_text(text, "utf-8")

        base_s, _ = best(args.rounds, plain_setup, plain_write)
        size = sum((plain / p).stat().st_size for p, _ in texts)
    n = args.stories
    print(f"{n:,} stories, {size / n / 1024:.1f} KiB of Markdown each, layout {args.layout}")
    print(f"read the story columns     {read_s:7.2f} s")
    print(f"first export               {first_s:7.2f} s  ({n / first_s:,.0f} stories/s)")
    print(f"again, nothing changed     {again_s:7.2f} s")
    print(f"again, 1% changed          {one_s:7.2f} s")
    print(f"baseline: write the texts  {base_s:7.2f} s  (first export = {first_s / base_s:.1f}x)")


if __name__ == "__main__":
    main()
