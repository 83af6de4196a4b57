"""``python -m scanner.dev new-rule AZAI-NNN slug``: a new rule, ready to edit.

It writes ``checks/azaiNNN_<slug>.py`` and ``fixtures/rules/AZAI-NNN/estate.json``, renders the
estate's four forms with ``fixtures/build_rule_fixtures.py`` and regenerates the docs, so the
suite passes before the author changes a line. The rule is a real one, small enough to read at
a glance: container apps whose ingress accepts plain HTTP. The author replaces its check,
metadata and docstring, and the estate's resources, with the new rule's own.

It refuses, with one line and exit code 2, an id or slug that is malformed or taken, and it
never overwrites a file.
"""

from __future__ import annotations

import importlib.util
import json
import keyword
import os
import re
import subprocess
import sys
from pathlib import Path
from string import Template
from typing import Any

from scanner.engine.checkapi import Pillar

# The checkout this tool runs from: scanner/dev/scaffold.py -> the repository root.
REPOSITORY = Path(__file__).resolve().parents[2]

# The hundreds of a rule id name its pillar; 9xx are drift rules, which compare inventories
# and are not written from this template.
PILLARS = {
    "1": Pillar.SECURITY,
    "2": Pillar.COST,
    "3": Pillar.PERFORMANCE,
    "4": Pillar.RELIABILITY,
    "5": Pillar.OPERATIONS,
}
RANGES = ", ".join(f"{hundred}xx {pillar}" for hundred, pillar in PILLARS.items())
_ID = re.compile(r"^AZAI-(\d)(\d\d)$")
_SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")  # as the check API requires
# Names the rule file binds besides the rule's function, which the function must not shadow.
_TAKEN_NAMES = {"annotations", "forbid", "rule"}
MAX_SLUG = 40


class ScaffoldError(Exception):
    """A refusal or failure, reported as one line; ``code`` is the exit code."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


RULE = Template('''"""$id $slug."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.engine.setting_checks import forbid
from scanner.model import azure_types as T
from scanner.model.resources import Resource

# Started by `python -m scanner.dev new-rule` as a working example, container apps that accept
# plain HTTP, tested by fixtures/rules/$id/estate.json. Replace the check, its metadata and its
# docstring, and the estate's resources, with this rule's own (README.md, "Writing a rule").


