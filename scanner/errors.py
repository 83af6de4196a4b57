"""Errors that end a run with a one-line message instead of a traceback."""


class InputError(Exception):
    """Bad input (file, format or option): the CLI prints the message and exits 2.

    The message may quote input as it is (a file name, a symbolic name): the CLI shows its
    control characters as escapes, so the line stays one line whatever the input holds.
    """
