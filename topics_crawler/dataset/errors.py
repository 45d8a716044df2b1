"""The one exception the dataset code raises for a dataset directory it cannot use."""


class DatasetError(Exception):
    """A dataset directory that cannot be written, read or upgraded; the message says why."""
