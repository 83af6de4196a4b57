"""Reading a Terraform plan into ARM-shaped resources.

Instances come from ``resource_changes`` (the authoritative, per-instance record with unknown
and sensitive masks), then from ``planned_values`` for anything not listed there, and data
sources from ``prior_state`` as reference-only context. Resources being deleted or forgotten
are not deployed, so they are not scanned. Ids a plan does not know yet (a storage account
being created) are resolved through the references in ``configuration``, so the workspace
still finds its storage account and the pool its cluster.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from scanner.errors import InputError
from scanner.model import azure_types as T
from scanner.model.jsondoc import Document, Where, deeper, expect, expect_items, member, pointer_join
from scanner.model.resources import Inventory, Origin, Resource, build_resource_id, parse_resource_id
from scanner.model.unknown import Unknown
from scanner.sources.terraform.azurerm import MAPPINGS, SKIP, BlockShapeError, TypeMap, identity_block
from scanner.sources.terraform.values import AFTER_APPLY, MISSING, overlay, read

SUBSCRIPTION_PLACEHOLDER = "{subscription}"
UNRESOLVED = "{unresolved}"
_SUPPORTED_MAJORS = ("0", "1")
_ID_PROPERTY_TYPES = {
    "storageaccount": T.STORAGE_ACCOUNT,
    "keyvault": T.KEY_VAULT,
    "containerregistry": T.CONTAINER_REGISTRY,
    "applicationinsights": "Microsoft.Insights/components",
    "resourceid": T.MANAGED_CLUSTER,
    "hubresourceid": T.WORKSPACE,
    "managedenvironmentid": T.CONTAINER_APP_ENVIRONMENT,
}
# An instance key: [0] or ["a"], the string quoted as in HCL (so it may hold "]"). Written so
# that every pattern using it scans an address once: an unclosed key ("[[[[…") fails at once
# instead of being searched for a closing bracket from each of its characters.
_KEY = r'\[(?:[0-9]++|"(?:[^"\\]|\\.)*+")\]'
_REFERENCE = re.compile(rf"(data\.)?([A-Za-z0-9_-]++)\.([A-Za-z0-9_-]++)({_KEY})?(?:\.(.+))?", re.S)
_MODULE_STEP = re.compile(rf"module\.([A-Za-z0-9_-]++)({_KEY})?")
# A module output reference: module.NAME[KEY].OUTPUT, then any attribute path into its value.
_MODULE_OUTPUT = re.compile(rf"(module\.[A-Za-z0-9_-]++(?:{_KEY})?+)\.([A-Za-z0-9_-]++)(?:\.(.+))?", re.S)
_INSTANCE_KEY = re.compile(_KEY)
# A resource instance address: module steps, then [data.]TYPE.NAME[KEY]. Possessive throughout,
# so that a hostile one (300,000 "[") is refused in linear time.
_NAME = "[A-Za-z0-9_-]++"
_MODULE = rf"module\.{_NAME}(?:{_KEY})?+"
_ADDRESS = re.compile(rf"(?:{_MODULE}\.)*+(?:data\.)?+{_NAME}\.{_NAME}(?:{_KEY})?+")
_MODULE_ADDRESS = re.compile(rf"{_MODULE}(?:\.{_MODULE})*+")
# ARM values each mapped type implies (a compute's computeType): written by declaring the type,
# unless an attribute the configuration may leave to its default sets the same path.
_IMPLIED = {
    name: frozenset(p.lower() for p in m.constants) - {a.arm.lower() for a in m.attrs} for name, m in MAPPINGS.items()
}
# References that name no resource attribute a plan records.
_UNFOLLOWED = ("local.", "each.", "count.", "path.", "terraform.", "self.")


@dataclass
class Instance:
    """One resource instance of the plan, with masks applied to its values."""

    address: str
    mode: str
    type: str
    name: str
    module_address: str
    values: dict[str, Any]
    pointer: str
    reference_only: bool = False
    action: str | None = None
    translated: bool = False
    arm_id: str | None = None
    resolving: bool = False
    arm_type: str | None = None
    body: dict[str, Any] = field(default_factory=dict)
    property_map: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # ARM paths that azapi_update_resource bodies merged into this one write.
    updated_paths: set[str] = field(default_factory=set)


# Entry, Change and Block are named tuples: a plan has one of each per resource, and a tuple is
# the cheapest record to build.


class Entry(NamedTuple):
    """The identifying fields of one resource entry of the plan, their types checked."""

    raw: dict[str, Any]
    pointer: str
    address: str
    mode: str
    type: str
    name: str
    module_address: str | None  # as written; Terraform omits it at the root

    @classmethod
    def read(cls, doc: Document, raw: Any, pointer: str) -> Entry:
        """The entry at ``pointer``: an object whose ``address`` is a string (the format
        requires it) and whose other identifying fields are strings when present."""
        entry = expect(doc, raw, dict, pointer)
        return cls(
            entry,
            pointer,
            _address(doc, expect(doc, entry.get("address"), str, (pointer, "address")), pointer, "address"),
            member(doc, entry, "mode", str, pointer) or "managed",
            member(doc, entry, "type", str, pointer) or "",
            member(doc, entry, "name", str, pointer) or "",
            _module_address(doc, member(doc, entry, "module_address", str, pointer), pointer),
        )

    @property
    def module(self) -> str:
        """The module instance the entry is in, from its address when the entry omits it."""
        return _module_of(self.address) if self.module_address is None else self.module_address


class Change(NamedTuple):
    """One managed entry of ``resource_changes`` or ``resource_drift`` with its change object."""

    entry: Entry
    detail: dict[str, Any]
    actions: list[str]

    @property
    def pointer(self) -> str:
        return self.entry.pointer


class Block(NamedTuple):
    """A configuration block (a resource or a module call) and where it is in the plan."""

    body: dict[str, Any]
    where: Where


def check_format_version(doc: Document) -> None:
    version = doc.data.get("format_version")
    if not isinstance(version, str) or version.split(".")[0] not in _SUPPORTED_MAJORS:
        raise InputError(f"{doc.path}: unsupported Terraform plan format_version {version!r} (azai reads 0.x and 1.x)")


class PlanReader:
    """Turns one plan document into resources; instantiate per plan."""

    def __init__(self, doc: Document) -> None:
        check_format_version(doc)
        self.doc = doc
        self.plan = doc.data
        self.instances: dict[str, Instance] = {}
        # The instances by address without their own key, built when a reference first needs it
        # and rebuilt if instances were added since: one pass, not one per reference.
        self._unkeyed: tuple[int, dict[str, list[Instance]]] = (-1, {})
        self.warnings: list[str] = []
        self._config_index = self._index_configuration()
        # Module outputs by (module instance address, output name, path into it).
        self._outputs: dict[tuple[str, str, str | None], Any] = {}

    # -- collecting instances -------------------------------------------------------------

    def _collect(self) -> None:
        """Instances in order of authority: ``resource_changes``, then ``planned_values`` for
        any not listed there, then ``prior_state`` data sources as reference-only context."""
        self._collect_changes()
        self._collect_planned()
        self._collect_data_sources()

    def _collect_changes(self) -> None:
        """Each changed instance with its masks applied; one not deployed leaves a placeholder."""
        for change in managed_changes(self.doc, "resource_changes"):
            if _not_deployed(change.actions):
                self.instances.setdefault(change.entry.address, self._skipped(change.entry.address))
                continue
            # An object, or null; anything else must not make the resource vanish unseen.
            after = member(self.doc, change.detail, "after", dict, pointer_join(change.pointer, "change"))
            if after is None and change.detail.get("after_unknown") is not True:
                continue
            values = overlay(after, change.detail.get("after_unknown"), change.detail.get("after_sensitive"))
            instance = self._add(change.entry, values, pointer_join(change.pointer, "change", "after"))
            instance.action = "replace" if "delete" in change.actions else ",".join(change.actions)

    def _collect_planned(self) -> None:
        """Managed instances ``planned_values`` lists and ``resource_changes`` does not."""
        planned = member(self.doc, self.plan, "planned_values", dict, "")
        root = member(self.doc, planned, "root_module", dict, "/planned_values") if planned else None
        for entry in self._unread(root, "/planned_values/root_module", "managed"):
            values = overlay(entry.raw.get("values"), None, entry.raw.get("sensitive_values"))
            self._add(entry, values, entry.pointer + "/values")

    def _collect_data_sources(self) -> None:
        """Data sources read before the plan: what the planned resources may refer to."""
        prior = member(self.doc, self.plan, "prior_state", dict, "")
        state = member(self.doc, prior, "values", dict, "/prior_state") if prior else None
        root = member(self.doc, state, "root_module", dict, "/prior_state/values") if state else None
        for entry in self._unread(root, "/prior_state/values/root_module", "data"):
            values = overlay(entry.raw.get("values"), None, entry.raw.get("sensitive_values"))
            instance = self._add(entry, values, entry.pointer + "/values")
            instance.reference_only = True

    def _unread(self, root: dict[str, Any] | None, pointer: str, mode: str) -> Iterator[Entry]:
        """The entries of ``mode`` in a planned or state module that are not read already. The
        others are checked only as far as their address and mode, since nothing reads more."""
        for raw, at in _module_resources(self.doc, root, pointer):
            address = expect(self.doc, raw.get("address"), str, (at, "address"))
            if address not in self.instances and (member(self.doc, raw, "mode", str, at) or "managed") == mode:
                yield Entry.read(self.doc, raw, at)

    def _skipped(self, address: str) -> Instance:
        """A placeholder so planned_values cannot resurrect a deleted instance."""
        return Instance(address, "deleted", "", "", "", {}, "", reference_only=True)

    def _add(self, entry: Entry, values: Any, pointer: str) -> Instance:
        instance = Instance(
            address=entry.address,
            mode=entry.mode,
            type=entry.type,
            name=entry.name,
            module_address=entry.module,
            values=values if isinstance(values, dict) else {},
            pointer=pointer,
        )
        self.instances[entry.address] = instance
        return instance

    # -- configuration references ---------------------------------------------------------

    def _index_configuration(self) -> dict[tuple[str, str], Block]:
        """Configuration blocks by (module path without instance keys, ``type.name``)."""
        index: dict[tuple[str, str], Block] = {}
        config = member(self.doc, self.plan, "configuration", dict, "")
        root = member(self.doc, config, "root_module", dict, "/configuration") if config else None
        if root is not None:
            _index_module(self.doc, root, "", "/configuration/root_module", index)
        return index

    def _config_block(self, instance: Instance) -> Block | None:
        module_path = _strip_keys(instance.module_address)
        base = instance.address[len(instance.module_address) + 1 :] if instance.module_address else instance.address
        return self._config_index.get((module_path, _without_key(base)))

    def _expression(self, block: Block | None, name: str) -> tuple[Any, Where]:
        """A block's expression for ``name`` (None when it has none), and where it is."""
        if block is None:
            return None, ""
        return self._block_expressions(block).get(name), deeper(block.where, "expressions", name)

    def _block_expressions(self, block: Block) -> dict[str, Any]:
        return member(self.doc, block.body, "expressions", dict, block.where) or {}

    def resolve(self, instance: Instance, attribute: str) -> Any:
        """The value an unknown attribute will have, through its configuration reference.

        ``x.id`` resolves to the target's ARM id; other attributes (``location``, ``name``)
        to the target's planned value. Returns MISSING when the reference cannot be followed.
        """
        expression, where = self._expression(self._config_block(instance), attribute)
        return self._follow(expression, where, instance.module_address)

    def _follow(self, expression: Any, where: Where, module_address: str) -> Any:
        """What an expression evaluates to: its constant, or the first reference that can be
        followed. A nested block's expressions (an array) name no one value."""
        if expression is None or isinstance(expression, list):
            return MISSING
        expression = expect(self.doc, expression, dict, where)
        if "constant_value" in expression:
            return expression["constant_value"]
        for ref in self._references(expression, where):
            value = self._follow_reference(ref, module_address)
            if value is not MISSING:
                return value
        return MISSING

    def _references(self, expression: dict[str, Any], where: Where) -> list[str]:
        """An expression's ``references``: the strings the format promises, checked."""
        refs = member(self.doc, expression, "references", list, where) or []
        return expect_items(self.doc, refs, str, deeper(where, "references"))

    def _follow_reference(self, ref: str, module_address: str) -> Any:
        if ref.startswith("var."):
            return self._follow_variable(ref[4:].split(".")[0], module_address)
        if ref.startswith(_UNFOLLOWED):
            return MISSING
        if ref.startswith("module."):
            return self._follow_output(ref, module_address)
        match = _REFERENCE.fullmatch(ref)
        if not match or not match.group(5):
            return MISSING
        data, rtype, rname, key, attribute = match.groups()
        target = self._reference_target(f"{'data.' if data else ''}{rtype}.{rname}", key, module_address)
        return MISSING if target is None else self._attribute(target, attribute)

    def _follow_output(self, ref: str, module_address: str) -> Any:
        """``module.NAME.OUTPUT`` or ``module.NAME["key"].OUTPUT``, then any attribute path:
        the output's expression in the called module's configuration, followed inside that
        module instance, so that its references reach the module's planned resources (and
        nested modules' outputs in turn). Each is followed once; MISSING while it is being
        followed, so a cycle that a hostile plan writes ends there."""
        match = _MODULE_OUTPUT.fullmatch(ref)
        if match is None:
            return MISSING
        call, output, path = match.groups()
        key = (f"{module_address}.{call}" if module_address else call, output, path)
        if key not in self._outputs:
            self._outputs[key] = MISSING
            self._outputs[key] = self._output_value(*key)
        return self._outputs[key]

    def _output_value(self, child: str, output: str, path: str | None) -> Any:
        """An output of module instance ``child``, or the attribute ``path`` inside it. An
        output that is a whole resource (``value = azurerm_x.y``) has no one value, so a path
        into it is followed on each of the output's references (``azurerm_x.y.id``)."""
        call, _ = self._module_call(child)
        if call is None:
            return MISSING
        doc, at = self.doc, deeper(call.where, "module")
        outputs = member(doc, member(doc, call.body, "module", dict, call.where) or {}, "outputs", dict, at) or {}
        declared = member(doc, outputs, output, dict, deeper(at, "outputs"))
        if declared is None:
            return MISSING
        where = deeper(at, "outputs", output)
        expression = member(doc, declared, "expression", dict, where)
        where = deeper(where, "expression")
        if path is None or expression is None:
            return self._follow(expression, where, child)
        if "constant_value" in expression:
            return read(expression["constant_value"], path)
        for ref in self._references(expression, where):
            value = self._follow_reference(f"{ref}.{path}", child)
            if value is not MISSING:
                return value
        return MISSING

    def _module_call(self, module_address: str) -> tuple[Block | None, str]:
        """The configuration block of the call that made module instance ``module_address``,
        and the address of the module instance that calls it (empty at the root)."""
        steps = list(_MODULE_STEP.finditer(module_address))
        if not steps:
            return None, ""
        last = steps[-1]
        parent = module_address[: last.start()].rstrip(".")
        return self._config_index.get((_strip_keys(parent), f"module.{last.group(1)}")), parent

    def _reference_target(self, local: str, key: str | None, module_address: str) -> Instance | None:
        """The deployed instance a reference names; without an instance key, the only instance
        of that resource, since a reference to a counted resource as a whole names no one copy."""
        prefix = f"{module_address}." if module_address else ""
        target = self.instances.get(f"{prefix}{local}{key or ''}")
        if target is None and not key:
            candidates = self._by_unkeyed_address().get(prefix + local, [])
            target = candidates[0] if len(candidates) == 1 else None
        return None if target is None or target.mode == "deleted" else target

    def _by_unkeyed_address(self) -> dict[str, list[Instance]]:
        count, index = self._unkeyed
        if count != len(self.instances):
            index = {}
            for address, instance in self.instances.items():
                index.setdefault(_without_key(address), []).append(instance)
            self._unkeyed = (len(self.instances), index)
        return index

    def _attribute(self, target: Instance, attribute: str) -> Any:
        """A referenced attribute: ``id`` as the target's ARM id; a top-level attribute the plan
        does not know yet through the target's own configuration, else as the Unknown it is."""
        if attribute == "id":
            return self.arm_id(target)
        value = read(target.values, attribute)
        if isinstance(value, Unknown):
            resolved = self.resolve(target, attribute) if "." not in attribute else MISSING
            return resolved if resolved is not MISSING else value
        return value

    def _follow_variable(self, name: str, module_address: str) -> Any:
        if not module_address:
            variables = member(self.doc, self.plan, "variables", dict, "") or {}
            entry = member(self.doc, variables, name, dict, "/variables")
            return entry.get("value", MISSING) if entry is not None else MISSING
        call, parent_address = self._module_call(module_address)
        expression, where = self._expression(call, name)
        return self._follow(expression, where, parent_address)

    # -- ids and translation --------------------------------------------------------------

    def value(self, instance: Instance, attribute: str) -> Any:
        """A top-level attribute, with unknowns resolved through references where possible,
        also inside nested blocks (a private endpoint's connection to an account created in
        the same plan)."""
        current = read(instance.values, attribute)
        if isinstance(current, Unknown) and current.reason != "sensitive value, not read":
            resolved = self.resolve(instance, attribute)
            if resolved is not MISSING and resolved is not None:
                return resolved
        if isinstance(current, (list, dict)):
            expression, where = self._expression(self._config_block(instance), attribute)
            if expression is not None:
                return self._resolve_nested(current, expression, where, instance.module_address)
        return current

    def _resolve_nested(self, value: Any, expression: Any, where: Where, module_address: str) -> Any:
        """``value`` with after-apply unknowns replaced by what their nested expressions name."""
        if value is AFTER_APPLY:
            resolved = self._follow(expression, where, module_address)
            return value if resolved is MISSING or resolved is None else resolved
        if isinstance(value, list) and isinstance(expression, list):
            nested = [*expression, *[None] * (len(value) - len(expression))]
            return [self._resolve_nested(v, nested[i], deeper(where, i), module_address) for i, v in enumerate(value)]
        if isinstance(value, dict) and isinstance(expression, dict):
            return {
                k: self._resolve_nested(v, expression.get(k), deeper(where, k), module_address)
                for k, v in value.items()
            }
        return value

    def arm_id(self, instance: Instance) -> str:
        """The instance's ARM id: its own when known, else built from parent or group and name."""
        if instance.arm_id is not None:
            return instance.arm_id
        if instance.resolving:
            return UNRESOLVED
        instance.resolving = True
        try:
            instance.arm_id = self._compute_id(instance)
        finally:
            instance.resolving = False
        return instance.arm_id

    def _compute_id(self, instance: Instance) -> str:
        own = read(instance.values, "id")
        if isinstance(own, str) and own.startswith("/"):
            return own
        name = _text(self.value(instance, "name"))
        if instance.type in ("azapi_resource", "azapi_update_resource"):
            return self._azapi_id(instance, name)
        mapping = MAPPINGS.get(instance.type)
        if mapping is None:
            return f"{UNRESOLVED}/{instance.address}"
        if mapping.patches:  # the provider gives it the id of the resource it writes into
            return _text(self.value(instance, mapping.patches))
        if mapping.scope:  # an extension resource: diagnostic settings on their target
            target = _text(self.value(instance, mapping.scope))
            return f"{target}/providers/{mapping.arm_type}/{name}"
        if mapping.parent:
            parent = _text(self.value(instance, mapping.parent))
            if parent == UNRESOLVED:
                return _unresolved_child_id(mapping.arm_type, name)
            child_type = mapping.arm_type.rsplit("/", 1)[-1]
            return f"{parent}/{child_type}/{name}"
        group = _text(self.value(instance, "resource_group_name"))
        return build_resource_id(SUBSCRIPTION_PLACEHOLDER, group, mapping.arm_type, name)

    def _azapi_id(self, instance: Instance, name: str) -> str:
        arm_type = _azapi_type(instance.values)
        if arm_type is None:
            return f"{UNRESOLVED}/{instance.address}"
        parent = self.value(instance, "parent_id")
        if arm_type.lower() == "microsoft.resources/resourcegroups":
            subscription = parent if isinstance(parent, str) else f"/subscriptions/{SUBSCRIPTION_PLACEHOLDER}"
            return f"{subscription}/resourceGroups/{name}"
        parent_text = _text(parent)
        if parent_text == UNRESOLVED and arm_type.count("/") > 1:
            return _unresolved_child_id(arm_type, name)
        parent_type = parse_resource_id(parent_text).resource_type or ""
        if "/providers/" not in parent_text.lower():  # a resource group (or subscription) scope
            return f"{parent_text}/providers/{arm_type}/{name}"
        if parent_type.split("/")[0].lower() != arm_type.split("/")[0].lower():  # an extension resource
            return f"{parent_text}/providers/{arm_type}/{name}"
        return f"{parent_text}/{arm_type.rsplit('/', 1)[-1]}/{name}"

    def _translate(self, instance: Instance, mapping: TypeMap) -> None:
        body: dict[str, Any] = {}
        for path, constant in mapping.constants.items():
            _assign(body, path, constant)
        for attr in mapping.attrs:
            for tf_path in attr.tf:
                raw = self.value(instance, tf_path) if "." not in tf_path else read(instance.values, tf_path)
                if raw is MISSING:
                    continue
                converted = (
                    raw
                    if isinstance(raw, Unknown) or attr.convert is None
                    else self._convert(instance, tf_path, attr.convert, raw)
                )
                if converted is SKIP:
                    continue
                _assign(body, attr.arm, converted)
                instance.property_map[attr.arm.lower()] = tuple(tf_path.split("."))
                break
        instance.body = body
        instance.translated = True

    def _convert(self, instance: Instance, tf_path: str, convert: Callable[[Any], Any], raw: Any) -> Any:
        """``convert(raw)``; a nested block of the wrong shape is bad input at its pointer."""
        try:
            return convert(raw)
        except BlockShapeError as exc:
            where = deeper(instance.pointer, *tf_path.split("."), *exc.path)
            return expect(self.doc, exc.value, exc.kind, where)  # raises: the value is not a kind

    def _translate_azapi(self, instance: Instance) -> None:
        payload = _azapi_body(instance.values)
        if isinstance(payload, dict):
            self._resolve_body_ids(instance, payload)
        body: dict[str, Any] = dict(payload) if isinstance(payload, dict) else {}
        if isinstance(payload, Unknown):
            body["properties"] = payload
        for attribute in ("location", "tags"):
            value = read(instance.values, attribute)
            if value is not MISSING:
                body[attribute] = value
        declared = read(instance.values, "identity")
        identity = SKIP if declared is MISSING else self._convert(instance, "identity", identity_block, declared)
        if identity is not SKIP:
            body["identity"] = identity
        instance.body = body
        instance.translated = True
        instance.property_map.update(
            {"properties": ("body", "properties"), "sku": ("body", "sku"), "kind": ("body", "kind")}
        )

    def _resolve_body_ids(self, instance: Instance, payload: Any) -> None:
        """Fill unknown ids inside an azapi ``body`` from the body's configuration references.

        Terraform records the references of the whole ``body`` expression, not per leaf, so a
        leaf such as ``properties.storageAccount`` is matched to the one referenced resource of
        the type that property holds (or to the only ``.id`` reference there is).
        """
        targets = self._id_targets(instance, "body")
        if not targets:
            return
        stack = [payload]
        while stack:
            node = stack.pop()
            for key, value in _members(node):
                if isinstance(value, (dict, list)):
                    stack.append(value)
                elif value is AFTER_APPLY:
                    chosen = self._id_target(str(key), targets)
                    if chosen is not None:
                        node[key] = self.arm_id(chosen)

    def _id_target(self, key: str, targets: list[Instance]) -> Instance | None:
        """Which referenced resource an unknown id property names: the one of the type the
        property holds (``storageAccount``: a storage account), else the only one referenced."""
        wanted = _ID_PROPERTY_TYPES.get(key.lower())
        if wanted is None:
            return None
        matches = [t for t in targets if self._arm_type(t) == wanted.lower()]
        if len(matches) == 1:
            return matches[0]
        return targets[0] if len(targets) == 1 else None

    def _id_targets(self, instance: Instance, attribute: str) -> list[Instance]:
        expression, where = self._expression(self._config_block(instance), attribute)
        if expression is None:
            return []
        found: list[Instance] = []
        prefix = f"{instance.module_address}." if instance.module_address else ""
        for ref in self._references(expect(self.doc, expression, dict, where), where):
            match = _REFERENCE.fullmatch(ref)
            if match and match.group(5) == "id":
                data, rtype, rname, key, _ = match.groups()
                target = self.instances.get(f"{prefix}{'data.' if data else ''}{rtype}.{rname}{key or ''}")
                if target is not None and target not in found:
                    found.append(target)
        return found

    def _arm_type(self, instance: Instance) -> str:
        if instance.type == "azapi_resource":
            return (_azapi_type(instance.values) or "").lower()
        mapping = MAPPINGS.get(instance.type)
        return mapping.arm_type.lower() if mapping else ""

    def _merge_updates(self) -> None:
        """Each update's body (an azapi_update_resource's, or a mapped type that ``patches``
        another resource) into the instance it targets, found by ARM id in one index (a plan of
        many updates must not compare each with every instance)."""
        updates = [i for i in self.instances.values() if _updates(i) and not i.reference_only]
        if not updates:
            return
        by_id: dict[str, Instance] = {}
        for candidate in self.instances.values():
            if not candidate.reference_only and candidate.translated and not _updates(candidate):
                by_id.setdefault(self.arm_id(candidate).lower(), candidate)
        for instance in updates:
            target_id, payload, written = self._update(instance)
            target = by_id.get(target_id.lower()) if isinstance(target_id, str) else None
            if target is None or not isinstance(payload, dict):
                self.warnings.append(
                    f"{self.doc.path}: {instance.address} updates a resource this plan does not declare; not merged"
                )
                continue
            _deep_merge(target.body, payload)
            target.updated_paths |= written

    def _update(self, instance: Instance) -> tuple[Any, Any, set[str]]:
        """What an update writes: the id of its target, the body merged into it, and the ARM
        paths it writes (which drift then compares on the target)."""
        if instance.type != "azapi_update_resource":
            return self.arm_id(instance), instance.body, set(self._configured(instance) or ())
        target_id = self.value(instance, "resource_id")
        if target_id is MISSING:
            target_id = self.arm_id(instance)
        return target_id, _azapi_body(instance.values), self._azapi_configured(instance) or set()

    def _translate_instance(self, instance: Instance) -> str | None:
        """Translate an azapi or mapped azurerm instance into its ARM body, and give its ARM type;
        None for a type no check reads (or an azapi resource without a type)."""
        if instance.type == "azapi_resource":
            self._translate_azapi(instance)
            return _azapi_type(instance.values)
        mapping = MAPPINGS.get(instance.type)
        if mapping is None:
            return None
        self._translate(instance, mapping)
        return mapping.arm_type

    def _origin(self, instance: Instance) -> Origin:
        mapping = MAPPINGS.get(instance.type)
        notes = {k.lower(): v for k, v in mapping.inexpressible.items()} if mapping is not None else {}
        return Origin(
            kind="terraform",
            file=self.doc.path,
            pointer=instance.pointer,
            document=self.doc,
            address=instance.address,
            property_map=instance.property_map,
            reference_only=instance.reference_only,
            action=instance.action,
            notes=notes or None,
            configured=self._configured(instance),
        )

    def _configured(self, instance: Instance) -> frozenset[str] | None:
        """The lower-cased ARM paths the configuration writes, as against values the provider
        plans by default (azurerm's ``priority = "Regular"``, an empty ``node_taints``): each
        translated path whose Terraform attribute has an expression, and the values the type
        implies. None when the plan has no configuration for the resource: drift then compares
        everything, as it must when it cannot tell."""
        if instance.type == "azapi_resource":
            paths = self._azapi_configured(instance)
        else:
            expressions = self._expressions(instance)
            if expressions is None:
                return None
            written = (
                arm for arm, steps in instance.property_map.items() if _written(expressions, steps, instance.values)
            )
            paths = {*written, *_IMPLIED.get(instance.type, ())}
        return None if paths is None else frozenset(paths | instance.updated_paths)

    def _azapi_configured(self, instance: Instance) -> set[str] | None:
        """What an azapi resource (or update) writes: the ``body`` keys, and ``location``,
        ``tags`` and ``identity`` when written. A literal body names its leaves; one built from
        references (or by a function) names none, so each top-level member of the planned body
        counts as written as a whole, and ``properties`` when even that is unknown."""
        expressions = self._expressions(instance)
        if expressions is None:
            return None
        paths: set[str] = {name for name in ("location", "tags", "identity") if name in expressions}
        body = expressions.get("body")
        if body is None:
            return paths
        literal = _azapi_body({"body": body.get("constant_value")}) if isinstance(body, dict) else None
        if isinstance(literal, dict):
            return paths | _leaf_paths(literal, "")
        planned = _azapi_body(instance.values)
        return paths | ({k.lower() for k in planned} if isinstance(planned, dict) else {"properties"})

    def _expressions(self, instance: Instance) -> dict[str, Any] | None:
        """The expressions of the instance's configuration block; None when there is no block."""
        block = self._config_block(instance)
        return None if block is None else self._block_expressions(block)

    def translate_state(self, entry: Entry, values: dict[str, Any], pointer: str) -> Resource | None:
        """One resource state outside the planned set (a ``resource_drift`` side), as ARM."""
        instance = Instance(
            address=entry.address,
            mode="managed",
            type=entry.type,
            name=entry.name,
            module_address=_module_of(entry.address),
            values=values,
            pointer=pointer,
            action="drift",
        )
        arm_type = self._translate_instance(instance)
        if arm_type is None or _updates(instance):
            return None
        arm_id = self._compute_id(instance)
        parsed = parse_resource_id(arm_id)
        instance.body.update(id=arm_id, type=arm_type)
        return Resource(
            id=arm_id,
            type=arm_type,
            name=parsed.name_chain or _text(read(values, "name")),
            body=instance.body,
            origin=self._origin(instance),
        )

    def resources(self) -> list[Resource]:
        """The plan's deployed instances, and the data sources they refer to, as ARM resources."""
        self._collect()
        for instance in self.instances.values():
            if instance.mode != "deleted":
                instance.arm_type = self._translate_instance(instance)
        self._merge_updates()
        built = [
            (i, self._resource(i, i.arm_type))
            for i in self.instances.values()
            if i.translated and i.arm_type and not _updates(i)
        ]
        return _with_parent_locations(built)

    def untranslated(self) -> dict[str, int]:
        """The deployed instances nothing was read from, counted by Terraform type: types no
        mapping translates, and azapi resources whose type the plan does not say. Updates are
        read (merged, or named in a warning when their target is missing), and data sources
        are context, not resources the plan deploys. Call after `resources`."""
        return dict(
            Counter(
                i.type
                for i in self.instances.values()
                if i.mode == "managed" and not i.reference_only and i.arm_type is None and not _updates(i)
            )
        )

    def _resource(self, instance: Instance, arm_type: str) -> Resource:
        arm_id = self.arm_id(instance)
        name = parse_resource_id(arm_id).name_chain or _text(self.value(instance, "name"))
        instance.body.setdefault("name", name.rsplit("/", 1)[-1])
        instance.body["type"] = arm_type
        instance.body["id"] = arm_id
        return Resource(id=arm_id, type=arm_type, name=name, body=instance.body, origin=self._origin(instance))


