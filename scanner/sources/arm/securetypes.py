"""Parameter and output types (languageVersion 2.0 ``definitions``), and which of their values are secret.

A ``securestring`` or ``secureObject`` value is never read. Bicep's ``@secure()`` marks a type,
and "you can use decorators on properties", so an object can mark some of its properties
secure and leave the rest plain (Microsoft Learn, "User-defined data types in Bicep", sections
"Define types" and "Secure types": "The value of a secure type isn't saved to the deployment
history and isn't logged"; MicrosoftDocs/azure-docs
articles/azure-resource-manager/bicep/user-defined-data-types.md @0868341b). The compiled
template then types the object ``object`` and only those properties ``securestring`` or
``secureObject``. ARM hides exactly those members, so a scan does too: the AVM-style
``containerAppEnv`` object, whose connection strings and certificate password are secure, still
tells which workload profiles the environment has.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from scanner.model.unknown import Unknown

# Deeper than any real type nests; a type that refers to itself stops here.
MAX_REF_DEPTH = 16
# Deeper than any type written out in one place nests (a hostile template may nest more).
MAX_INLINE_DEPTH = 64
_SECURE_TYPES = ("securestring", "secureobject")


def resolve_definition(template: dict[str, Any], definition: Any, depth: int = 0) -> dict[str, Any]:
    """A parameter's definition with its ``$ref`` type folded in (``"$ref": "#/definitions/T"``):
    a parameter inherits ``type``, ``nullable`` and the rest from ``T``, through nested refs;
    its own keys win."""
    if not isinstance(definition, dict):
        return {}
    ref = definition.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/definitions/") or depth > MAX_REF_DEPTH:
        return definition
    target = _dict(template.get("definitions")).get(_definition_name(ref))
    if not isinstance(target, dict):
        return definition
    base = resolve_definition(template, target, depth + 1)
    return {**base, **{k: v for k, v in definition.items() if k != "$ref"}}


def is_secure(template: dict[str, Any], definition: Any) -> bool:
    """A ``securestring`` or ``secureObject`` parameter or output: its whole value is secret."""
    return str(resolve_definition(template, definition).get("type", "")).lower() in _SECURE_TYPES


class SecretTypes:
    """Which types of one scan hold a secret, and their values as a scan may read them.

    Whether a type holds a secret takes a walk of the type and of every type it refers to, and
    AVM modules give most parameters a type from ``definitions``. So each template's
    definitions are worked out once (`_secret_definitions`), for every parameter and output of
    every instance of it (a linked template is one document however many modules deploy it)."""

    def __init__(self) -> None:
        # id(template) -> (template, names of its definitions that hold a secret); the template
        # is kept so that its id cannot be another's while it is here.
        self._named: dict[int, tuple[dict[str, Any], frozenset[str]]] = {}

    def holds(self, template: dict[str, Any], definition: Any) -> bool:
        """A secure type, or one holding a secure type in a property, item or variant: some part
        of its value is secret, so no report quotes the value it was given."""
        return _holds(definition, self._secret_names(template), 0)

    def _secret_names(self, template: dict[str, Any]) -> frozenset[str]:
        found = self._named.get(id(template))
        if found is not None and found[0] is template:
            return found[1]
        names = _secret_definitions(template)
        self._named[id(template)] = (template, names)
        return names

    def hide(self, template: dict[str, Any], definition: Any, value: Any, what: str, depth: int = 0) -> Any:
        """``value``, of the type ``definition``, as a scan may read it: each part the type marks
        secure is unknown (``what`` names the part in the reason). An empty part (``''``, ``{}``,
        ``[]``, null) holds nothing secret and is read, so ``empty(x.password)`` still decides."""
        if is_secure(template, definition):
            if isinstance(value, Unknown):  # its symbol may carry known text: never shown
                return Unknown(f"secure value '{what}' is not read", may_be_null=value.may_be_null)
            return value if value is None or value in ("", {}, []) else Unknown(f"secure value '{what}' is not read")
        if isinstance(value, Unknown) or not self.holds(template, definition):
            return value
        if depth > MAX_REF_DEPTH:
            return Unknown(f"secure value in '{what}' is not read")
        resolved = resolve_definition(template, definition)
        if isinstance(value, dict):
            return self._hide_members(template, resolved, value, what, depth)
        if isinstance(value, list):
            items = enumerate(value)
            return [self.hide(template, _item(resolved, i), item, f"{what}[{i}]", depth + 1) for i, item in items]
        return value

    def _hide_members(
        self, template: dict[str, Any], resolved: dict[str, Any], value: dict[str, Any], what: str, depth: int
    ) -> Any:
        variant = _variant(template, resolved, value)
        if variant is None:  # which variant the value is decides which parts are secret
            return Unknown(f"secure value in '{what}' is not read")
        declared = {str(k).lower(): v for k, v in _dict(variant.get("properties")).items()}
        extra = variant.get("additionalProperties")
        return {
            key: self.hide(template, declared.get(str(key).lower(), extra), member, f"{what}.{key}", depth + 1)
            for key, member in value.items()
        }


def _secret_definitions(template: dict[str, Any]) -> frozenset[str]:
    """The names of a template's definitions that hold a secret, themselves or through the
    definitions they refer to (a fixed point, so types that refer to each other end)."""
    definitions = _dict(template.get("definitions"))
    found: set[str] = set()
    while True:
        more = {name for name, d in definitions.items() if name not in found and _holds(d, found, 0)}
        if not more:
            return frozenset(found)
        found |= more


def _holds(definition: Any, secret_names: Set[str], depth: int) -> bool:
    """Whether a type, as written, holds a secure type; a ``$ref`` holds one when it names one of
    ``secret_names``. A type nested deeper than any real one is taken to hold one: it is not read."""
    if not isinstance(definition, dict):
        return False
    if depth > MAX_INLINE_DEPTH or str(definition.get("type", "")).lower() in _SECURE_TYPES:
        return True
    ref = definition.get("$ref")
    if isinstance(ref, str) and _definition_name(ref) in secret_names:
        return True
    return any(_holds(member, secret_names, depth + 1) for member in _members(definition))


def _definition_name(ref: str) -> str:
    """The definition a ``"$ref": "#/definitions/T"`` names (JSON pointer escapes undone)."""
    return ref.removeprefix("#/definitions/").replace("~1", "/").replace("~0", "~")


def _variant(template: dict[str, Any], resolved: dict[str, Any], value: dict[str, Any]) -> dict[str, Any] | None:
    """The object type a value is: the type itself, or the variant of a tagged union
    (``discriminator``) its tag selects. None when the tag selects none that is known."""
    discriminator = resolved.get("discriminator")
    if not isinstance(discriminator, dict):
        return resolved
    tag = value.get(str(discriminator.get("propertyName", "")))
    variant = _dict(discriminator.get("mapping")).get(tag) if isinstance(tag, str) else None
    return resolve_definition(template, variant) if isinstance(variant, dict) else None


def _item(resolved: dict[str, Any], index: int) -> Any:
    """The type of an array's item ``index``: its tuple position (``prefixItems``), else ``items``."""
    prefix = resolved.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    return resolved.get("items")


def _members(resolved: dict[str, Any]) -> list[Any]:
    """Every type a value of this type holds: properties, items, tuple positions, variants."""
    members: list[Any] = [*_dict(resolved.get("properties")).values()]
    members += [resolved.get(k) for k in ("items", "additionalProperties") if isinstance(resolved.get(k), dict)]
    prefix = resolved.get("prefixItems")
    members += prefix if isinstance(prefix, list) else []
    discriminator = resolved.get("discriminator")
    if isinstance(discriminator, dict):
        members += list(_dict(discriminator.get("mapping")).values())
    return members


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
