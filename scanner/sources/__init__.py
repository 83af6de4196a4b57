"""Ways in: each input file becomes an `Inventory` of ARM-shaped resources.

The format is detected from the content, never the file name, so ``plan.json``,
``main.json`` and ``whatif.out`` all work.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from scanner.errors import InputError
from scanner.model.jsondoc import Document, is_arm_json, load_document
from scanner.model.resources import CoverageGap, Inventory, Resource
from scanner.model.utilization import UtilizationSource
from scanner.model.vmsizes import SizeCatalog
from scanner.sources.arm.template import TemplateOptions, read_template
from scanner.sources.arm.whatif import read_whatif, whatif_changes
from scanner.sources.snapshot import is_snapshot, read_snapshot
from scanner.sources.terraform.plan import read_plan

TERRAFORM = "terraform"
ARM = "arm"
WHATIF = "whatif"
SNAPSHOT = "snapshot"


class UnrecognisedInput(InputError):
    """Valid JSON that is none of the formats azai reads."""


@dataclass
class LoadedInput:
    """One scanned file: its format, its inventory and anything worth a warning."""

    path: str
    kind: str
    inventory: Inventory
    warnings: list[str] = field(default_factory=list)
    coverage: list[CoverageGap] = field(default_factory=list)  # what could not be read (linked templates)
    linked: set[Path] = field(default_factory=set)  # files a template read as its linked templates
    utilization: UtilizationSource | None = None  # live scans: measured utilization
    sizes: SizeCatalog | None = None  # live scans: the size table plus SKU-confirmed GPU sizes

    @property
    def plan(self) -> bool:
        """Whether the input says what a deploy would change (a Terraform plan or a what-if)."""
        return self.kind in (TERRAFORM, WHATIF)


def detect(doc: Document) -> str:
    """Which format a parsed JSON document is, or a one-line error saying it is none."""
    data = doc.data
    if is_snapshot(data):
        return SNAPSHOT
    if "format_version" in data and any(k in data for k in ("planned_values", "resource_changes", "terraform_version")):
        return TERRAFORM
    schema = str(data.get("$schema", "")).lower()
    if "deploymentparameters" in schema:
        raise UnrecognisedInput(f"{doc.path}: this is an ARM parameters file; pass it with --parameters")
    if is_arm_json(data):
        return ARM
    if whatif_changes(data) is not None:
        return WHATIF
    raise UnrecognisedInput(f"{doc.path}: not a Terraform plan, ARM template or ARM what-if result")


def load_file(path: Path, display: str, options: TemplateOptions | None = None) -> LoadedInput:
    """One input file as an inventory; ``options`` say how templates are evaluated."""
    doc = load_document(path, display)
    kind = detect(doc)
    resources: list[Resource]
    coverage: list[CoverageGap] = []
    linked: set[Path] = set()
    try:
        if kind == TERRAFORM:
            resources, warnings = read_plan(doc)
        elif kind == ARM:
            template = read_template(doc, path, options or TemplateOptions())
            resources, warnings, coverage, linked = (
                template.evaluated,
                template.warnings,
                template.coverage,
                template.linked,
            )
        elif kind == SNAPSHOT:
            resources, warnings = read_snapshot(doc)[0], []
        else:
            resources, warnings = read_whatif(doc)
        inventory = Inventory(resources)
    except RecursionError:
        raise InputError(f"{display}: nesting is too deep to evaluate") from None
    return LoadedInput(display, kind, inventory, warnings, coverage, linked)


def expand_paths(paths: Iterable[str]) -> list[tuple[Path, str, bool]]:
    """Files to scan: each given file, and the ``*.json`` files under each given directory.

    The flag says whether the file was named explicitly: an unrecognised file named on the
    command line is an error, one found while walking a directory is skipped.
    """
    out: list[tuple[Path, str, bool]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for found in sorted(path.rglob("*.json")):
                if not any(part.startswith(".") for part in found.relative_to(path).parts):
                    out.append((found, str(found), False))
        else:
            out.append((path, given, True))
    return out


def load_inputs(
    paths: Iterable[str], options: TemplateOptions | None = None, skip_unknown: bool = False
) -> tuple[list[LoadedInput], list[str]]:
    """Load every input; skipped directory members are reported as warnings.

    With ``skip_unknown``, a file named explicitly that is not a recognised format is skipped
    too (pre-commit hands over every changed ``*.json``, including package.json).
    """
    loaded: list[tuple[LoadedInput, Path, bool]] = []
    warnings: list[str] = []
    for path, display, explicit in expand_paths(paths):
        try:
            loaded.append((load_file(path, display, options), path.resolve(), explicit))
        except InputError as exc:
            if explicit and not (skip_unknown and isinstance(exc, UnrecognisedInput)):
                raise
            warnings.append(f"skipped {exc}")
    # A module found while walking a folder is scanned as part of the template that links it,
    # not again on its own (without the values that template gives it).
    linked = {file for item, _, _ in loaded for file in item.linked}
    return [item for item, file, explicit in loaded if explicit or file not in linked], warnings