def _updates(instance: Instance) -> bool:
    """Whether the instance writes into another resource rather than being one."""
    if instance.type == "azapi_update_resource":
        return True
    mapping = MAPPINGS.get(instance.type)
    return mapping is not None and mapping.patches is not None


def _with_parent_locations(built: list[tuple[Instance, Resource]]) -> list[Resource]:
    """The resources, each in its parent's region where the provider sends that as the ARM
    ``location``: azurerm's AML computes are in their workspace's region (their own ``location``
    attribute is ``computeLocation``, and v4 compute instances have none), as ARM reports them."""
    # Only the parents' types are indexed: a parent is found by its id or by its group, type
    # and name, so no other resource can answer, and indexing all 10,000 cost a tenth of a second.
    parent_types = {resource.type_key.rsplit("/", 1)[0] for instance, resource in built if _located_by_parent(instance)}
    if not parent_types:
        return [resource for _, resource in built]
    inventory = Inventory(resource for _, resource in built if resource.type_key in parent_types)
    return [
        _in_parent_region(resource, inventory) if _located_by_parent(instance) else resource
        for instance, resource in built
    ]


def _located_by_parent(instance: Instance) -> bool:
    mapping = MAPPINGS.get(instance.type)
    return mapping is not None and mapping.parent_location


