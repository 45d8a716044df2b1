"""The one exception CLI commands raise for user errors."""


class CliError(Exception):
    """A user error: its message is printed as one line, exit status 2."""
