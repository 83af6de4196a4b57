"""The check API: what a rule author writes against.

A rule is one plain function in one file, decorated with its metadata::

    @rule(id="AZAI-101", slug="anonymous-endpoint", ...)
    def anonymous_endpoint(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
        \"\"\"Documentation, rendered into docs/rules/.\"\"\"

It receives one resource of the types it declares and yields `Violation`s for failures only;
the engine derives passes. It does no I/O: relationships, options and metrics arrive through
`CheckContext`. Reading an `Unknown` in a deciding property raises, and the engine records
the pair as undetermined instead of passing it.

A rule also says what it reads beyond its own resource types (``reads=``): the other types it
looks up through the inventory (``T.STORAGE_ACCOUNT``), and the per-resource live reads it
needs (``LiveRead.DIAGNOSTIC_SETTINGS``, ``LiveRead.ENVIRONMENT_VERSIONS``,
``LiveRead.METRICS``). A live scan collects what its selected rules declare, and no more.
"""

from __future__ import annotations

import datetime as dt
import enum
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.model.needs import LiveRead
from scanner.model.pricing import Cost, PriceBook
from scanner.model.resources import Inventory, Resource
from scanner.model.retirements import RetirementTable
from scanner.model.utilization import UtilizationSource
from scanner.model.vmsizes import SizeCatalog


class Severity(enum.IntEnum):
    """Finding severity; ordered so that gates can compare."""

    LOW = 1
    MEDIUM = 2
    HIGH = 3
    CRITICAL = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            choices = ", ".join(s.label for s in cls)
            raise ValueError(f"unknown severity {text!r} (choose from {choices})") from None


class Pillar(enum.StrEnum):
    """The Azure Well-Architected Framework pillars."""

    SECURITY = "Security"
    COST = "Cost Optimization"
    RELIABILITY = "Reliability"
    OPERATIONS = "Operational Excellence"
    PERFORMANCE = "Performance Efficiency"

    def named(self, text: str) -> bool:
        """Whether ``text`` names this pillar: its full name or its first word, in any case, so
        that ``--pillar cost`` and ``--select "Cost Optimization"`` both work."""
        wanted = " ".join(text.split()).lower()
        return wanted in (self.value.lower(), self.value.split()[0].lower())


@dataclass(frozen=True, slots=True)
class Remediation:
    """How to fix a failure in each of the forms users write: a sentence each and, for the rule
    pages, a short fixed example of each (HCL, Bicep, a shell command), shown as fenced code so a
    reader can copy the attribute names rather than retype them from prose. ``guide`` is the
    vendor's page that walks through the fix. Examples and guide are optional: a plugin rule
    may give prose only."""

    terraform: str
    bicep: str
    cli: str
    terraform_code: str = ""
    bicep_code: str = ""
    cli_code: str = ""
    guide: str = ""


@dataclass(frozen=True, slots=True)
class Principle:
    """The Well-Architected statement a rule enforces, and where it is written."""

    text: str
    source: str


@dataclass(frozen=True, slots=True)
class PeerRule:
    """A rule of another tool that an azai rule covers, so that a team can map the policies it
    already runs to azai.

    ``id`` is what that tool itself reports: a Checkov check id, a PSRule rule name, an Azure
    Policy definition GUID, an APRL recommendation id. ``note`` is what a team replacing the
    peer needs to know, checked against the peer's own rule text (and its tests, where it
    publishes them): the difference in substance (what each makes of an absent value, a
    default, a tier or SKU, the exact property) and in scope (which resources each judges),
    citing the peer's file and commit where it decides a difference, or that the two agree on
    both. Empty renders as a bare "agrees", which says nothing about scope, so built-in rules
    always write one (tests/test_peer_notes.py).
    """

    tool: str
    id: str
    title: str = ""
    note: str = ""

    def __str__(self) -> str:
        return f"{self.tool} {self.id}" + (f" ({self.title})" if self.title else "")


@dataclass(frozen=True, slots=True)
class Violation:
    """One failure of one rule on one resource.

    ``path`` is the ARM property path that decides it; reports point at that property's line
    where the source has it, and the fingerprint includes it.
    """

    message: str
    path: str
    observed: Any
    expected: str
    severity: Severity | None = None
    cost: Cost | None = None


@dataclass(frozen=True)
class CheckContext:
    """Everything a check may consult besides the resource itself."""

    inventory: Inventory
    options: Mapping[str, Any] = field(default_factory=dict)
    sizes: SizeCatalog = field(default_factory=SizeCatalog)
    utilization: UtilizationSource | None = None
    # The run's tables come from `evaluate`. A context built without them reads no file (drift
    # builds one per compared pair and rule, and its rules price nothing): no price is known and
    # no retirement date, so a cost is "unknown", never $0.
    prices: PriceBook = field(default_factory=PriceBook.empty)
    # Drift rules compare a resource with its counterpart: the same resource in the base
    # snapshot, in the IaC that declares it, or before Terraform's refresh.
    drift: DriftPair | None = None
    # The run's date (``RunRequest.today``): what rules that judge dates compare with. Rules
    # never read the clock themselves, so a test or a reproducible report can pin it.
    today: dt.date = field(default_factory=dt.date.today)
    # When model versions retire (the bundled table, or one ``azai models refresh`` wrote).
    retirements: RetirementTable = field(default_factory=lambda: RetirementTable([], "no model retirement table"))


