"""A small tmpfs for write-failure tests: mount one, fill it to leave what a test needs.

Mounting needs root and a kernel that allows it; a test that cannot mount is skipped with
the reason (the full-disk tests of the project run on such a disk, nowhere else).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def mounted_tmpfs(mount_point: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of ``size`` on ``mount_point`` (made), unmounted when the block ends."""
    mount_point.mkdir(parents=True, exist_ok=True)
    mount = shutil.which("mount")
    if os.geteuid() != 0 or mount is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def leave_free(disk: Path, kib: int) -> Path:
    """Fill ``disk`` up to ``kib`` KiB of free space (0: full); the filler file."""
    filler = disk / "filler"
    free = shutil.disk_usage(disk).free
    with filler.open("ab") as out:
        try:
            out.write(b"\0" * max(0, free - kib * 1024))
            out.flush()
        except OSError:  # full before the last byte: as full as it gets
            pass
    return filler
