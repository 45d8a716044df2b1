"""``topics-crawler crawl`` and ``topics-crawler scrapy``: Scrapy's command line with the
project's settings, from any folder — no ``scrapy.cfg``, no environment variable.

``topics-crawler crawl [topics] -a tags=ai -O ai.jsonl`` is ``scrapy crawl topics …`` run
inside the project: the same ``-a``/``-s``/``-o``/``-O`` options, the same checks and exit
statuses (the project's crawl command, :mod:`topics_crawler.commands.crawl`). The spider
name may be left out: the project has one spider. ``topics-crawler scrapy <command> …`` is
any other Scrapy command (``settings --get RATE_START``, ``parse``, ``shell``, ``list``).

Both go through Scrapy's own entry point (:func:`scrapy.cmdline.execute`) with
``SCRAPY_SETTINGS_MODULE`` set to ``topics_crawler.settings`` in this process, unless it is
already set (a settings module of your own that imports the project's). A crawl that
``topics-crawler crawl`` refuses says so as ``topics-crawler crawl: error: …``
(:data:`topics_crawler.commands.refusal.INVOKED_AS`), not ``scrapy crawl topics: error: …``.
"""

from __future__ import annotations

import os

from scrapy.cmdline import ScrapyArgumentParser, execute
from scrapy.settings import Settings

from topics_crawler.commands.crawl import Command as CrawlCommand
from topics_crawler.commands.refusal import INVOKED_AS

SETTINGS_MODULE = "topics_crawler.settings"
SPIDER = "topics"  # the project's one spider


def run_scrapy(argv: list[str]) -> int:
    """Run Scrapy's command line ``argv`` (``["crawl", "topics", …]``) with the project's
    settings; its exit status (``SystemExit`` is Scrapy's way to return one)."""
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", SETTINGS_MODULE)
    try:
        execute(["scrapy", *argv])
    except SystemExit as exc:
        return exit_status(exc.code)
    return 0


def exit_status(code: object) -> int:
    """What ``sys.exit(code)`` would make the process's exit status."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return 1  # a message: Python prints it and exits with 1


def names_a_spider(args: list[str]) -> bool:
    """Whether ``scrapy crawl`` arguments hold a positional argument (the spider name),
    read with the crawl command's own options (``-a``, ``-s``, ``-o`` take a value)."""
    command = CrawlCommand()
    command.settings = Settings()
    parser = ScrapyArgumentParser(add_help=False)
    command.add_options(parser)
    parser.add_argument("names", nargs="*")
    known, _ = parser.parse_known_args(args)
    return bool(known.names)


def crawl(argv: list[str], prog: str = "topics-crawler crawl") -> int:
    """``topics-crawler crawl …``: ``scrapy crawl topics …`` (the spider name optional);
    ``prog`` is the command its refusals name (``topics-crawler crawl: error: …``)."""
    asks_help = any(arg in ("-h", "--help") for arg in argv)
    if not asks_help and not names_a_spider(argv):
        argv = [SPIDER, *argv]
    invoked = INVOKED_AS.set(prog)
    try:
        return run_scrapy(["crawl", *argv])
    finally:
        INVOKED_AS.reset(invoked)


def scrapy(argv: list[str]) -> int:
    """``topics-crawler scrapy <command> …``: any Scrapy command inside the project."""
    return run_scrapy(argv)