def _in_parent_region(resource: Resource, inventory: Inventory) -> Resource:
    """The resource with its parent's ``location``, the parent found by id as checks find it."""
    parent = inventory.parent(resource)
    if "location" in resource.body or parent is None or "location" not in parent.body:
        return resource
    return dataclasses.replace(resource, body={**resource.body, "location": parent.body["location"]})


def managed_changes(doc: Document, key: str) -> Iterator[Change]:
    """Each managed-resource entry of the ``resource_changes`` or ``resource_drift`` list, with
    its change object and its actions (an array of strings), each checked where it is read."""
    for i, raw in enumerate(member(doc, doc.data, key, list, "") or []):
        entry = Entry.read(doc, raw, f"/{key}/{i}")
        if entry.mode != "managed":
            continue
        detail = member(doc, entry.raw, "change", dict, entry.pointer) or {}
        at = (entry.pointer, "change")
        actions = member(doc, detail, "actions", list, at) or []
        yield Change(entry, detail, expect_items(doc, actions, str, deeper(at, "actions")))


def read_resource_drift(doc: Document) -> list[tuple[Resource | None, Resource | None]]:
    """(before, after) of each resource Terraform's refresh found changed or deleted outside it.

    Both states are translated like planned resources, so a drift rule compares ARM paths; a
    deletion has no ``after``. Sensitive values are Unknown here too and are never compared.
    """
    reader = PlanReader(doc)
    reader._collect()
    pairs: list[tuple[Resource | None, Resource | None]] = []
    for change in managed_changes(doc, "resource_drift"):
        if "update" not in change.actions and "delete" not in change.actions:
            continue  # no-op drift records a move only
        states: list[Resource | None] = []
        for side in ("before", "after"):
            values = member(doc, change.detail, side, dict, pointer_join(change.pointer, "change"))
            if values is None:
                states.append(None)
                continue
            masked = overlay(values, None, change.detail.get(f"{side}_sensitive"))
            states.append(
                reader.translate_state(
                    change.entry, masked if isinstance(masked, dict) else {}, f"{change.pointer}/change/{side}"
                )
            )
        pairs.append((states[0], states[1] if "delete" not in change.actions else None))
    return pairs


