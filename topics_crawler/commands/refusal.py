"""Where the one line of a crawl that does not start goes: stderr, and ``LOG_FILE``.

A crawl refused before Scrapy starts (a bad ``-a`` or ``-s``, a dataset another crawl
holds, Redis down) says why in one line on stderr. With ``LOG_FILE`` set the line is also
written there, formatted as Scrapy formats its log (``LOG_FORMAT``): a terminal user who
sends the log to a file finds it there too, and a Scrapyd job that could not start gets a
log file holding the reason (Scrapyd's ``listjobs.json`` then gives its ``log_url``).

Scrapyd logs each chunk a job writes to stderr through Twisted's logger *as a format
string* (``scrapyd/launcher.py``, ``errReceived``): a ``{`` or ``}`` in the line — a
``-s FEEDS={…}`` in a command line — makes its console print "Unable to format event"
instead of the line. Under Scrapyd (a ``_job`` spider argument) the braces written to
stderr are doubled, so its console shows them once.

Each line begins with the command the person ran (:func:`command_name`): ``scrapy crawl
topics: error: …``, or ``topics-crawler crawl: error: …`` when the ``topics-crawler`` entry
point ran Scrapy's command line (it says so through :data:`INVOKED_AS`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING

from topics_crawler.errors import ExitCode

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

logger = logging.getLogger("topics_crawler.commands.crawl")

#: The spider argument Scrapyd adds to every job it starts (its job id).
SCRAPYD_JOB_ARGUMENT = "_job"
#: The command the person ran, when it is not ``scrapy crawl``: set by the entry point that
#: runs Scrapy's command line for them (``topics-crawler crawl``,
#: :mod:`topics_crawler.cli.scrapy_command`) while it runs.
INVOKED_AS: ContextVar[str | None] = ContextVar("invoked_as", default=None)


class Refusal(Exception):
    """The crawl does not start: :attr:`line` says why (or that there is nothing to do),
    :attr:`status` is the exit status."""

    def __init__(self, line: str, status: int = ExitCode.USAGE) -> None:
        super().__init__(line)
        self.line = line
        self.status = status


def scrapyd_job(spider_arguments: Mapping[str, str] | Iterable[str]) -> str | None:
    """The Scrapyd job id among the spider arguments (a dict, or the raw ``NAME=VALUE``
    list when ``-a`` could not be read), None outside Scrapyd."""
    if isinstance(spider_arguments, Mapping):
        job = spider_arguments.get(SCRAPYD_JOB_ARGUMENT)
        return str(job) if job is not None else None
    for argument in spider_arguments:
        name, _, value = str(argument).partition("=")
        if name == SCRAPYD_JOB_ARGUMENT:
            return value
    return None


def command_name(spider: str | None) -> str:
    """The command a refusal line begins with: what :data:`INVOKED_AS` holds, else
    ``scrapy crawl <spider>`` (``scrapy crawl`` while the spider is not known)."""
    invoked = INVOKED_AS.get()
    if invoked is not None:
        return invoked
    return f"scrapy crawl {spider}" if spider else "scrapy crawl"


def command_says(spider: str | None, text: str, kind: str | None = "error") -> str:
    """``<command>: <kind>: <text>`` (``<command>: <text>`` without a ``kind``), the command
    named by :func:`command_name`: ``scrapy crawl topics: error: give at least one tag``."""
    said = f"{kind}: {text}" if kind else text
    return f"{command_name(spider)}: {said}"


def console_line(line: str, under_scrapyd: bool) -> str:
    """``line`` as written to stderr: braces doubled under Scrapyd (see the module)."""
    return line.replace("{", "{{").replace("}", "}}") if under_scrapyd else line


def log_to_file(settings: BaseSettings, line: str, level: int = logging.ERROR) -> None:
    """Append ``line`` to ``LOG_FILE`` as a log record of ``level``, formatted with
    ``LOG_FORMAT``/``LOG_DATEFORMAT``; nothing without ``LOG_FILE``, with logging off or
    below ``LOG_LEVEL``, or when the file cannot be written (stderr has the line)."""
    log_file = settings.get("LOG_FILE")
    if not log_file or not settings.getbool("LOG_ENABLED", True):
        return
    configured = settings.get("LOG_LEVEL") or "DEBUG"
    threshold = (
        configured if isinstance(configured, int) else logging.getLevelName(str(configured).upper())
    )
    if isinstance(threshold, int) and level < threshold:
        return
    record = logger.makeRecord(logger.name, level, __file__, 0, "%s", (line,), None)
    text = logging.Formatter(settings.get("LOG_FORMAT"), settings.get("LOG_DATEFORMAT")).format(
        record
    )
    mode = "a" if settings.getbool("LOG_FILE_APPEND", True) else "w"
    try:
        with open(str(log_file), mode, encoding=settings.get("LOG_ENCODING") or "utf-8") as log:
            log.write(text + "\n")
    except OSError:
        return
