"""Loading rule packs from the ``azai.checks`` entry-point group.

Each entry point names a callable returning the pack's checks; the entry-point name is the
pack's id prefix (the built-in pack is ``AZAI``). Loading is explicit and happens only when a
command needs rules, so ``azai --version`` pays nothing for it. Two rules with one id, or a
rule outside its pack's prefix, stop the run: a silent overwrite would hide a rule.

`live_needs` turns the rules a run selected into what a live scan must read for them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points

from scanner.engine.checkapi import Check
from scanner.errors import InputError
from scanner.model.needs import LiveNeeds, LiveRead, ReadSubject

GROUP = "azai.checks"


class PluginError(InputError):
    """A rule pack is broken: duplicate ids, a wrong prefix, or not a list of checks."""


def load_checks(points: Iterable[EntryPoint] | None = None) -> list[Check]:
    """All checks from every installed pack, sorted by id."""
    found = list(points) if points is not None else list(entry_points(group=GROUP))
    if not found:
        raise PluginError(f"no rule packs are installed in the {GROUP!r} entry-point group; install azai with pip")
    checks: dict[str, Check] = {}
    slugs: dict[str, str] = {}
    for point in sorted(found, key=lambda p: p.name):
        try:
            provider = point.load()
        except Exception as exc:  # a third-party pack must not take the scanner down with a traceback
            raise PluginError(f"rule pack {point.name!r} ({point.value}) failed to load: {exc}") from None
        pack = provider() if callable(provider) else provider
        for check in pack:
            if not isinstance(check, Check):
                raise PluginError(f"rule pack {point.name!r} yielded {type(check).__name__}, not a Check")
            if not check.id.startswith(point.name + "-"):
                raise PluginError(
                    f"rule {check.id} in pack {point.name!r} does not use the pack's prefix {point.name}-"
                )
            if check.id in checks:
                raise PluginError(f"duplicate rule id {check.id}: {checks[check.id].module} and {check.module}")
            if check.slug in slugs:
                raise PluginError(f"duplicate rule slug {check.slug!r}: {slugs[check.slug]} and {check.id}")
            checks[check.id] = check
            slugs[check.slug] = check.id
    return [checks[k] for k in sorted(checks)]


def find_check(checks: Iterable[Check], key: str) -> Check | None:
    """A check by id or slug, case-insensitively."""
    wanted = key.strip().lower()
    return next((c for c in checks if wanted in (c.id.lower(), c.slug)), None)


def live_needs(checks: Iterable[Check]) -> LiveNeeds:
    """What a live scan must read for these checks: the types they evaluate and declare they
    look up, and each declared `LiveRead` for the resources of the declaring check's types (of
    its `kinds`, where it names some). Checks that do not run on live resources need nothing."""
    types: set[str] = set()
    subjects: set[ReadSubject] = set()
    every_type = False
    for check in checks:
        if "live" not in check.sources:
            continue
        every_type = every_type or not check.reads_declared
        types.update(check.resource_types)
        for item in check.reads:
            read = LiveRead.named(item)
            if read is None:
                types.add(item)
                continue
            subjects.update(ReadSubject(read, t.lower(), _kinds(check, t)) for t in check.resource_types)
    return LiveNeeds.of(types, subjects, every_type)


def every_live_read(checks: Iterable[Check]) -> LiveNeeds:
    """What a snapshot or a drift audit reads: every type the collector knows (a later drift run
    may compare any of them), and each per-resource read that one of ``checks`` declares."""
    return dataclasses.replace(live_needs(checks), every_type=True)


def _kinds(check: Check, resource_type: str) -> frozenset[str]:
    """The kinds of ``resource_type`` the check narrows its reads to, lower-cased whoever built
    the check (`@rule` lower-cases them; a `Check` made directly may not)."""
    wanted = resource_type.lower()
    return frozenset(k.lower() for t, kinds in check.kinds.items() if t.lower() == wanted for k in kinds)