def _not_deployed(actions: list[str]) -> bool:
    """A change that leaves nothing to scan: a read, a forget, or a delete without a create."""
    return "forget" in actions or "read" in actions or ("delete" in actions and "create" not in actions)


def _written(expressions: dict[str, Any], steps: tuple[str, ...], values: dict[str, Any]) -> bool:
    """Whether a block's expressions write the Terraform attribute at ``steps``.

    A nested block is an array of expressions objects, one per block written; an attribute is
    one expression, and one holding an object is written as a whole. Terraform omits what a
    ``dynamic`` block writes, so a nested block the expressions lack while the plan holds
    instances of it (or more instances than were written) counts as written: it cannot be a
    provider's default for an attribute, and reading it as unwritten would hide real drift.
    """
    node: Any = expressions
    for depth, step in enumerate(steps):
        if isinstance(node, list):
            if not step.isdigit():
                return False
            if int(step) >= len(node):
                return True
            node = node[int(step)]
        elif isinstance(node, dict) and step in node:
            node = node[step]
        elif depth and isinstance(node, dict) and ("constant_value" in node or "references" in node):
            return True
        else:
            return _planned_blocks(read(values, ".".join(steps[: depth + 1])))
    return True


def _planned_blocks(value: Any) -> bool:
    """A planned value that is instances of a nested block: a non-empty array of objects."""
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def _leaf_paths(value: dict[str, Any], prefix: str) -> set[str]:
    """The lower-cased dotted paths of an object's leaves; an array or empty object is a leaf."""
    paths: set[str] = set()
    for key, member_value in value.items():
        path = f"{prefix}{key}".lower()
        if isinstance(member_value, dict) and member_value:
            paths |= _leaf_paths(member_value, path + ".")
        else:
            paths.add(path)
    return paths


