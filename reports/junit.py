"""JUnit XML for Azure DevOps (PublishTestResults) and GitLab test reports.

One test suite per rule and one test case per (rule, resource, input) evaluated: a finding is a
failure, an undetermined check or a suppressed finding is skipped with its reason, anything
else passed. That shows a pipeline which resources were checked, not only which failed.

The characters XML 1.0 forbids, which a name or message may carry, are made visible escapes in
the serialized document, so a parser never rejects it, whichever field quoted them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from typing import NamedTuple

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


def _rule_suite(suites: ET.Element, check: Check, cases: list[Case]) -> tuple[int, int]:
    """Adds the rule's test suite; returns its failure and skip counts, which the totals need."""
    failures = sum(1 for c in cases if c.failure)
    skipped = sum(1 for c in cases if c.skip)
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"{check.id} {check.slug}",
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    for name, classname, failure, skip, place in cases:
        case = ET.SubElement(suite, "testcase", name=name, classname=f"{check.id}.{classname}")
        if place is not None and place.file:  # the attributes pytest writes, which GitLab links
            case.set("file", place.file)
            if place.line is not None:
                case.set("line", str(place.line))
        if failure:
            ET.SubElement(case, "failure", message=failure.split(" [", 1)[0], type=check.id).text = failure
        elif skip:
            ET.SubElement(case, "skipped", message=skip)
    return failures, skipped


def _coverage_suite(suites: ET.Element, coverage: list[CoverageGap]) -> None:
    """Scopes the scan could not read, as errors, so the pipeline does not show the scan as complete."""
    if not coverage:
        return
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="coverage",
        tests=str(len(coverage)),
        failures="0",
        errors=str(len(coverage)),
        skipped="0",
    )
    for gap in coverage:
        case = ET.SubElement(suite, "testcase", name=gap.scope, classname="coverage")
        ET.SubElement(case, "error", message=f"not scanned ({gap.status_label})").text = gap.reason


def render(result: ScanResult) -> bytes:
    suites = ET.Element("testsuites", name="azai")
    total = failures = skipped = 0
    grouped = _ByRule(result)
    for check in result.checks:
        cases = _rule_cases(grouped, check)
        suite_failures, suite_skipped = _rule_suite(suites, check, cases)
        total += len(cases)
        failures += suite_failures
        skipped += suite_skipped
    _coverage_suite(suites, result.coverage)
    total += len(result.coverage)
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    suites.set("errors", str(len(result.coverage)))
    suites.set("skipped", str(skipped))
    ET.indent(suites)
    body = xml_text(ET.tostring(suites, encoding="unicode")).encode("utf-8")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + body + b"\n"
