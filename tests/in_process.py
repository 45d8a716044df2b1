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

Not for crawls whose point is a kill, a signal or several processes (Redis workers,
Scrapyd): those stay subprocesses (:func:`tests.crawl_helpers.run_crawl`).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import io
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from scrapy.cmdline import ScrapyArgumentParser
from scrapy.commands import ScrapyHelpFormatter
from scrapy.crawler import AsyncCrawlerRunner, Crawler
from scrapy.settings import Settings
from scrapy.spiders import Spider
from scrapy.utils.log import TopLevelFormatter, log_scrapy_info
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.project import ENVVAR, get_project_settings

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")

_lock = threading.Lock()
_thread: threading.Thread | None = None
#: The asyncio loop of the reactor :func:`install_reactor` installed (closed at the end).
_loop: asyncio.AbstractEventLoop | None = None


@dataclass
class Completed:
    """What a finished command showed: exit status, stdout and stderr (as text)."""

    returncode: int
    stdout: str
    stderr: str


# --- the session's reactor -------------------------------------------------------


def install_reactor() -> None:
    """Install the project's ``TWISTED_REACTOR`` in this process, unless one is installed.

    Called from ``pytest_configure``: anything importing ``twisted.internet.reactor``
    first would install Twisted's default reactor, which the project's settings refuse.
    """
    from scrapy.utils.reactor import install_reactor as install
    from scrapy.utils.reactor import is_reactor_installed

    global _loop  # noqa: PLW0603
    if not is_reactor_installed():
        settings = get_project_settings()
        install(settings["TWISTED_REACTOR"], settings["ASYNCIO_EVENT_LOOP"])
        _loop = asyncio.get_event_loop_policy().get_event_loop()


def _reactor() -> Any:
    """The installed reactor, running in its thread (started on the first call)."""
    global _thread  # noqa: PLW0603
    from twisted.internet import reactor
    from twisted.python import log

    with _lock:
        if _thread is None:
            # What configure_logging() does for a crawler process: Twisted's log to the
            # "twisted" logger, which logs errors only.
            log.PythonLoggingObserver("twisted").start()
            logging.getLogger("twisted").setLevel(logging.ERROR)
            ready = threading.Event()
            reactor.callWhenRunning(ready.set)
            _thread = threading.Thread(
                target=reactor.run,
                kwargs={"installSignalHandlers": False},
                name="twisted-reactor",
                daemon=True,
            )
            _thread.start()
            if not ready.wait(30):
                raise RuntimeError("the Twisted reactor thread did not start")
    return reactor


def stop_reactor() -> None:
    """Stop the reactor thread, if it was started, and close the loop :func:`install_reactor`
    made (at the end of the session)."""
    if _thread is not None:
        from twisted.internet import reactor

        reactor.callFromThread(reactor.stop)
        _thread.join(timeout=30)
    if _loop is not None and not _loop.is_running():
        _loop.close()


def in_reactor(function: Callable[[], Awaitable[T] | T]) -> concurrent.futures.Future[T]:
    """Call ``function`` in the reactor thread; a future of its (awaited) result."""
    reactor = _reactor()
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def settle(task: asyncio.Future[T]) -> None:
        if task.cancelled():
            future.cancel()
        elif task.exception() is not None:
            future.set_exception(task.exception())  # type: ignore[arg-type]
        else:
            future.set_result(task.result())

    def call() -> None:
        try:
            result = function()
            if isinstance(result, Awaitable):
                asyncio.ensure_future(result).add_done_callback(settle)
            else:
                future.set_result(result)
        except BaseException as exc:  # handed to the waiting thread
            future.set_exception(exc)

    reactor.callFromThread(call)
    return future


# --- the command's output ----------------------------------------------------------


