"""The exceptions CLI commands raise for user errors and for input without data."""


class CliError(Exception):
    """A user error: its message is printed as one line, exit status :attr:`exit_status`."""

    exit_status = 2


class NoDataError(CliError):
    """The input was read but holds no Medium data: one line, exit status 1."""

    exit_status = 1