@rule(
    id="$id",
    slug="$slug",
    title="Container app accepts plain HTTP",
    pillar=Pillar.$pillar,
    severity=Severity.MEDIUM,
    resource_types=(T.CONTAINER_APP,),
    reads=(),  # what else it looks up: other ARM types, LiveRead.METRICS and the like
    principle=Principle(
        "Encrypt data in transit: serve AI endpoints over HTTPS only.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform="Set ingress.allow_insecure_connections to false on the azurerm_container_app.",
        bicep="Set properties.configuration.ingress.allowInsecure to false.",
        cli="Turn insecure ingress off with az containerapp ingress update.",
        terraform_code="ingress {\\n  allow_insecure_connections = false\\n}",
        bicep_code="configuration: {\\n  ingress: {\\n    allowInsecure: false\\n  }\\n}",
        cli_code="az containerapp ingress update -n APP -g RG --allow-insecure false",
        guide="https://learn.microsoft.com/azure/container-apps/ingress-overview",
    ),
    help_uri=rule_page("$id"),
)
def $function(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A container app whose ingress accepts plain HTTP, so requests and responses, prompts and
    completions included, can cross the network unencrypted.

    ## What fails

    A `Microsoft.App/containerApps` resource with `properties.configuration.ingress.allowInsecure`
    `true`: HTTP requests are served instead of redirected to HTTPS.

    ## What passes

    Container apps with `allowInsecure` `false` or absent (the API's default), and apps without
    ingress.

    ## Undetermined when

    `allowInsecure` is unknown before deploy.

    ## Why

    Requests to an AI app carry prompts, completions and credentials. Over plain HTTP anyone on
    the network path can read or change them.
    """
    # One setting decides: forbid (or require) reads it, undetermined when it is unknown.
    yield from forbid(
        resource,
        "properties.configuration.ingress.allowInsecure",
        True,
        message=f"Container app '{resource.name}' accepts plain HTTP (ingress allowInsecure is true)",
        expected="false",
    )
''')


def _container_app(name: str, allow_insecure: bool | None, **outcome: Any) -> dict[str, Any]:
    """One estate resource: the ARM body, the azurerm attributes an author writes, the outcome."""
    ingress: dict[str, Any] = {"external": True, "targetPort": 8080}
    attributes: dict[str, Any] = {"external_enabled": True, "target_port": 8080}
    if allow_insecure is not None:
        ingress["allowInsecure"] = attributes["allow_insecure_connections"] = allow_insecure
    return {
        "key": name,
        "type": "Microsoft.App/containerApps",
        "name": name,
        "location": "eastus",
        "arm": {"properties": {"configuration": {"ingress": ingress}}},
        "azurerm": {"type": "azurerm_container_app", "values": {"revision_mode": "Single", "ingress": [attributes]}},
        **outcome,
    }


# One resource that fails, two that pass (set and defaulted) and one undetermined before deploy;
# fixtures/build_rule_fixtures.py documents the format.
ESTATE = [
    _container_app(
        "app-http", True, expect="fail", severity="medium", paths=["properties.configuration.ingress.allowInsecure"]
    ),
    _container_app("app-https", False, expect="pass"),
    _container_app("app-default", None, expect="pass"),
    _container_app(
        "app-unknown",
        False,
        unknown={
            "azurerm": ["ingress.0.allow_insecure_connections"],
            "azapi": ["properties.configuration.ingress.allowInsecure"],
            "template": ["properties.configuration.ingress.allowInsecure"],
        },
        expect={"default": "undetermined", "whatif": "pass"},
    ),
]
# The other estates' layout: a resource's identity on its first line, then its ARM body, its
# azurerm attributes, what is unknown before deploy, and the outcomes expected.
_ESTATE_LINES = (
    ("key", "type", "name", "location", "parent", "scope", "apiVersion"),
    ("arm",),
    ("azurerm",),
    ("unknown",),
    ("expect", "severity", "paths"),
)


def estate_json(rule_id: str, resources: list[dict[str, Any]]) -> str:
    """An estate.json laid out as the hand-written ones are, one line per part of a resource."""
    items = []
    for resource in resources:
        parts = [
            ", ".join(f"{json.dumps(k)}: {json.dumps(resource[k])}" for k in keys if k in resource)
            for keys in _ESTATE_LINES
        ]
        items.append("    {" + ",\n     ".join(p for p in parts if p) + "}")
    return "{\n" + f'  "rule": {json.dumps(rule_id)},\n  "resources": [\n' + ",\n".join(items) + "\n  ]\n}\n"


def rule_file_name(rule_id: str, slug: str) -> str:
    """``AZAI-114``, ``gpu-quota`` -> ``azai114_gpu_quota.py``: the name tests hold every rule to."""
    return f"azai{rule_id[-3:]}_{slug.replace('-', '_')}.py"


def validate(rule_id: str, slug: str, root: Path) -> Pillar:
    """The new rule's pillar, or a `ScaffoldError` saying why the id or slug cannot be used."""
    match = _ID.match(rule_id)
    if match is None:
        raise ScaffoldError(f"rule id {rule_id!r} is not of the form AZAI-NNN (e.g. AZAI-114)")
    hundred = match.group(1)
    if hundred == "9":
        raise ScaffoldError(f"{rule_id}: 9xx ids are drift rules, which new-rule does not write ({RANGES})")
    if hundred not in PILLARS:
        raise ScaffoldError(f"{rule_id} is in no pillar's range ({RANGES})")
    function = slug.replace("-", "_")
    if not _SLUG.match(slug) or len(slug) > MAX_SLUG:
        raise ScaffoldError(
            f"rule slug {slug!r} is not kebab-case of at most {MAX_SLUG} characters (e.g. gpu-quota-cap)"
        )
    if keyword.iskeyword(function) or function in _TAKEN_NAMES:
        raise ScaffoldError(
            f"rule slug {slug!r} would name the rule's function {function}, which Python or the file uses"
        )
    taken = [
        *sorted((root / "checks").glob(f"azai{rule_id[-3:]}_*.py")),
        *[p for p in (root / "fixtures" / "rules" / rule_id, root / "docs" / "rules" / f"{rule_id}.md") if p.exists()],
    ]
    if taken:
        raise ScaffoldError(f"{rule_id} exists: {taken[0].relative_to(root)}")
    same_slug = sorted((root / "checks").glob(f"azai[0-9][0-9][0-9]_{function}.py"))
    if same_slug:
        raise ScaffoldError(f"slug {slug!r} is taken: {same_slug[0].relative_to(root)}")
    return PILLARS[hundred]


def _write_new(path: Path, text: str) -> None:
    """Create ``path``; an existing file is an error, never overwritten."""
    try:
        with path.open("x", encoding="utf-8") as out:
            out.write(text)
    except FileExistsError:
        raise ScaffoldError(f"{path} exists; not overwritten") from None


def build_fixtures(root: Path, rule_dir: Path) -> None:
    """Render the estate's four forms and expected.json with the checkout's own builder."""
    script = root / "fixtures" / "build_rule_fixtures.py"
    spec = importlib.util.spec_from_file_location("build_rule_fixtures", script)
    if spec is None or spec.loader is None:
        raise ScaffoldError(f"{script} is missing", code=1)
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    builder.build(rule_dir)


def regenerate_docs(root: Path) -> None:
    """``python -m scanner.dev docs`` in ``root``, in a child process: the rules, the new one
    included, must be imported from ``root``, and this process may have imported another
    checkout's (or none)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    done = subprocess.run(
        [sys.executable, "-m", "scanner.dev", "docs", "--root", str(root)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
        raise ScaffoldError(f"the rule is written but the docs are not: {lines[-1]}", code=1)


def new_rule(rule_id: str, slug: str, root: Path) -> int:
    """Write the rule and its estate, render the estate's forms and regenerate the docs."""
    root = root.resolve()
    pillar = validate(rule_id, slug, root)
    script = root / "fixtures" / "build_rule_fixtures.py"
    if not script.is_file():
        raise ScaffoldError(f"{script} is missing: is {root} an azai checkout?")
    values = {"id": rule_id, "slug": slug, "function": slug.replace("-", "_"), "pillar": pillar.name}
    rule_path = root / "checks" / rule_file_name(rule_id, slug)
    rule_dir = root / "fixtures" / "rules" / rule_id
    rule_dir.mkdir(parents=True, exist_ok=False)
    _write_new(rule_path, RULE.substitute(values))
    _write_new(rule_dir / "estate.json", estate_json(rule_id, ESTATE))
    build_fixtures(root, rule_dir)
    regenerate_docs(root)
    shown = rule_path.relative_to(root)
    print(
        f"wrote {shown} ({pillar}) and fixtures/rules/{rule_id}/ (estate.json and its four forms),\n"
        f"regenerated docs/rules/ and README.md's rule table.\n"
        f"The rule is a working example: replace its check, metadata and docstring in {shown} and the\n"
        f"resources in fixtures/rules/{rule_id}/estate.json, then run\n"
        f"  python fixtures/build_rule_fixtures.py {rule_id} && python -m scanner.dev docs && python -m pytest\n"
        f'and update the golden reports the new rule changes (README.md, "Writing a rule").'
    )
    return 0
