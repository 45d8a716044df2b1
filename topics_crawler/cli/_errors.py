"""The exceptions CLI commands raise for user errors and for input without data."""

from topics_crawler.errors import ExitCode


class CliError(Exception):
    """A user error: its message is printed as one line, exit status :attr:`exit_status`."""

    exit_status: int = ExitCode.USAGE


class NoDataError(CliError):
    """The input was read but holds no Medium data: one line, exit status 1."""

    exit_status = ExitCode.FAILED


class RefusedPageError(CliError):
    """The input is the site's refusal (a Cloudflare challenge or WAF page, a sign-in wall),
    not a page: one line naming it, exit status 3."""

    exit_status = ExitCode.REFUSED