def _members(node: Any) -> list[tuple[Any, Any]]:
    """The (key, value) pairs of a JSON object or array; none for a leaf."""
    if isinstance(node, dict):
        return list(node.items())
    return list(enumerate(node)) if isinstance(node, list) else []


def _module_resources(
    doc: Document, module: dict[str, Any] | None, pointer: str
) -> Iterator[tuple[dict[str, Any], str]]:
    """The resource entries (objects) of a ``planned_values`` or state module and of its child
    modules, each with its pointer."""
    if module is None:
        return
    for i, raw in enumerate(member(doc, module, "resources", list, pointer) or []):
        at = f"{pointer}/resources/{i}"
        yield expect(doc, raw, dict, at), at
    for j, child in enumerate(member(doc, module, "child_modules", list, pointer) or []):
        at = f"{pointer}/child_modules/{j}"
        yield from _module_resources(doc, expect(doc, child, dict, at), at)


def declaration_key(address: str) -> tuple[str, str]:
    """Where an instance is declared: its module call path (``gpu.inner``, empty at the root) and
    ``TYPE.NAME`` in that module. Every instance key is dropped: ``count`` and ``for_each``
    instances share one block."""
    module = _module_of(address)
    local = _INSTANCE_KEY.sub("", address[len(module) + 1 :] if module else address)  # TYPE.NAME[KEY]
    return ".".join(step.group(1) for step in _MODULE_STEP.finditer(module)), local


