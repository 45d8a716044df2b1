"""The ``topics-crawler`` command: ``crawl`` Medium, any ``scrapy`` command, the local
``site`` and the ``demo``; ``extract`` one saved page, ``report`` a dataset, ``markdown`` its
stories as files for a static site.

Run as ``python -m topics_crawler`` or as the ``topics-crawler`` console script, from any
folder: an installed package needs neither the repository nor an environment variable.

``crawl``, ``scrapy``, ``site`` and ``demo`` hand their arguments, unread, to the command
they run (Scrapy's command line, ``python -m topics_crawler.site``, the demo), which has
its own ``-h``. Each other command module has ``add_arguments(parser)`` and
``run(args) -> int``: bad input prints one line on stderr and exits with status 2, no
traceback; input that holds no Medium data prints one line and exits with status 1.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from topics_crawler.cli import extract, markdown, report
from topics_crawler.cli._errors import CliError

COMMANDS: dict[str, ModuleType] = {"extract": extract, "report": report, "markdown": markdown}
#: Commands that take their arguments unread: ``(function "module:name", help line)``; the
#: function takes the argument list and returns the exit status. Imported when run.
PASSTHROUGH: dict[str, tuple[str, str]] = {
    "crawl": (
        "topics_crawler.cli.scrapy_command:crawl",
        "crawl Medium: scrapy crawl topics with the same -a, -s, -o/-O and exit statuses",
    ),
    "scrapy": (
        "topics_crawler.cli.scrapy_command:scrapy",
        "any Scrapy command with the project's settings (settings --get NAME, parse, shell)",
    ),
    "site": ("topics_crawler.site.__main__:main", "serve the local Medium-like site"),
    "demo": ("topics_crawler.site.demo:main", "the whole product on the local site, offline"),
}
#: Pass-through commands whose function names the program (``prog=``): in its help, in the
#: crawl's refusals (``topics-crawler crawl: error: …``).
NAMED = {"crawl", "site", "demo"}
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


def passthrough(name: str) -> Callable[..., int]:
    """The function a pass-through command runs."""
    module, _, function = PASSTHROUGH[name][0].partition(":")
    run: Callable[..., int] = getattr(importlib.import_module(module), function)
    return run


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in PASSTHROUGH:
        name, rest = argv[0], argv[1:]
        if name in NAMED:
            return int(passthrough(name)(rest, prog=f"{program_name()} {name}"))
        return int(passthrough(name)(rest))
    parser = _Parser(
        prog=program_name(),
        description=" ".join(__doc__.split("\n\n")[0].replace("``", "").split()),
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, (_, help_line) in PASSTHROUGH.items():
        sub.add_parser(name, help=help_line, add_help=False)
    for name, module in COMMANDS.items():
        command_parser = sub.add_parser(name, help=(module.__doc__ or "").splitlines()[0])
        module.add_arguments(command_parser)
    args = parser.parse_args(argv)
    try:
        return int(COMMANDS[args.command].run(args))
    except CliError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_status
