"""The errors every layer may raise for the command line to report (a leaf module: the
harness, the analysis and the sub-command modules raise them without importing the CLI)."""


class UsageError(Exception):
    """Bad input from the user: exit 2 with a clear message."""
