"""``scrapy`` run in this process, killed with SIGKILL by itself the first time a named
function of the project is called (``before``) or returns (``after``): a kill point no
polling from outside can miss, however fast that step has become.

Usage: ``python -m tests.killed_crawl <module>:<function> before|after <scrapy arguments...>``
(``module`` is where the caller looks the function up).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import Any

from scrapy.cmdline import execute


def kill_at(target: str, moment: str) -> None:
    """Patch ``module:function`` so this process is SIGKILLed when the call starts
    (``before``) or once it returns (``after``)."""
    if moment not in ("before", "after"):
        raise SystemExit(f"killed_crawl: moment must be before or after, not {moment!r}")
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)
    original = getattr(module, name)

    def killing(*args: Any, **kwargs: Any) -> Any:
        if moment == "after":
            original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(module, name, killing)


def main(argv: list[str]) -> None:
    target, moment, *scrapy_arguments = argv
    kill_at(target, moment)
    execute(["scrapy", *scrapy_arguments])


if __name__ == "__main__":
    main(sys.argv[1:])