class _CommandStream(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` while a command runs: what the command's threads write
    (the caller's, the reactor's, Twisted's pool) is kept, as a process's own output would
    be; other threads (a test's local site, say) write to the stream as before."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        thread = threading.current_thread()
        if thread is _caller or thread is _thread or thread.name.startswith("PoolThread-"):
            return self.kept.write(text)
        return int(self.stream.write(text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False  # a command's output is captured, as with subprocess.PIPE


_caller: threading.Thread | None = None


@contextmanager
def captured_output() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """Keep the output of the command run in the block; yields (stdout, stderr) buffers."""
    global _caller  # noqa: PLW0603
    out, err = _CommandStream(sys.stdout), _CommandStream(sys.stderr)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr, _caller = out, err, threading.current_thread()  # type: ignore[assignment]
    try:
        yield out.kept, err.kept
    finally:
        sys.stdout, sys.stderr = saved
        _caller = None


# --- a crawler process on that reactor ---------------------------------------------


class ThreadedCrawlerProcess(AsyncCrawlerRunner):
    """``AsyncCrawlerProcess``'s interface on the session's reactor thread.

    :meth:`crawl` starts a crawl in the reactor thread, :meth:`start` waits for all of
    them (the process's ``start`` runs the reactor until they are done), with the
    crawl's ``TWISTED_DNS_RESOLVER`` installed meanwhile.
    """

    def __init__(self, settings: Settings, timeout: float) -> None:
        super().__init__(settings)
        self.timeout = timeout
        self._started: list[concurrent.futures.Future[None]] = []

    def crawl(  # type: ignore[override]
        self, crawler_or_spidercls: type[Spider] | str | Crawler, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[None]:
        started = in_reactor(lambda: super(ThreadedCrawlerProcess, self).crawl(
            crawler_or_spidercls, *args, **kwargs
        ))  # fmt: skip
        self._started.append(started)
        return started

    def start(self, stop_after_crawl: bool = True, install_signal_handlers: bool = True) -> None:
        """Wait for the crawls (``timeout`` seconds at most, then stop them)."""
        done, pending = concurrent.futures.wait(self._started, timeout=self.timeout)
        if pending:
            in_reactor(self.stop).result(60)
            raise TimeoutError(f"in-process crawl still running after {self.timeout} s")
        for future in done:
            if future.exception() is not None:
                logging.getLogger(__name__).error("crawl failed", exc_info=future.exception())

    def install_resolver(self) -> Any:
        """Install ``TWISTED_DNS_RESOLVER`` on the reactor, as the process does; returns
        the name resolver it replaced. Call in the reactor thread."""
        from scrapy import resolver as scrapy_resolver
        from twisted.internet import reactor

        from topics_crawler.safety import resolver as safe_resolver

        scrapy_resolver.dnscache.clear()  # process-wide: a new process starts empty
        safe_resolver.REFUSED.clear()
        previous = reactor.nameResolver
        resolver_class = load_object(self.settings["TWISTED_DNS_RESOLVER"])
        resolver = build_from_crawler(resolver_class, self, reactor=reactor)  # type: ignore[call-overload]
        resolver.install_on_reactor()
        reactor.getThreadPool().adjustPoolsize(
            maxthreads=self.settings.getint("REACTOR_THREADPOOL_MAXSIZE")
        )
        return previous


@contextmanager
def crawl_logging(settings: Settings) -> Iterator[None]:
    """The root log handler a crawler process installs (``LOG_FILE``, ``LOG_LEVEL``,
    ``LOG_FORMAT``…), for the duration of the block; the root logger's level is the
    crawl's meanwhile."""
    filename = settings.get("LOG_FILE")
    handler: logging.Handler
    if filename:
        mode = "a" if settings.getbool("LOG_FILE_APPEND") else "w"
        handler = logging.FileHandler(filename, mode=mode, encoding=settings.get("LOG_ENCODING"))
    elif settings.getbool("LOG_ENABLED"):
        handler = logging.StreamHandler(sys.stderr)  # the command's (captured) stderr
    else:
        handler = logging.NullHandler()
    handler.setFormatter(
        logging.Formatter(fmt=settings.get("LOG_FORMAT"), datefmt=settings.get("LOG_DATEFORMAT"))
    )
    handler.setLevel(settings.get("LOG_LEVEL"))
    if settings.getbool("LOG_SHORT_NAMES"):
        handler.addFilter(TopLevelFormatter(["scrapy"]))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(handler.level)
    log_scrapy_info(settings)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()


@contextmanager
def last_resort_logging() -> Iterator[None]:
    """What a new process does with a warning logged before Scrapy configures logging (the
    crawl command's checks): :data:`logging.lastResort`, the message alone on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


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
