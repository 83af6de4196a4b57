"""Errors that end a run with a one-line message instead of a traceback."""


class InputError(Exception):
    """Bad input (file, format or option): the CLI prints the message and exits 2."""