def _module_of(address: str) -> str:
    steps = list(_MODULE_STEP.finditer(address))
    return address[: steps[-1].end()] if steps else ""


def _strip_keys(module_address: str) -> str:
    return _INSTANCE_KEY.sub("", module_address)


def _without_key(address: str) -> str:
    """The address without its own instance key (``x.y[0]`` -> ``x.y``); module keys stay."""
    if not address.endswith("]"):
        return address
    keys = list(_INSTANCE_KEY.finditer(address))
    return address[: keys[-1].start()] if keys and keys[-1].end() == len(address) else address


def _unresolved_child_id(arm_type: str, name: str) -> str:
    """The id of a child resource whose parent the plan cannot name: well formed, with a
    placeholder for the subscription, the group and each parent's name, so that it still has
    its type and its own name, and a live resource can be matched to it on those."""
    parents = [UNRESOLVED] * (arm_type.count("/") - 1)
    return build_resource_id(SUBSCRIPTION_PLACEHOLDER, UNRESOLVED, arm_type, "/".join([*parents, name]))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else UNRESOLVED


def _azapi_type(values: dict[str, Any]) -> str | None:
    raw = values.get("type")
    return raw.split("@", 1)[0] if isinstance(raw, str) and "/" in raw else None


def _azapi_body(values: dict[str, Any]) -> Any:
    """azapi v1 writes ``body`` as a JSON string, v2 as an object."""
    body = values.get("body")
    if isinstance(body, str):
        try:
            return json.loads(body)
        except json.JSONDecodeError:
            return Unknown("azapi body is not valid JSON")
    return body


