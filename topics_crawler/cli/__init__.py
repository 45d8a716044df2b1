"""Command-line tools outside ``scrapy crawl``: ``extract`` one saved page, ``report`` a dataset,
``markdown`` its stories as files for a static site.

Run as ``python -m topics_crawler`` or as the ``topics-crawler`` console script.

Each command module has ``add_arguments(parser)`` and ``run(args) -> int``.
Bad input prints one line on stderr and exits with status 2, no traceback; input
that holds no Medium data prints one line and exits with status 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import ModuleType

from topics_crawler.cli import extract, markdown, report
from topics_crawler.cli._errors import CliError

COMMANDS: dict[str, ModuleType] = {"extract": extract, "report": report, "markdown": markdown}
USAGE_ERROR = 2
CONSOLE_SCRIPT = "topics-crawler"  # [project.scripts] in pyproject.toml


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(USAGE_ERROR)


def program_name() -> str:
    """``topics-crawler`` when run as the console script, else ``python -m topics_crawler``."""
    return (
        CONSOLE_SCRIPT if Path(sys.argv[0]).name == CONSOLE_SCRIPT else "python -m topics_crawler"
    )


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog=program_name(), description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, module in COMMANDS.items():
        command_parser = sub.add_parser(name, help=(module.__doc__ or "").splitlines()[0])
        module.add_arguments(command_parser)
    args = parser.parse_args(argv)
    try:
        return int(COMMANDS[args.command].run(args))
    except CliError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_status