@dataclass(frozen=True)
class DriftPair:
    """What a drift rule compares. ``mode`` is ``snapshot`` (scan to scan), ``iac`` (declared
    against live) or ``terraform`` (Terraform's own refresh); ``before`` is None for a resource
    that exists only now (unmanaged), ``after`` None for one that is gone (missing)."""

    mode: str
    before: Resource | None
    after: Resource | None


CheckFunction = Callable[[Resource, CheckContext], Iterable[Violation]]

_ID = re.compile(r"^[A-Z][A-Z0-9]*-\d{3}$")
_SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Check:
    """A rule: its metadata and the function that evaluates it."""

    id: str
    slug: str
    title: str
    pillar: Pillar
    severity: Severity
    resource_types: tuple[str, ...]
    principle: Principle
    remediation: Remediation
    help_uri: str
    evaluate: CheckFunction = field(repr=False)
    doc: str = field(repr=False)
    options: Mapping[str, Any] = field(default_factory=dict)
    # Options whose value is one of a few words: the only values the command line and the
    # config file accept for them, so that a typo is an input error, not a rule turned off.
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    sources: frozenset[str] = frozenset({"terraform", "arm", "whatif", "live"})
    module: str = ""
    # What the rule reads besides its own types: ARM types it looks up through the inventory,
    # and `LiveRead`s (per-resource live reads, made only for a rule that declares them).
    reads: tuple[str, ...] = ()
    # False when the rule did not say (``reads=`` omitted): it may look up any type, so a live
    # scan collects every type it knows for it (but makes no `LiveRead`, which must be declared).
    reads_declared: bool = False
    # For a type of which the rule decides only some kinds, those kinds (lower-case): its
    # `LiveRead`s are made only for resources of them. Evaluation is unchanged.
    kinds: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # Rules of other tools this rule covers (Checkov, PSRule, Azure Policy, APRL, ...).
    peers: tuple[PeerRule, ...] = ()
    # True when a finding's cost is what the resource costs each month for as long as it stays
    # as declared (always-on nodes): a plan that creates the resource adds that much a month.
    recurring_cost: bool = False

    @property
    def summary(self) -> str:
        """The first paragraph of the documentation."""
        return self.doc.strip().split("\n\n", 1)[0].replace("\n", " ")


def rule(
    *,
    id: str,
    slug: str,
    title: str,
    pillar: Pillar,
    severity: Severity,
    resource_types: Iterable[str],
    principle: Principle,
    remediation: Remediation,
    help_uri: str,
    options: Mapping[str, Any] | None = None,
    choices: Mapping[str, Iterable[str]] | None = None,
    sources: Iterable[str] | None = None,
    peers: Iterable[PeerRule] = (),
    reads: Iterable[str] | None = None,
    kinds: Mapping[str, Iterable[str]] | None = None,
    recurring_cost: bool = False,
) -> Callable[[CheckFunction], Check]:
    """Declare a rule. The decorated function's docstring is the rule's documentation.

    ``reads`` names what the rule reads besides its resource types: ARM types it looks up
    (``T.PRIVATE_ENDPOINT``) and `LiveRead`s; ``reads=()`` says it reads nothing else. Omitted,
    the rule is taken to look up any type. ``kinds`` narrows the rule's `LiveRead`s to some kinds
    of a type (``{T.COGNITIVE_ACCOUNT: T.OPENAI_KINDS}``). ``recurring_cost`` says that a finding's
    cost recurs each month the resource exists as declared, so the cost summary counts it as
    what a plan creating the resource adds.
    """
    if not _ID.match(id):
        raise ValueError(f"rule id {id!r} is not of the form PREFIX-NNN")
    if not _SLUG.match(slug):
        raise ValueError(f"rule slug {slug!r} is not kebab-case")

    def wrap(function: CheckFunction) -> Check:
        doc = function.__doc__ or ""
        if not doc.strip():
            raise ValueError(f"rule {id} has no docstring; the docstring is its documentation")
        return Check(
            id=id,
            slug=slug,
            title=title,
            pillar=pillar,
            severity=severity,
            resource_types=tuple(resource_types),
            principle=principle,
            remediation=remediation,
            help_uri=help_uri,
            evaluate=function,
            doc=inspect.cleandoc(doc),
            options=dict(options or {}),
            choices={key: tuple(values) for key, values in (choices or {}).items()},
            sources=frozenset(sources) if sources is not None else Check.sources,
            module=function.__module__,
            peers=tuple(peers),
            reads=_reads(reads or ()),
            reads_declared=reads is not None,
            kinds={t.lower(): frozenset(k.lower() for k in values) for t, values in (kinds or {}).items()},
            recurring_cost=recurring_cost,
        )

    return wrap


def _reads(declared: Iterable[str]) -> tuple[str, ...]:
    """Declared reads, with each one that names a `LiveRead` (also by its ARM type) as that member."""
    return tuple(LiveRead.named(item) or item for item in declared)
