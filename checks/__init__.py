"""The built-in rule pack: one file per rule, registered through ``azai.checks``.

``builtin_checks`` is what the entry point names. It imports the rule modules when called,
not when this package is imported, and it finds each module's rule by type, so adding a
rule is adding one file.
"""

from __future__ import annotations

import importlib
import pkgutil

from scanner.engine.checkapi import Check


def builtin_checks() -> list[Check]:
    found: list[Check] = []
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        rules = [value for value in vars(module).values() if isinstance(value, Check)]
        if len(rules) != 1:
            raise ValueError(f"{module.__name__} must define exactly one rule, found {len(rules)}")
        found.append(rules[0])
    return found
