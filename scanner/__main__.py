"""``python -m scanner`` runs the CLI, for environments without the console script."""

from scanner.cli.commands import run

run()
