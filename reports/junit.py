"""JUnit XML for Azure DevOps (PublishTestResults) and GitLab test reports.

One test suite per rule and one test case per (rule, resource) evaluated: a finding is a
failure, an undetermined check or a suppressed finding is skipped with its reason, anything
else passed. That shows a pipeline which resources were checked, not only which failed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from scanner.engine.results import ScanResult


def render(result: ScanResult) -> bytes:
    suites = ET.Element("testsuites", name="azai")
    total = failures = skipped = 0
    for check in result.checks:
        cases: list[tuple[str, str, str | None, str | None]] = []  # (name, classname, failure, skip)
        for f in (f for f in result.findings if f.check.id == check.id):
            detail = f"{f.violation.message} [{f.violation.path}: {f.violation.observed!s} -> {f.violation.expected}]"
            if f.suppression is not None:
                cases.append((f.resource.name, f.resource.type, None, f"suppressed: {f.suppression.justification}"))
            else:
                cases.append((f.resource.name, f.resource.type, f"{f.severity.label}: {detail}", None))
        cases += [
            (u.resource.name, u.resource.type, None, u.reason) for u in result.undetermined if u.check.id == check.id
        ]
        cases += [(r.name, r.type, None, None) for c, r in result.passed if c.id == check.id]
        cases.sort(key=lambda c: (c[1], c[0]))
        suite_failures = sum(1 for c in cases if c[2])
        suite_skipped = sum(1 for c in cases if c[3])
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"{check.id} {check.slug}",
            tests=str(len(cases)),
            failures=str(suite_failures),
            errors="0",
            skipped=str(suite_skipped),
        )
        for name, classname, failure, skip in cases:
            case = ET.SubElement(suite, "testcase", name=name, classname=f"{check.id}.{classname}")
            if failure:
                ET.SubElement(case, "failure", message=failure.split(" [", 1)[0], type=check.id).text = failure
            elif skip:
                ET.SubElement(case, "skipped", message=skip)
        total += len(cases)
        failures += suite_failures
        skipped += suite_skipped
    if result.coverage:
        suite = ET.SubElement(
            suites,
            "testsuite",
            name="coverage",
            tests=str(len(result.coverage)),
            failures="0",
            errors=str(len(result.coverage)),
            skipped="0",
        )
        for gap in result.coverage:
            case = ET.SubElement(suite, "testcase", name=gap.scope, classname="coverage")
            ET.SubElement(case, "error", message=f"not scanned ({gap.status_label})").text = gap.reason
        total += len(result.coverage)
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    suites.set("errors", str(len(result.coverage)))
    suites.set("skipped", str(skipped))
    ET.indent(suites)
    body: bytes = ET.tostring(suites, encoding="unicode").encode("utf-8")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + body + b"\n"
