"""``scrapy`` run in this process, killed with SIGKILL by itself the first time a named
function of the project returns: a kill point no polling from outside can miss, however
fast that step has become.

Usage: ``python -m tests.killed_crawl <module>:<function> <scrapy arguments...>``.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import Any

from scrapy.cmdline import execute


def kill_after(target: str) -> None:
    """Patch ``module:function`` so this process is SIGKILLed once the call returns."""
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)
    original = getattr(module, name)

    def killing(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(module, name, killing)


def main(argv: list[str]) -> None:
    target, *scrapy_arguments = argv
    kill_after(target)
    execute(["scrapy", *scrapy_arguments])


if __name__ == "__main__":
    main(sys.argv[1:])
