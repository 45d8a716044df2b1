"""Commands run inside the test process: ``scrapy crawl`` on a reactor thread, and the CLI.

A subprocess costs a Python start and the import of Scrapy, pyarrow and the project
(1–3 s of CPU) before it checks anything. The functions here run the same code in
this process and return what a subprocess would have shown: the exit status, stdout
and stderr.

``scrapy crawl`` runs as ``scrapy.cmdline.execute`` runs it — the project settings,
the project's crawl command parsing ``-a``/``-s``/``-o`` and refusing bad input
(:meth:`topics_crawler.commands.crawl.Command.process_options`), then that command's
own ``run`` — with one difference: its crawler process is a
:class:`ThreadedCrawlerProcess`, an :class:`~scrapy.crawler.AsyncCrawlerRunner` on the
session's Twisted reactor (the project's asyncio reactor, installed by
``tests/conftest.py`` before anything imports ``twisted.internet.reactor``), which
runs in a background thread for the whole test session because a reactor cannot be
restarted. What ``AsyncCrawlerProcess`` does around a crawl is repeated per crawl:
the log goes to ``LOG_FILE`` through a root handler built from the crawl's settings,
Twisted's log is routed to Python logging, the ``TWISTED_DNS_RESOLVER`` is installed
on the reactor (and the previous one put back), and the process-wide DNS caches start
empty, as they do in a new process.

The reactor thread and the captured output are in :mod:`tests.reactor_thread`, the crawler
process and its logging in :mod:`tests.threaded_crawler`.

Not for crawls whose point is a kill, a signal or several processes (Redis workers,
Scrapyd): those stay subprocesses (:func:`tests.crawl_helpers.run_crawl`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapy.cmdline import ScrapyArgumentParser
from scrapy.commands import ScrapyHelpFormatter
from scrapy.utils.project import ENVVAR, get_project_settings

from tests.reactor_thread import captured_output, in_reactor
from tests.threaded_crawler import ThreadedCrawlerProcess, crawl_logging, last_resort_logging

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Completed:
    """What a finished command showed: exit status, stdout and stderr (as text)."""

    returncode: int
    stdout: str
    stderr: str


@contextmanager
def working_directory(folder: Path | None) -> Iterator[None]:
    """Run the block in ``folder`` (None: where we are), as a command started there would
    (relative output paths land there). The project's settings module is named in the
    environment, as scrapy.cfg names it from the project root."""
    if folder is None:
        yield
        return
    saved = Path.cwd(), os.environ.get(ENVVAR)
    os.environ[ENVVAR] = "topics_crawler.settings"
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(saved[0])
        if saved[1] is None:
            os.environ.pop(ENVVAR, None)
        else:
            os.environ[ENVVAR] = saved[1]


def scrapy_crawl(
    *arguments: str, timeout: float = 300, start: bool = True, cwd: Path | None = None
) -> Completed:
    """``scrapy crawl <arguments>`` in this process (see the module docstring).

    ``start=False``: only read the command line (the refusals); a command line that
    would start a crawl fails the test. ``cwd``: run in that folder (outputs with
    relative paths land there), the project's settings named in the environment.
    """
    if cwd is not None:
        with working_directory(cwd):
            return scrapy_crawl(*arguments, timeout=timeout, start=start)
    from topics_crawler.commands.crawl import Command

    if Path.cwd() != ROOT and os.environ.get(ENVVAR) != "topics_crawler.settings":
        raise RuntimeError(f"run pytest from {ROOT}: scrapy crawl reads scrapy.cfg from there")
    command = Command()
    settings = get_project_settings()
    parser = ScrapyArgumentParser(
        formatter_class=ScrapyHelpFormatter,
        usage=f"scrapy crawl {command.syntax()}",
        conflict_handler="resolve",
        description=command.long_desc(),
    )
    settings.setdict(command.default_settings, priority="command")
    command.settings = settings
    command.add_options(parser)
    with captured_output() as (stdout, stderr):
        try:
            opts, args = parser.parse_known_args(args=list(arguments))
            with last_resort_logging():
                command.process_options(args, opts)
            if not start:
                raise AssertionError(f"scrapy crawl {' '.join(arguments)} would start a crawl")
            _run(command, args, opts, timeout)
            returncode = int(command.exitcode)
        except SystemExit as exc:
            returncode = int(exc.code) if isinstance(exc.code, int) else 1
    return Completed(returncode, stdout.getvalue(), stderr.getvalue())


def _run(command: Any, args: list[str], opts: argparse.Namespace, timeout: float) -> None:
    """The command's own ``run``, its crawler process a :class:`ThreadedCrawlerProcess`."""
    process = ThreadedCrawlerProcess(command.settings, timeout)
    command.crawler_process = process
    previous = in_reactor(process.install_resolver).result(60)
    try:
        with crawl_logging(process.settings):
            command.run(args, opts)
    finally:
        from twisted.internet import reactor

        in_reactor(lambda: reactor.installNameResolver(previous)).result(60)


def python_m(*argv: str, new_process: bool = False, timeout: float = 60) -> Completed:
    """``python -m <argv>`` for ``scrapy crawl …`` and ``topics_crawler …``: in this process
    (:func:`scrapy_crawl` reading the command line only, :func:`topics_crawler_cli`), or
    with ``new_process`` in a new one, from the project root, as a user runs it."""
    if new_process:
        process = subprocess.run(
            [sys.executable, "-m", *argv],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return Completed(process.returncode, process.stdout, process.stderr)
    if argv[:2] == ("scrapy", "crawl"):
        return scrapy_crawl(*argv[2:], start=False)
    if argv[:1] == ("topics_crawler",):
        return topics_crawler_cli(*argv[1:])
    raise ValueError(f"no in-process runner for python -m {' '.join(argv)}")


def topics_crawler_cli(*arguments: str, cwd: Path | None = None) -> Completed:
    """``python -m topics_crawler <arguments>`` in this process (``cwd``: in that folder)."""
    from topics_crawler.cli import main

    with working_directory(cwd), captured_output() as (stdout, stderr):
        try:
            returncode = int(main(list(arguments)))
        except SystemExit as exc:
            returncode = int(exc.code) if isinstance(exc.code, int) else 1
    return Completed(returncode, stdout.getvalue(), stderr.getvalue())
