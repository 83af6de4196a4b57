"""ARM templates and compiled Bicep: evaluated into ARM-shaped resources.

Handles the array ``resources`` of classic templates and the symbolic-name object of
``languageVersion: 2.0``, resource ``copy`` loops and ``condition``, child resources declared
inside their parent, and inline nested deployments (inner and outer expression scope) with
their own resource group. ``existing`` resources are references, not deployments, and are
skipped; linked templates cannot be fetched offline and are reported as a warning.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from scanner import azure_types as T
from scanner.errors import InputError
from scanner.jsondoc import Document, load_document, pointer_join
from scanner.model import Origin, Resource
from scanner.sources.arm.evaluator import Evaluator, Placement, Scope
from scanner.unknown import Unknown

_BODY_KEYS = (
    "location",
    "kind",
    "sku",
    "identity",
    "tags",
    "properties",
    "zones",
    "plan",
    "extendedLocation",
    "managedBy",
)
_MAX_NESTING = 20


@dataclass(frozen=True)
class _Parent:
    type: str
    name: str


class TemplateReader:
    """Evaluates one template document (and the templates nested inline in it)."""

    def __init__(self, doc: Document, parameters: Mapping[str, Any]) -> None:
        self.doc = doc
        self.parameters = parameters
        self.warnings: list[str] = []

    def resources(self) -> Iterator[Resource]:
        scope = Scope(self.doc.data, self.parameters, Placement())
        yield from self._template(self.doc.data, scope, "", 0)

    def _template(self, template: dict[str, Any], scope: Scope, pointer: str, depth: int) -> Iterator[Resource]:
        if depth > _MAX_NESTING:
            self.warnings.append(
                f"{self.doc.path}: nested deployments deeper than {_MAX_NESTING} at {pointer} were not evaluated"
            )
            return
        raw = template.get("resources")
        if isinstance(raw, list):
            entries = [(str(i), r) for i, r in enumerate(raw)]
        elif isinstance(raw, dict):
            entries = [(str(k), r) for k, r in raw.items()]
        else:
            return
        for key, resource in entries:
            yield from self._resource(
                resource,
                scope,
                pointer_join(pointer, "resources", key),
                key if isinstance(raw, dict) else None,
                None,
                depth,
            )

    def _resource(
        self, raw: Any, scope: Scope, pointer: str, symbolic: str | None, parent: _Parent | None, depth: int
    ) -> Iterator[Resource]:
        if not isinstance(raw, dict):
            raise InputError(f"{self.doc.path}: resource at {pointer or '/'} is not an object")
        raw_type = raw.get("type")
        if not isinstance(raw_type, str):
            raise InputError(
                f"{self.doc.path}: resource at {pointer} has a non-string type ({type(raw_type).__name__})"
            )
        if raw.get("existing") is True or "import" in raw or "extension" in raw:
            return
        copy = raw.get("copy")
        if isinstance(copy, dict):
            count = Evaluator(scope).value(copy.get("count"))
            if isinstance(count, Unknown):
                self.warnings.append(f"{self.doc.path}: copy count at {pointer} is unknown; evaluated one instance")
                indexes: list[Any] = [Unknown("copy index of a loop whose count is unknown")]
            elif isinstance(count, int):
                indexes = list(range(count))
            else:
                indexes = []
            loop = str(copy.get("name", ""))
            for index in indexes:
                looped = scope.child(copy_index=index, loops={**scope.loops, loop: index})
                yield from self._instance(raw, looped, pointer, symbolic, parent, depth)
        else:
            yield from self._instance(raw, scope, pointer, symbolic, parent, depth)

    def _instance(
        self,
        raw: dict[str, Any],
        scope: Scope,
        pointer: str,
        symbolic: str | None,
        parent: _Parent | None,
        depth: int,
    ) -> Iterator[Resource]:
        ev = Evaluator(scope)
        if "condition" in raw:
            condition = ev.value(raw["condition"])
            if condition is False:
                return
        resource_type = ev.value(raw["type"])
        name = ev.value(raw.get("name", ""))
        if not isinstance(resource_type, str):
            self.warnings.append(f"{self.doc.path}: type of the resource at {pointer} cannot be evaluated; skipped")
            return
        name_text = name if isinstance(name, str) else str(raw.get("name", symbolic or "?"))
        if parent is not None and "/" not in resource_type:
            resource_type = f"{parent.type}/{resource_type}"
            name_text = f"{parent.name}/{name_text}"
        elif (
            parent is not None and resource_type.count("/") > 1 and name_text.count("/") < resource_type.count("/") - 1
        ):
            name_text = f"{parent.name}/{name_text}"
        if resource_type.lower() == T.DEPLOYMENT.lower():
            yield from self._deployment(raw, scope, pointer, depth)
            return
        body: dict[str, Any] = {"name": name_text.rsplit("/", 1)[-1], "type": resource_type}
        for key in _BODY_KEYS:
            if key in raw:
                body[key] = ev.value(raw[key])
        if "apiVersion" in raw:
            body["apiVersion"] = ev.value(raw["apiVersion"])
        resource_id = self._id(raw, ev, scope, resource_type, name_text)
        body["id"] = resource_id
        yield Resource(
            id=resource_id,
            type=resource_type,
            name=name_text,
            body=body,
            origin=Origin(kind="arm", file=self.doc.path, pointer=pointer, document=self.doc, symbolic_name=symbolic),
        )
        children = raw.get("resources")
        if isinstance(children, list):
            here = _Parent(resource_type, name_text)
            for i, child in enumerate(children):
                yield from self._resource(child, scope, pointer_join(pointer, "resources", i), None, here, depth)

    def _id(self, raw: dict[str, Any], ev: Evaluator, scope: Scope, resource_type: str, name: str) -> str:
        namespace, *types = resource_type.split("/")
        names = name.split("/")
        path = "/".join(f"{t}/{n}" for t, n in zip(types, names, strict=False))
        extension_scope = ev.value(raw["scope"]) if "scope" in raw else None
        if isinstance(extension_scope, str):
            return f"{extension_scope.rstrip('/')}/providers/{namespace}/{path}"
        return f"{scope.placement.group_id}/providers/{namespace}/{path}"

    def _deployment(self, raw: dict[str, Any], scope: Scope, pointer: str, depth: int) -> Iterator[Resource]:
        properties = raw.get("properties")
        if not isinstance(properties, dict):
            return
        template = properties.get("template")
        if not isinstance(template, dict):
            if "templateLink" in properties:
                self.warnings.append(
                    f"{self.doc.path}: linked template at {pointer} cannot be read offline; not scanned"
                )
            return
        ev = Evaluator(scope)
        placement = scope.placement
        group = ev.value(raw.get("resourceGroup")) if "resourceGroup" in raw else None
        subscription = ev.value(raw.get("subscriptionId")) if "subscriptionId" in raw else None
        if isinstance(group, str) or isinstance(subscription, str):
            placement = Placement(
                subscription if isinstance(subscription, str) else placement.subscription,
                group if isinstance(group, str) else placement.resource_group,
            )
        nested_pointer = pointer_join(pointer, "properties", "template")
        options = properties.get("expressionEvaluationOptions")
        inner = isinstance(options, dict) and str(options.get("scope", "")).lower() == "inner"
        if inner:
            supplied = {}
            given = properties.get("parameters")
            for key, entry in given.items() if isinstance(given, dict) else []:
                if isinstance(entry, dict) and "value" in entry:
                    supplied[key] = ev.value(entry["value"])
                elif isinstance(entry, dict) and "reference" in entry:
                    supplied[key] = Unknown("parameter read from Key Vault at deployment")
            nested = Scope(template, supplied, placement)
        else:
            nested = scope.child(placement=placement)
        yield from self._template(template, nested, nested_pointer, depth + 1)


def read_parameters(path: str) -> dict[str, Any]:
    """Values from an ARM parameters file (``{"parameters": {"name": {"value": ...}}}``)."""
    from pathlib import Path

    doc = load_document(Path(path), path)
    section = doc.data.get("parameters")
    if not isinstance(section, dict):
        raise InputError(f"{path}: not an ARM parameters file (no 'parameters' object)")
    values: dict[str, Any] = {}
    for name, entry in section.items():
        if isinstance(entry, dict) and "value" in entry:
            values[name] = entry["value"]
        elif isinstance(entry, dict) and "reference" in entry:
            values[name] = Unknown("parameter read from Key Vault at deployment")
    return values


def read_template(doc: Document, parameters: Mapping[str, Any]) -> tuple[list[Resource], list[str]]:
    reader = TemplateReader(doc, parameters)
    resources = list(reader.resources())
    return resources, reader.warnings
