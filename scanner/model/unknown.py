"""`Unknown`: a value that exists but cannot be known before deploy.

A Terraform "known after apply" attribute, an ARM expression that needs the deployment
(``reference()``, ``utcNow()``), a sensitive value we refuse to read, or a property the live
API did not return, all become `Unknown`. It is deliberately *not* falsy and *not* comparable:
any truth test or comparison raises `UnknownValueError`, which the engine records as an
undetermined (rule, resource) pair. That way a check cannot silently pass on a value nobody
knows, even if its author forgot to think about it.
"""

from __future__ import annotations

from typing import Any, NoReturn


class UnknownValueError(Exception):
    """Raised when a decision depends on an `Unknown` value."""

    def __init__(self, value: Unknown, path: str | None = None) -> None:
        self.value = value
        self.path = path or value.path
        text = f"{self.path} is unknown ({value.reason})" if self.path else f"cannot decide: {value.reason}"
        super().__init__(text)


class Unknown:
    """A value that cannot be determined from the input.

    ``symbol`` names values that are unknown but provably equal to themselves, such as an
    ARM template's ``resourceGroup().location``: two resources both placed there share a
    region even though nobody knows which one.
    """

    __slots__ = ("may_be_null", "path", "reason", "symbol")

    def __init__(
        self, reason: str, symbol: str | None = None, path: str | None = None, may_be_null: bool = False
    ) -> None:
        self.reason = reason
        self.symbol = symbol
        self.path = path
        # Whether the value may turn out to be null (``if(c, x, null())``): a property set to
        # such a value is not known to be set.
        self.may_be_null = may_be_null

    def at(self, path: str) -> Unknown:
        """The same unknown, labelled with the property path it was read from."""
        return Unknown(self.reason, self.symbol, path, self.may_be_null)

    def _undecidable(self, *_: object) -> NoReturn:
        raise UnknownValueError(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Unknown) and self.symbol is not None and self.symbol == other.symbol:
            return True
        self._undecidable()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.symbol) if self.symbol is not None else id(self)

    __bool__ = _undecidable
    __lt__ = _undecidable
    __le__ = _undecidable
    __gt__ = _undecidable
    __ge__ = _undecidable
    __contains__ = _undecidable
    __iter__ = _undecidable
    __len__ = _undecidable

    def __repr__(self) -> str:
        return f"Unknown({self.reason!r})"

    def __str__(self) -> str:
        return self.symbol or f"(unknown: {self.reason})"


def known(value: Any) -> Any:
    """``value`` itself, or `UnknownValueError` when it is Unknown.

    Checks call this on a deciding property before using it, which makes the rule
    undetermined for that resource instead of deciding on a guess.
    """
    if isinstance(value, Unknown):
        raise UnknownValueError(value)
    return value
