"""Write a file atomically: into a temporary sibling, then ``os.replace`` over the target."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_target(target: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it over ``target`` on success.

    Readers see the old file or the new one, never a half-written one. On error the
    temporary file is removed and ``target`` is left untouched.
    """
    temp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        yield temp
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
