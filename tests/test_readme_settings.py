"""Every setting the README documents can be read with ``scrapy settings --get NAME``: its
default is declared in settings.py (or is Scrapy's), never only in the code that reads it.

The README's settings tables (a first column headed ``setting``) are read as they are: each
name in a row's first cell needs a value, unless the row's default cell says it is off or
none. Setting names the README mentions in its prose (in backticks) are held to the same,
with the few whose default is documented as "not set" named here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.utils.project import get_project_settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
NAME = re.compile(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`")
#: ``-s NAME=value``, in commands and in backticks.
ASSIGNED = re.compile(r"-s '?([A-Z][A-Z0-9_]+)=")
#: A default cell that documents "no value".
UNSET = re.compile(r"^(off|none|—|-)$", re.IGNORECASE)

#: Settings whose default the README documents as "not set" (a feature off, or a place
#: worked out from other settings).
DOCUMENTED_UNSET = {
    "DATASET_DIR": "off: no dataset",
    "STATS_FILE": "off",
    "FAILURES_FILE": "beside the output (Datasets, When things go wrong)",
    "REJECTS_FILE": "beside the output",
    "IMAGES_STORE": "under the dataset or beside the first feed (Images)",
    "DEDUPE_STATE": "under the dataset",
    "JOBDIR": "off: no resumable job",
    "LOG_FILE": "the log goes to stderr",
    "REDIS_URL": "off: one process",
    "ZYTE_API_KEY": "off: no Zyte API",
    "RATE_BUDGET_CLASS": "set by the distributed add-on with REDIS_URL",
    "DOWNLOAD_BIND_ADDRESS": "Scrapy's: the system's address",
}
#: Backticked names in the README that are not settings: environment variables, Medium's.
NOT_SETTINGS = {
    "MEDIUM_SID",  # environment (a session secret)
    "MEDIUM_COOKIE",  # environment (a session secret)
    "TOPICS_CRAWLER_CHROMIUM",  # environment
    "TOPICS_CRAWLER_PAGES",  # environment (the tests' captures)
    "SCRAPY_SETTINGS_MODULE",  # environment (Scrapy's: which settings module)
    "GLOBALS",  # Medium's 2015 page state
}


def table_rows() -> list[tuple[str, str]]:
    """``(setting name, its default cell)`` of every row of the README's settings tables."""
    rows = []
    for table in re.findall(r"^\| setting \|.*?(?=^\s*$)", README, re.MULTILINE | re.DOTALL):
        header, _rule, *body = table.strip().splitlines()
        columns = [cell.strip() for cell in header.strip("|").split("|")]
        default_at = columns.index("default")
        for row in body:
            cells = [cell.strip() for cell in row.strip("|").split("|")]
            if "(environment)" in cells[0]:
                continue
            defaults = [d.strip() for d in cells[default_at].split(",")]
            names = NAME.findall(cells[0])
            for at, name in enumerate(names):
                rows.append((name, defaults[min(at, len(defaults) - 1)]))
    return rows


def test_the_readme_has_settings_tables() -> None:
    names = {name for name, _ in table_rows()}
    assert {"MEDIUM_BASE_URL", "RATE_START", "RENDER_MODE", "STATS_FILE"} <= names


@pytest.mark.parametrize(("name", "default"), table_rows())
def test_each_setting_of_the_tables_has_its_documented_default(name: str, default: str) -> None:
    value = get_project_settings().get(name)
    if UNSET.match(default):
        assert not value, f"{name}: the README says {default!r}, settings.py has {value!r}"
        return
    assert value is not None, f"{name}: the README says {default!r}, settings.py has none"
    number = default.strip("`")
    if re.fullmatch(r"\d+(\.\d+)?", number):
        assert float(value) == float(number), f"{name}: the README says {default}, not {value}"
    if default == "on":
        assert get_project_settings().getbool(name) is True


def prose_names() -> list[str]:
    """Names in backticks (`` `NAME` ``, `` `-s NAME=…` ``) and after ``-s`` in commands."""
    named = set(NAME.findall(README)) | set(ASSIGNED.findall(README))
    return sorted(named - NOT_SETTINGS)


@pytest.mark.parametrize("name", prose_names())
def test_each_setting_the_readme_names_can_be_read(name: str) -> None:
    value = get_project_settings().get(name)
    assert value is not None or name in DOCUMENTED_UNSET, (
        f"{name} is in the README, but `scrapy settings --get {name}` gives None: declare "
        "its default in settings.py (or list it in DOCUMENTED_UNSET with where the README "
        "says why)"
    )


def test_scrapy_settings_get_gives_what_the_readme_says() -> None:
    """One real ``scrapy settings --get``: the README's politeness table says 4."""
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "settings", "--get", "RATE_START"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert float(done.stdout) == 4
