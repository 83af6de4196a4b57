"""Which report goes where: ``--format`` and ``--output`` paired by position, and the format of an
``--output`` without a ``--format`` read from its extension, so ``-o azai.sarif`` writes SARIF.

Anything that could be read two ways is refused with one line rather than guessed: a report
written in a format its file name contradicts is uploaded, parsed or rendered wrongly later,
far from the command that made it.
"""

from __future__ import annotations

from scanner.errors import InputError

# What an extension says; ".sarif.json" is checked first, as GitHub's examples name SARIF files.
EXTENSIONS = {
    ".sarif.json": "sarif",
    ".sarif": "sarif",
    ".json": "json",
    ".md": "markdown",
    ".xml": "junit",
    ".html": "html",
}


def format_of(path: str) -> str | None:
    """The format a file name's extension names, or None when it says nothing (``.txt``, none)."""
    name = path.lower()
    return next((fmt for ext, fmt in EXTENSIONS.items() if name.endswith(ext)), None)


def _agrees(fmt: str, said: str | None) -> bool:
    """A ``--format`` agrees with its file's extension when the extension says nothing or says
    the same; SARIF is JSON, so ``--format sarif -o results.json`` is not a contradiction."""
    return said is None or said == fmt or (fmt, said) == ("sarif", "json")


def pair_outputs(formats: tuple[str, ...], outputs: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """Each report to write, as (format, path), with None for stdout.

    The n-th ``--format`` goes to the n-th ``--output``; an ``--output`` beyond the formats takes
    the format its extension names; a ``--format`` beyond the outputs goes to stdout (one at most).
    A single ``--output`` with neither a ``--format`` nor a telling extension is text, the default.
    """
    targets: list[tuple[str, str | None]] = []
    for index, path in enumerate(outputs):
        said = format_of(path)
        if index < len(formats):
            if not _agrees(formats[index], said):
                raise InputError(
                    f"--format {formats[index]} with --output {path}, whose extension says {said}: "
                    "give the matching --format, or rename the file"
                )
            targets.append((formats[index], path))
        elif said is not None:
            targets.append((said, path))
        elif not formats and len(outputs) == 1:
            targets.append(("text", path))
        else:
            raise InputError(
                f"--output {path}: its extension does not say which format to write; give a --format for it, "
                f"or name it {', '.join(sorted(set(EXTENSIONS) - {'.sarif.json'}))}"
            )
    to_stdout = formats[len(outputs) :] if formats else (() if outputs else ("text",))
    if len(to_stdout) > 1:
        raise InputError("only one report can go to stdout: give an --output for each further --format")
    return targets + [(fmt, None) for fmt in to_stdout]
