"""What a live scan must read for a set of rules, in terms a source understands.

Rules declare what they read (`reads=` in their `@rule`); the engine turns the selected rules'
declarations into a `LiveNeeds`, and the live collector reads that and no more. The value
lives in the model so that the collector never imports the engine or a rule.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable
from dataclasses import dataclass

from scanner.model import azure_types as T


class LiveRead(enum.StrEnum):
    """A read a live scan makes per resource, beyond Resource Graph's rows and the child lists,
    and only for a rule that declares it: each costs requests that grow with the estate.

    A member's value is the ARM type of what the read returns, so that a rule declaring
    ``reads=(T.DIAGNOSTIC_SETTING,)`` means the same as ``reads=(LiveRead.DIAGNOSTIC_SETTINGS,)``.
    """

    # The diagnostic settings (extension resources) of each resource of the rule's types.
    DIAGNOSTIC_SETTINGS = T.DIAGNOSTIC_SETTING
    # The environment versions that the online deployments among the rule's types name by id.
    ENVIRONMENT_VERSIONS = T.ENVIRONMENT_VERSION
    # Azure Monitor utilization of the GPU resources among the rule's types.
    METRICS = "Microsoft.Insights/metrics"
    # The models list of the account of each model deployment among the rule's types
    # (``GET {account}/models``: each model version's lifecycle status and retirement date),
    # read once per account and kept on each deployment as the entries for its model.
    ACCOUNT_MODELS = "Microsoft.CognitiveServices/accounts/models"
    # The jobs of each workspace among the rule's types (``GET {workspace}/jobs``), of which those
    # created in the lookback window are kept on the workspace, cut to what the rules read.
    ML_JOBS = T.ML_JOB

    @classmethod
    def named(cls, text: str) -> LiveRead | None:
        """The read that ``text`` names (a member or its ARM type, in any case), else None."""
        return next((read for read in cls if read.value.lower() == text.lower()), None)


@dataclass(frozen=True, slots=True)
class ReadSubject:
    """The resources a `LiveRead` is made for: one type, and optionally only some kinds of it."""

    read: LiveRead
    type: str  # lower-case ARM type
    kinds: frozenset[str] = frozenset()  # lower-case ``kind`` values; empty means every kind

    def covers(self, resource_type: str, kind: object) -> bool:
        if resource_type.lower() != self.type:
            return False
        return not self.kinds or (isinstance(kind, str) and kind.lower() in self.kinds)


@dataclass(frozen=True, slots=True)
class LiveNeeds:
    """What the selected rules read from a live estate.

    ``types`` are the lower-case ARM types the rules evaluate or look up; how to reach them
    (which parents to discover so that their children can be listed) is the collector's
    business. ``every_type`` is set when a rule does not declare what it looks up: the
    collector then collects every type it knows. ``subjects`` say which `LiveRead` to make for
    which resources; nothing is read per resource without one.
    """

    types: frozenset[str] = frozenset()
    subjects: frozenset[ReadSubject] = frozenset()
    every_type: bool = False

    @classmethod
    def of(cls, types: Iterable[str], subjects: Iterable[ReadSubject] = (), every_type: bool = False) -> LiveNeeds:
        return cls(frozenset(t.lower() for t in types), frozenset(subjects), every_type)

    @property
    def reads(self) -> frozenset[LiveRead]:
        return frozenset(subject.read for subject in self.subjects)

    def wants(self, read: LiveRead, resource_type: str, kind: object = None) -> bool:
        """Whether ``read`` is to be made for a resource of this type and kind. A live scan asks
        it several times for every resource; the answers are kept by type and kind."""
        return _wants(self, read, resource_type.lower(), kind.lower() if isinstance(kind, str) else None)


@functools.lru_cache(maxsize=4096, typed=True)  # typed: a LiveRead is a str too
def _wants(needs: LiveNeeds, read: LiveRead, resource_type: str, kind: str | None) -> bool:
    return any(s.read is read and s.covers(resource_type, kind) for s in needs.subjects)
