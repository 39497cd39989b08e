"""Sub-commands of this part of the package (filled in by its issue)."""


def register(subparsers) -> None:
    pass
