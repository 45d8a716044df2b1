"""The session's Twisted reactor, run in a background thread (a reactor cannot be restarted),
and the output of a command run in this process: what the command's threads write to
``sys.stdout``/``sys.stderr`` is kept, as a process's own output would be. See
:mod:`tests.in_process`."""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from scrapy.utils.project import get_project_settings

T = TypeVar("T")

_lock = threading.Lock()
_thread: threading.Thread | None = None
#: The asyncio loop of the reactor :func:`install_reactor` installed (closed at the end).
_loop: asyncio.AbstractEventLoop | None = None


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
