"""JUnit XML for Azure DevOps (PublishTestResults) and GitLab test reports.

One test suite per rule and one test case per (rule, resource, input) evaluated: a finding is a
failure, an undetermined check or a suppressed finding is skipped with its reason, anything
else passed. That shows a pipeline which resources were checked, not only which failed.

The characters XML 1.0 forbids, which a name or message may carry, are made visible escapes in
the serialized document, so a parser never rejects it, whichever field quoted them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import NamedTuple

from reports.common import unread_lines
from reports.escaping import xml_text
from scanner.engine.checkapi import Check
from scanner.engine.results import Finding, ScanResult, Undetermined
from scanner.model.places import Place
from scanner.model.resources import CoverageGap, Resource
from scanner.model.shown import bare_text


class Case(NamedTuple):
    """One (rule, resource) test case; ``place`` is where a failure or skip points."""

    name: str
    classname: str
    failure: str | None
    skip: str | None
    place: Place | None = None


def _case_name(resource: Resource) -> str:
    """The resource and the input it was read from: a plan and a template of one resource, or
    two environments' templates, are distinct cases that a test report would otherwise merge."""
    source = "live" if resource.origin.kind == "live" or not resource.origin.file else resource.origin.file
    return f"{resource.name} ({source})"


class _ByRule:
    """A scan's findings, undetermined pairs and passes, each grouped by rule id once: filtering
    all of them again for each of 39 rules was a quarter of the report at 10,000 resources."""

    def __init__(self, result: ScanResult) -> None:
        self.findings: dict[str, list[Finding]] = defaultdict(list)
        self.undetermined: dict[str, list[Undetermined]] = defaultdict(list)
        self.passed: dict[str, list[Resource]] = defaultdict(list)
        for finding in result.findings:
            self.findings[finding.check.id].append(finding)
        for item in result.undetermined:
            self.undetermined[item.check.id].append(item)
        for check, resource in result.passed:
            self.passed[check.id].append(resource)


def _rule_cases(grouped: _ByRule, check: Check) -> list[Case]:
    """Every resource the rule evaluated, so a pipeline sees what passed as well as what failed."""
    cases: list[Case] = []
    findings = grouped.findings.get(check.id, [])
    per_resource = Counter((f.resource.type, _case_name(f.resource)) for f in findings)
    for f in findings:
        observed = bare_text(f.violation.observed)
        detail = f"{f.violation.message} [{f.violation.path}: {observed} -> {f.violation.expected}]"
        name = _case_name(f.resource)
        if per_resource[f.resource.type, name] > 1:  # one rule, two properties: a case each
            name += f" {f.violation.path}"
        if f.suppression is not None:
            cases.append(Case(name, f.resource.type, None, f"suppressed: {f.suppression.justification}", f.place))
        else:
            cases.append(Case(name, f.resource.type, f"{f.severity.label}: {detail}", None, f.place))
    cases += [
        Case(_case_name(u.resource), u.resource.type, None, u.reason, u.place)
        for u in grouped.undetermined.get(check.id, [])
    ]
    cases += [Case(_case_name(r), r.type, None, None, r.origin.place()) for r in grouped.passed.get(check.id, [])]
    cases.sort(key=lambda c: (c.classname, c.name))
    return cases


