"""Peak memory of ``extract`` on one very big story page, against the page's size.

    .venv/bin/python -m bench.extract_memory [--megabytes 200]

Writes a generated story page of about ``--megabytes`` MB to a temporary folder —
a 2025-style page whose Apollo state holds the story with one ``Paragraph`` entity
per paragraph and whose ``<article>`` repeats the same paragraphs, each about 1 KB
of mixed ASCII and non-ASCII text — then runs ``python -m topics_crawler extract``
on it in a fresh interpreter and reads that child's peak RSS (``getrusage``).
The baseline, measured the same way in the same run, is the interpreter running
``extract`` on a small page (imports and all). Reported: peak RSS, peak minus
baseline, and that growth as a multiple of the page size (target: a few times).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POST_ID = "b16b16b16b16"
URL = f"https://medium.com/@bigpage/a-very-long-story-{POST_ID}"
WORDS = ["river", "silt", "delta", "tide", "marsh", "heron", "reed", "flood", "bank", "ford"]


def paragraph_text(index: int) -> str:
    """About 1 KB of text; every tenth paragraph carries non-ASCII characters."""
    words = " ".join(WORDS[(index + k) % len(WORDS)] for k in range(160))
    return (f"§{index} — œuvre déjà vu " if index % 10 == 0 else f"{index}. ") + words


def write_page(path: Path, megabytes: int) -> int:
    """Write the page (streamed, never whole in memory here); its size in bytes."""
    count = megabytes * 1_000_000 // 1_950
    with path.open("w", encoding="utf-8") as out:
        out.write(
            "<!DOCTYPE html><html><head><meta charset='utf-8'>"
            "<title>A very long story | by Big Page | Medium</title>"
            '<meta property="og:type" content="article">'
            f'<meta property="al:ios:url" content="medium://p/{POST_ID}">'
            f'<link rel="canonical" href="{URL}"></head><body><article><h1>A very long story</h1>'
        )
        for index in range(count):
            out.write(f"<p>{paragraph_text(index)}</p>")
        out.write("</article><script>window.__APOLLO_STATE__ = {")
        out.write(f'"ROOT_QUERY":{{"postResult({{\\"id\\":\\"{POST_ID}\\"}})":')
        out.write(f'{{"__ref":"Post:{POST_ID}"}}}},')
        out.write(
            '"User:u1":{"__typename":"User","id":"u1","name":"Big Page","username":"bigpage"},'
        )
        for index in range(count):
            entity = {"__typename": "Paragraph", "name": f"p{index}", "type": "P"}
            entity["text"] = paragraph_text(index)
            out.write(f'"Paragraph:{POST_ID}_{index}":{json.dumps(entity, ensure_ascii=False)},')
        refs = ",".join(f'{{"__ref":"Paragraph:{POST_ID}_{index}"}}' for index in range(count))
        out.write(
            f'"Post:{POST_ID}":{{"__typename":"Post","id":"{POST_ID}","title":"A very long story",'
            f'"creator":{{"__ref":"User:u1"}},"firstPublishedAt":1700000000000,'
            f'"content({{\\"postMeteringOptions\\":{{}}}})":{{"isLockedPreviewOnly":false,'
            f'"bodyModel":{{"paragraphs":[{refs}]}}}}}}'
        )
        out.write("}</script></body></html>")
    return path.stat().st_size


def peak_rss_of_extract(page: Path) -> tuple[float, float]:
    """``(peak RSS MiB, seconds)`` of one ``extract`` run on ``page`` in a fresh process."""
    started = time.perf_counter()
    code = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-m', 'topics_crawler', 'extract', sys.argv[1],"
        " '--url', sys.argv[2]], stdout=subprocess.DEVNULL, check=False)\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(done.returncode, rss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(page), URL],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if out[0] != "0":
        raise SystemExit(f"extract failed with exit status {out[0]}")
    return int(out[1]) / 1024, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=200, help="size of the big page")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="extract-memory-") as folder:
        small, big = Path(folder) / "small.html", Path(folder) / "big.html"
        small_size = write_page(small, 1)
        big_size = write_page(big, args.megabytes)
        base_rss, base_seconds = peak_rss_of_extract(small)
        peak, seconds = peak_rss_of_extract(big)
    size_mib = big_size / 2**20
    growth = peak - base_rss
    print(f"page: {big_size / 1e6:.0f} MB ({size_mib:.0f} MiB); small: {small_size / 1e6:.1f} MB")
    print(f"baseline extract: peak RSS {base_rss:.0f} MiB in {base_seconds:.1f} s")
    print(f"big extract: peak RSS {peak:.0f} MiB in {seconds:.1f} s")
    print(f"growth over baseline: {growth:.0f} MiB = {growth / size_mib:.1f}x the page size")
    print(f"peak RSS / page size: {peak / size_mib:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
