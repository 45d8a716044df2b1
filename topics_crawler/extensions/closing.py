"""The last lines of ``scrapy crawl`` on stderr, whatever the log settings: what the run found,
where it wrote it, the verdict and its exit status, and how to resume an interrupted run.

    Run summary: story 12 new, 3 changed, 40 unchanged, 1 failed; author 9 new
      data in out.jsonl
      failures listed in out.failures.jsonl (1)
      log in crawl.log, stats in stats.json
      exit 1 (failed): health check max_failure_ratio failed: 9 of 20 pages failed (45.0%), ...

and for a run stopped by Ctrl-C::

      exit 1 (interrupted)
      to resume: run the same command; it goes on where this one stopped (crawls/llm)

Built from the crawl's final stats and its settings (:func:`closing_lines`, pure), printed by
the project's crawl command once the crawl is over (:mod:`topics_crawler.commands.crawl`):
with ``LOG_FILE`` set they are all the terminal shows of the run's end; without it they come
after the log's last line. Scrapy's dump of every stat is logged at DEBUG only
(``STATS_DUMP`` is off; :mod:`topics_crawler.extensions.stats_file`) and written to
``STATS_FILE`` when it is set. ``SUMMARY_ENABLED=False`` turns the lines off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from topics_crawler.errors import (
    HEALTH_FAILED_STAT,
    STOPPED_LINE_STAT,
    TAG_NOT_FOUND_STAT,
    ExitCode,
    exit_code,
)
from topics_crawler.extensions.failures import FAILURES_FILE_STAT, FAILURES_LISTED_STAT
from topics_crawler.extensions.summary import (
    KEEP_ITEMS,
    VERDICTS,
    found_text,
    output_places,
    tags_not_found,
)
from topics_crawler.output.feeds import local_feed_path

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: The close reason of a crawl stopped by a signal (Ctrl-C, SIGTERM, a Scrapyd cancel).
INTERRUPTED = "shutdown"
INTERRUPTED_VERDICT = "interrupted"
HEALTH_PREFIX = f"{HEALTH_FAILED_STAT}/"


def closing_lines(stats: Mapping[str, Any], settings: BaseSettings) -> list[str]:
    """The lines (see the module docstring); those with nothing to say are left out."""
    code = exit_code(stats)
    why = verdict_reason(stats, code)
    verdict = f"exit {code} ({VERDICTS[code]})" + (f": {why}" if why else "")
    if why == INTERRUPTED_VERDICT:
        verdict = f"exit {code} ({why})"
    lines = [
        f"Run summary: {found_text(stats)}",
        f"  {what_was_written(stats, settings)}",
        failures_line(stats),
        files_line(settings),
        f"  {verdict}",
        resume_line(stats, settings),
    ]
    return [line for line in lines if line]


def what_was_written(stats: Mapping[str, Any], settings: BaseSettings) -> str:
    """``data in <where>`` (a dataset's ``: nothing new or changed``); for feeds, that nothing
    new was written (a feed is left as it was: ``FEED_STORE_EMPTY`` is off); or that the
    items went nowhere."""
    dataset, places = settings.get("DATASET_DIR"), output_places(settings)
    where = ", ".join(places if dataset else [u for u in places if _written(u)] or places)
    if not where:
        return f"no output: the items went nowhere; keep them next time with {KEEP_ITEMS}"
    if int(stats.get("item_scraped_count", 0)):
        return f"data in {where}"
    if dataset:  # the run's snapshot rows and its line in the manifest are written still
        return f"data in {where}: nothing new or changed"
    return f"nothing new written: {where} is as it was"


def _written(uri: str) -> bool:
    """Whether a feed holds something: a local file that exists (an empty feed is not
    stored), or a feed stored elsewhere."""
    path = local_feed_path(uri)
    return path is None or path.exists()


def failures_line(stats: Mapping[str, Any]) -> str | None:
    """``failures listed in <file> (<n>)`` when this run listed any."""
    path = stats.get(FAILURES_FILE_STAT)
    listed = int(stats.get(FAILURES_LISTED_STAT, 0))
    if not path or listed <= 0:
        return None
    return f"  failures listed in {path} ({listed})"


def files_line(settings: BaseSettings) -> str | None:
    """``log in <LOG_FILE>, stats in <STATS_FILE>`` (those set)."""
    files = [
        f"{what} in {settings.get(name)}"
        for what, name in (("log", "LOG_FILE"), ("stats", "STATS_FILE"))
        if settings.get(name)
    ]
    return f"  {', '.join(files)}" if files else None


def verdict_reason(stats: Mapping[str, Any], code: ExitCode) -> str | None:
    """Why the run did not do its job, in one line (None when it did): the failed write or
    the site's refusal that stopped it, an interruption (Ctrl-C), the tags that do not exist,
    the first failed health check, or how it stopped early."""
    if code == ExitCode.DONE:
        return None
    if code == ExitCode.REFUSED or stats.get("write_failed"):
        return str(stats.get(STOPPED_LINE_STAT) or "see the log")
    reason = str(stats.get("finish_reason") or "")
    if reason == INTERRUPTED:  # the checks of a run stopped by hand say nothing of the site
        return INTERRUPTED_VERDICT
    missing = stats.get(TAG_NOT_FOUND_STAT)
    if missing:
        return tags_not_found(missing)
    failed = [
        (key.removeprefix(HEALTH_PREFIX), str(value))
        for key, value in stats.items()
        if key.startswith(HEALTH_PREFIX) and isinstance(value, str)
    ]
    if failed:
        name, detail = failed[0]
        line = detail if name.startswith(("coverage/", "graphql_drift/")) else (
            f"health check {name} failed: {detail}"
        )  # fmt: skip
        return line + (f" (and {len(failed) - 1} more in the log)" if len(failed) > 1 else "")
    return f"stopped early ({reason})" if reason else None


def resume_line(stats: Mapping[str, Any], settings: BaseSettings) -> str | None:
    """For an interrupted run: what the same command does next, or what to add so that it
    resumes."""
    if stats.get("finish_reason") != INTERRUPTED:
        return None
    jobdir, dataset = settings.get("JOBDIR"), settings.get("DATASET_DIR")
    if settings.get("REDIS_URL"):
        return "  to resume: run the same command; the crawl's queue is in Redis"
    if jobdir:
        return f"  to resume: run the same command; it goes on where this one stopped ({jobdir})"
    if dataset:
        return (
            f"  to resume: run the same command; what this run found is in {dataset}, the rest "
            "is fetched (add -s JOBDIR=crawls/<name> to go on where it stopped)"
        )
    return (
        "  to resume next time: add -s JOBDIR=crawls/<name> (with -o to append) or "
        "-s DATASET_DIR=data/<name>; this run starts over if run again"
    )