def _assign(body: dict[str, Any], path: str, value: Any) -> None:
    """Set a dotted ARM path, creating objects and list slots as needed."""
    keys = path.split(".")
    current: Any = body
    for key, following in itertools.pairwise(keys):
        container: Any = [] if following.isdigit() else {}
        if isinstance(current, list):
            index = int(key)
            while len(current) <= index:
                current.append(None)
            if not isinstance(current[index], (dict, list)):
                current[index] = container
            current = current[index]
        else:
            if not isinstance(current.get(key), (dict, list)):
                current[key] = container
            current = current[key]
    last = keys[-1]
    if isinstance(current, list):
        index = int(last)
        while len(current) <= index:
            current.append(None)
        current[index] = value
    else:
        current[last] = value


def _deep_merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        existing = next((k for k in target if k.lower() == key.lower()), key)
        if isinstance(value, dict) and isinstance(target.get(existing), dict):
            _deep_merge(target[existing], value)
        else:
            target[existing] = value


def _index_module(
    doc: Document, module: dict[str, Any], path: str, where: Where, index: dict[tuple[str, str], Block]
) -> None:
    """A configuration module's blocks into ``index``, then its calls' modules, depth first.

    A function of the module, not a nested function of the reader that calls itself: such a
    function holds itself in a closure cell, a cycle that kept the index, and through it the
    plan's configuration, alive until a full collection."""
    for i, resource in enumerate(member(doc, module, "resources", list, where) or []):
        at = deeper(where, "resources", i)
        address = expect(doc, expect(doc, resource, dict, at).get("address"), str, deeper(at, "address"))
        index[(path, address)] = Block(resource, at)
    calls = member(doc, module, "module_calls", dict, where) or {}
    for name, call in calls.items():
        at = deeper(where, "module_calls", name)
        index[(path, f"module.{name}")] = Block(expect(doc, call, dict, at), at)
        child = member(doc, call, "module", dict, at)
        if child is not None:
            _index_module(doc, child, f"{path}.module.{name}".lstrip("."), deeper(at, "module"), index)


