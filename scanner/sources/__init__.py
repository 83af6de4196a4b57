"""Ways in: each input file becomes an `Inventory` of ARM-shaped resources.

The format of a JSON input is detected from the content, never the file name, so
``plan.json``, ``main.json`` and ``whatif.out`` all work. A ``.bicep`` file is compiled first;
a ``.tf`` file is refused with the commands that make a plan of it, a YAML file with what to scan
instead. ``-`` is standard input. Resources then get their
declarations in the ``.tf`` or ``.bicep`` source, where it is found.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from scanner.errors import InputError
from scanner.model.jsondoc import STDIN, STDIN_DISPLAY, Document, NotJson, is_arm_json, load_document, parse_document
from scanner.model.resources import CoverageGap, Inventory, Resource
from scanner.model.utilization import UtilizationSource
from scanner.model.vmsizes import SizeCatalog
from scanner.sources.arm.parameters import TemplateOptions
from scanner.sources.arm.whatif import read_whatif, whatif_changes
from scanner.sources.authored.paths import SourcePath
from scanner.sources.snapshot import is_snapshot, read_snapshot

TERRAFORM = "terraform"
ARM = "arm"
WHATIF = "whatif"
SNAPSHOT = "snapshot"


class UnrecognisedInput(InputError):
    """Valid JSON that is none of the formats azai reads, or a file that is not JSON at all."""


def _terraform_configuration(display: str) -> UnrecognisedInput:
    """A ``.tf`` file or folder: azai reads what Terraform plans, and says how to get it."""
    return UnrecognisedInput(
        f"{display}: a Terraform configuration, not a plan; make one with "
        "'terraform plan -out tfplan' and 'terraform show -json tfplan > plan.json', then scan plan.json"
    )


@dataclass
class LoadedInput:
    """One scanned file: its format, its inventory and anything worth a warning."""

    path: str
    kind: str
    inventory: Inventory
    warnings: list[str] = field(default_factory=list)
    coverage: list[CoverageGap] = field(default_factory=list)  # what could not be read (linked templates)
    linked: set[Path] = field(default_factory=set)  # files a template read as its linked templates
    # Plan resources of Terraform types no mapping translates, counted by type: read for nothing.
    untranslated: dict[str, int] = field(default_factory=dict)
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


def load_file(
    path: Path, display: str, options: TemplateOptions | None = None, source_root: SourcePath | None = None
) -> LoadedInput:
    """One input file as an inventory; ``options`` say how templates are evaluated, and
    ``source_root`` where the ``.tf`` or ``.bicep`` sources are when they are not beside it."""
    given = SourcePath(path, display)
    suffix = path.suffix.lower() if path.is_file() else ""  # a missing file says so when it is read
    if suffix == ".tf":
        raise _terraform_configuration(display)
    if suffix in (".yaml", ".yml"):
        raise UnrecognisedInput(
            f"{display}: YAML, which azai does not read; it reads Terraform plan, ARM template (or .bicep) and "
            "what-if JSON: for an azd project scan infra/main.bicep; Kubernetes and pipeline YAML have no such form"
        )
    compiled = suffix == ".bicep"
    if compiled:
        from scanner.sources.authored.compile import compile_bicep

        compiled_text = compile_bicep(given)
        try:
            doc = parse_document(compiled_text, display)
        except InputError:
            raise InputError(f"{display}: the Bicep build wrote no JSON template to its output") from None
    else:
        doc = load_document(path, display)
    kind = detect(doc)
    resources: list[Resource]
    coverage: list[CoverageGap] = []
    linked: set[Path] = set()
    untranslated: dict[str, int] = {}
    try:
        # Each reader is imported when its kind is read: a plan scan never loads the template
        # evaluator, nor a template scan the azurerm mappings.
        if kind == TERRAFORM:
            from scanner.sources.terraform.plan import read_plan_contents

            resources, warnings, untranslated = read_plan_contents(doc)
        elif kind == ARM:
            from scanner.sources.arm.template import read_template

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
    except RecursionError:
        raise InputError(f"{display}: nesting is too deep to evaluate") from None
    _attach_declarations(kind, doc, given, resources, warnings, source_root, compiled)
    doc.forget_data()
    return LoadedInput(display, kind, Inventory(resources), warnings, coverage, linked, untranslated=untranslated)


def _attach_declarations(
    kind: str,
    doc: Document,
    given: SourcePath,
    resources: list[Resource],
    warnings: list[str],
    source_root: SourcePath | None,
    compiled: bool,
) -> None:
    """Point resources at the source people wrote, where it is found (before the inventory
    derives agent pools from their clusters, so that they inherit it)."""
    if kind == TERRAFORM:
        from scanner.sources.authored import terraform

        root = terraform.root_module(given, source_root)
        terraform.attach(resources, doc.data, root, source_root is not None, warnings)
    elif kind == ARM:
        from scanner.sources.authored import templates

        bicep = given if compiled else templates.bicep_beside(given, source_root)
        if bicep is not None:
            templates.attach(resources, bicep, warnings)
        if compiled:
            templates.only_in_source(resources, given)


def expand_paths(paths: Iterable[str]) -> list[tuple[Path, str, bool]]:
    """Files to scan: each given file, and the ``*.json`` files under each given directory.

    The flag says whether the file was named explicitly: an unrecognised file named on the
    command line is an error, one found while walking a directory is skipped.
    """
    out: list[tuple[Path, str, bool]] = []
    for given in paths:
        path = Path(given)
        if given == "-":
            if any(p == STDIN for p, _, _ in out):
                raise InputError("- (stdin) is given twice; it can be read once")
            out.append((STDIN, STDIN_DISPLAY, True))
        elif path.is_dir():
            found = _visible(path, "*.json")
            if not found and _visible(path, "*.tf"):
                raise _terraform_configuration(given)
            if not found and _visible(path, "*.bicep"):
                raise UnrecognisedInput(
                    f"{given}: Bicep files and no compiled template; scan the entry point (azai scan main.bicep, "
                    "compiled with the Bicep CLI on PATH) or the .json that 'bicep build' writes"
                )
            out.extend((f, str(f), False) for f in found)
        else:
            out.append((path, given, True))
    return out


def _visible(folder: Path, pattern: str) -> list[Path]:
    """The files under ``folder`` matching ``pattern``, outside dot-folders (``.terraform``,
    ``.git``: tool state, not the user's inputs)."""
    return [f for f in sorted(folder.rglob(pattern)) if not any(p.startswith(".") for p in f.relative_to(folder).parts)]


def load_inputs(
    paths: Iterable[str],
    options: TemplateOptions | None = None,
    skip_unknown: bool = False,
    source_root: str | None = None,
) -> tuple[list[LoadedInput], list[str]]:
    """Load every input; skipped directory members are reported as warnings. ``source_root``
    is where the ``.tf`` root module or the ``.bicep`` files are (``--source-root``).

    With ``skip_unknown``, a file named explicitly that is not a recognised format, or not JSON
    at all, is skipped too (pre-commit hands over every changed ``*.json``: package.json, a
    devcontainer.json with comments), and the skipped files make one warning, not one each.
    Without it, paths that hold nothing to scan (an empty folder) are an error: a CI step
    pointed at the wrong folder must not pass green having read nothing.
    """
    root = SourcePath(Path(source_root), Path(source_root).as_posix()) if source_root is not None else None
    given = list(paths)
    loaded, warnings, unknown = _load_each(given, options, skip_unknown, root)
    if given and not loaded and not skip_unknown:
        skipped = f" ({len(warnings)} file(s) skipped as not IaC)" if warnings else ""
        raise InputError(
            f"nothing to scan in {', '.join(given)}: no Terraform plan, ARM template or what-if JSON{skipped}; "
            "'azai scan --skip-unknown' passes when there is none"
        )
    if unknown:
        warnings.append(_skipped_unknown(unknown))
    # A module found while walking a folder is scanned as part of the template that links it,
    # not again on its own (without the values that template gives it).
    linked = {file for item, _, _ in loaded for file in item.linked}
    return [item for item, file, explicit in loaded if explicit or file not in linked], warnings


def _load_each(
    given: list[str], options: TemplateOptions | None, skip_unknown: bool, root: SourcePath | None
) -> tuple[list[tuple[LoadedInput, Path, bool]], list[str], list[str]]:
    """Each file the ``given`` paths hold, loaded, with its resolved path and whether it was named
    explicitly; then the warnings for the files skipped, and the files ``skip_unknown`` skipped
    (which `load_inputs` names in one warning). A file named explicitly that cannot be read stops
    the scan, unless it is merely not a format azai reads and ``skip_unknown`` is on; one found
    while walking a folder is skipped with a warning."""
    loaded: list[tuple[LoadedInput, Path, bool]] = []
    warnings: list[str] = []
    unknown: list[str] = []
    for path, display, explicit in expand_paths(given):
        try:
            loaded.append((load_file(path, display, options, root), path.resolve(), explicit))
        except (UnrecognisedInput, NotJson) as exc:
            if explicit and not skip_unknown:
                raise
            if skip_unknown:
                unknown.append(display)
            else:
                warnings.append(f"skipped {exc}")
        except InputError as exc:
            if explicit:
                raise
            warnings.append(f"skipped {exc}")
    return loaded, warnings, unknown


def _skipped_unknown(files: list[str]) -> str:
    """One line for every file ``--skip-unknown`` skipped, naming the first few."""
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return f"skipped {len(files)} file(s) that are not a plan, template or what-if result (--skip-unknown): {shown}"