# ElementTree's escapes: character data's three, and in an attribute also the quote and the
# line ends and tab, which a parser would otherwise normalize to spaces.
_TEXT_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
_ATTRIBUTE_ESCAPES = (*_TEXT_ESCAPES, ('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;"))
_IN_ATTRIBUTE = re.compile('[&<>"\r\n\t]')


def _escaped(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for char, entity in escapes:
        if char in text:
            text = text.replace(char, entity)
    return text


def _attribute(text: str) -> str:
    """An attribute value, escaped; most values (names, types, paths) need nothing."""
    return text if _IN_ATTRIBUTE.search(text) is None else _escaped(text, _ATTRIBUTE_ESCAPES)


def _tag(name: str, attributes: dict[str, str], depth: int, close: str) -> str:
    """One element's line: its start tag indented two spaces a level, then ``close`` (`` />``
    when empty, ``>`` before children, or ``>text</name>``)."""
    pairs = "".join([f' {key}="{_attribute(value)}"' for key, value in attributes.items()])
    return f"{'  ' * depth}<{name}{pairs}{close}"


def _element(name: str, attributes: dict[str, str], depth: int, text: str | None = None) -> str:
    return _tag(name, attributes, depth, f">{_escaped(text, _TEXT_ESCAPES)}</{name}>" if text else " />")


def _rule_suite(lines: list[str], check: Check, cases: list[Case]) -> tuple[int, int]:
    """Adds the rule's test suite; returns its failure and skip counts, which the totals need."""
    failures = sum(1 for c in cases if c.failure)
    skipped = sum(1 for c in cases if c.skip)
    suite = {
        "name": f"{check.id} {check.slug}",
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
    }
    if not cases:
        lines.append(_element("testsuite", suite, 1))
        return 0, 0
    lines.append(_tag("testsuite", suite, 1, ">"))
    for name, classname, failure, skip, place in cases:
        case = {"name": name, "classname": f"{check.id}.{classname}"}
        if place is not None and place.file:  # the attributes pytest writes, which GitLab links
            case["file"] = place.file
            if place.line is not None:
                case["line"] = str(place.line)
        if failure:
            lines.append(_tag("testcase", case, 2, ">"))
            lines.append(_element("failure", {"message": failure.split(" [", 1)[0], "type": check.id}, 3, failure))
            lines.append("    </testcase>")
        elif skip:
            lines.append(_tag("testcase", case, 2, ">"))
            lines.append(_element("skipped", {"message": skip}, 3))
            lines.append("    </testcase>")
        else:
            lines.append(_element("testcase", case, 2))
    lines.append("  </testsuite>")
    return failures, skipped


def _coverage_suite(lines: list[str], coverage: list[CoverageGap], unread: list[tuple[bool, str]]) -> None:
    """Scopes the scan could not read, as errors, so the pipeline does not show the scan as
    complete; and the resource types it read nothing from, as skipped cases (one for the AI
    services' types, one for the others): not checked, yet not a failure of the scan."""
    if not coverage and not unread:
        return
    count = str(len(coverage) + len(unread))
    errors, skipped = str(len(coverage)), str(len(unread))
    suite = {"name": "coverage", "tests": count, "failures": "0", "errors": errors, "skipped": skipped}
    lines.append(_tag("testsuite", suite, 1, ">"))
    for gap in coverage:
        lines.append(_tag("testcase", {"name": gap.scope, "classname": "coverage"}, 2, ">"))
        lines.append(_element("error", {"message": f"not scanned ({gap.status_label})"}, 3, gap.reason))
        lines.append("    </testcase>")
    for ai, text in unread:
        name = "AI service types azai does not read" if ai else "non-AI types azai does not read"
        lines.append(_tag("testcase", {"name": name, "classname": "coverage"}, 2, ">"))
        lines.append(_element("skipped", {"message": text}, 3))
        lines.append("    </testcase>")
    lines.append("  </testsuite>")


def render(result: ScanResult) -> bytes:
    """The document, written line by line as ElementTree indented it (two spaces a level), but
    without building a tree: ElementTree's serializer is pure Python and took a quarter of a
    10,000-resource report."""
    lines: list[str] = []
    total = failures = skipped = 0
    grouped = _ByRule(result)
    for check in result.checks:
        cases = _rule_cases(grouped, check)
        suite_failures, suite_skipped = _rule_suite(lines, check, cases)
        total += len(cases)
        failures += suite_failures
        skipped += suite_skipped
    unread = unread_lines(result.unread_types)
    _coverage_suite(lines, result.coverage, unread)
    total += len(result.coverage) + len(unread)
    root = {
        "name": "azai",
        "tests": str(total),
        "failures": str(failures),
        "errors": str(len(result.coverage)),
        "skipped": str(skipped + len(unread)),
    }
    if lines:
        document = "\n".join([_tag("testsuites", root, 0, ">"), *lines, "</testsuites>"])
    else:  # no rule and no coverage gap: an empty element, as ElementTree writes it
        document = _element("testsuites", root, 0)
    body = xml_text(document).encode("utf-8")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + body + b"\n"