class PlanContents(NamedTuple):
    """What a plan gives a scan: its ARM-shaped resources, warnings about what could not be
    merged, and the deployed instances nothing was read from, counted by Terraform type."""

    resources: list[Resource]
    warnings: list[str]
    untranslated: dict[str, int]


def read_plan_contents(doc: Document) -> PlanContents:
    reader = PlanReader(doc)
    resources = reader.resources()
    return PlanContents(resources, reader.warnings, reader.untranslated())


def read_plan(doc: Document) -> tuple[list[Resource], list[str]]:
    """All ARM-shaped resources of a plan, and warnings about what could not be merged."""
    contents = read_plan_contents(doc)
    return contents.resources, contents.warnings


def _address(doc: Document, address: str, pointer: str, key: str, pattern: re.Pattern[str] = _ADDRESS) -> str:
    """``address`` when it is a resource (or module) instance address: everything after it keys
    on one, and a hostile one must not reach the patterns that take it apart."""
    if pattern.fullmatch(address):
        return address
    shown = address if len(address) <= 60 else f"{address[:57]}..."
    kind = "module" if pattern is _MODULE_ADDRESS else "resource"
    raise InputError(f"{doc.path}: {pointer_join(pointer, key)}: expected a Terraform {kind} address, found {shown!r}")


def _module_address(doc: Document, address: str | None, pointer: str) -> str | None:
    return None if address is None else _address(doc, address, pointer, "module_address", _MODULE_ADDRESS)
