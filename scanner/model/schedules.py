"""How often an Azure Machine Learning schedule fires, from its trigger as ARM holds it.

A schedule (``Microsoft.MachineLearningServices/workspaces/schedules``) has a
``properties.trigger`` of ``triggerType`` ``Recurrence`` (``frequency`` Minute, Hour, Day, Week
or Month, every ``interval`` of them, optionally at ``schedule.hours``/``minutes`` on
``weekDays``/``monthDays``) or ``Cron`` (a five-field NCronTab ``expression``: minute, hour,
day of month, month, day of week; the trigger's ``timeZone`` applies, which does not change how
often it fires). Rules need one figure from either: the average number of runs a day,
so that a schedule firing every 30 minutes and one firing at 02:00 compare on one scale.

A trigger this module cannot read (an unresolved template expression, a malformed or unknown
form) is an `Unknown` with the reason, so the rule is undetermined rather than guessing.
"""

from __future__ import annotations

import math
from typing import Any

from scanner.model.unknown import Unknown, UnknownValueError, known

TRIGGER = "properties.trigger"
DAYS_PER_WEEK = 7.0
DAYS_PER_MONTH = 365.25 / 12
# Cron fields: (name, lowest, highest, three-letter names).
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_CRON_FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 6, _DAYS),
)


def runs_per_day(trigger: Any) -> float:
    """The average number of times a day ``trigger`` fires; raises through `known` when it
    cannot be read."""
    trigger = known(trigger)
    if not isinstance(trigger, dict):
        raise UnknownValueError(Unknown(f"the trigger is {trigger!r}, not an object", path="properties.trigger"))
    kind = str(known(trigger.get("triggerType", ""))).lower()
    if kind == "cron":
        return _cron_runs_per_day(known(trigger.get("expression")))
    if kind == "recurrence":
        return _recurrence_runs_per_day(trigger)
    raise UnknownValueError(
        Unknown(f"trigger type {kind or 'absent'!r} is neither Recurrence nor Cron", path="properties.trigger")
    )


def _recurrence_runs_per_day(trigger: dict[str, Any]) -> float:
    """Every ``interval`` of ``frequency``: a Minute or Hour recurrence on its own, at each listed
    minute for Hour; a Day, Week or Month one at each listed hour x minute. Listed week days thin
    Minute, Hour and Day recurrences out and are the days of a Week one; listed month days are
    the days of a Month one. A Month recurrence on week days is not read."""
    frequency = str(known(trigger.get("frequency", ""))).lower()
    interval = _recurrence_interval(trigger)
    hours, minutes, week_days, month_days = _schedule_counts(trigger)
    days_a_week = (week_days or DAYS_PER_WEEK) / DAYS_PER_WEEK
    times_a_day = (hours or 1) * (minutes or 1)
    if frequency == "minute":
        return 24 * 60 / interval * days_a_week
    if frequency == "hour":
        return 24 / interval * (minutes or 1) * days_a_week
    if frequency == "day":
        return times_a_day / interval * days_a_week
    if frequency == "week":
        return (week_days or 1) * times_a_day / interval / DAYS_PER_WEEK
    if frequency == "month" and not week_days:
        return (month_days or 1) * times_a_day / interval / DAYS_PER_MONTH
    raise UnknownValueError(
        Unknown(f"a {frequency or 'frequency-less'} recurrence of this form is not read", path=TRIGGER)
    )


def _recurrence_interval(trigger: dict[str, Any]) -> float:
    """The recurrence's ``interval`` (1 when absent). Every run count divides by it, so one that
    is not a finite number of at least 1 (a boolean, a string, zero) is not read rather than
    guessed."""
    given = known(trigger.get("interval", 1))
    interval = float(given) if isinstance(given, (int, float)) and not isinstance(given, bool) else math.nan
    if not math.isfinite(interval) or interval < 1:
        raise UnknownValueError(Unknown(f"recurrence interval {given!r} is not a positive number", path=TRIGGER))
    return interval


def _schedule_counts(trigger: dict[str, Any]) -> tuple[int, int, int, int]:
    """How many hours, minutes, week days and month days the recurrence's ``schedule`` lists, in
    that order (0 for an absent list or schedule): the frequencies multiply and thin their runs
    by these counts, not by the values themselves."""
    schedule = known(trigger.get("schedule")) or {}
    if not isinstance(schedule, dict):
        raise UnknownValueError(Unknown("the recurrence schedule is not an object", path=TRIGGER))
    hours, minutes, week_days, month_days = (_count(schedule.get(key), key) for key in _SCHEDULE_LISTS)
    return hours, minutes, week_days, month_days


# The recurrence schedule's lists: which values each may hold.
_WEEK_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SCHEDULE_LISTS = {
    "hours": range(24),
    "minutes": range(60),
    "weekDays": _WEEK_DAYS,
    "monthDays": range(1, 32),
}


def _count(value: Any, key: str) -> int:
    """How many distinct values a recurrence schedule list holds (0 when absent); a list with a
    value it cannot hold (hour 24, "Someday") is not read."""
    value = known(value)
    if value is None:
        return 0
    allowed = _SCHEDULE_LISTS[key]
    entries = [known(v) for v in value] if isinstance(value, list) else None
    normal = [e.lower() if isinstance(e, str) and key == "weekDays" else e for e in entries or []]
    if entries is None or any(isinstance(e, bool) or e not in allowed for e in normal):
        raise UnknownValueError(Unknown(f"schedule.{key} is not a list of {key}", path=f"{TRIGGER}.schedule.{key}"))
    return len(set(normal))


def _cron_runs_per_day(expression: Any) -> float:
    """Azure Machine Learning reads only the minute, hour and day-of-week fields: "DAYS values
    aren't supported, and are always treated as *", and the same for MONTHS (how-to-schedule-
    pipeline-job), so those two fields are checked for form but do not thin the runs out."""
    fields = expression.split() if isinstance(expression, str) else []
    if len(fields) != len(_CRON_FIELDS):
        raise UnknownValueError(
            Unknown(f"cron expression {expression!r} does not have five fields", path="properties.trigger")
        )
    minutes, hours, _, _, week_days = (
        _cron_values(text, *spec, expression) for text, spec in zip(fields, _CRON_FIELDS, strict=True)
    )
    return minutes * hours * week_days / DAYS_PER_WEEK


def _cron_values(text: str, name: str, low: int, high: int, aliases: tuple[str, ...], expression: str) -> int:
    """How many values one cron field selects: ``*``, ``n``, ``a-b``, ``*/s``, ``a-b/s``, lists of
    them, and three-letter names for months and days of the week."""
    chosen: set[int] = set()
    for part in text.upper().split(","):
        span, _, step_text = part.partition("/")
        first, _, last = span.partition("-")
        try:
            step = int(step_text) if step_text else 1
            start, end = (low, high) if span in ("*", "?") else (_value(first, aliases), _value(last or first, aliases))
        except ValueError:
            start = end = step = -1
        if step < 1 or not low <= start <= end <= high + (1 if name == "day of week" else 0):
            raise UnknownValueError(
                Unknown(f"cron {name} {part!r} in {expression!r} is not understood", path="properties.trigger")
            )
        if step_text and not last and span not in ("*", "?"):
            end = high  # "5/15": from 5 to the end, every 15
        chosen.update(v % 7 if name == "day of week" else v for v in range(start, end + 1, step))
    return len(chosen)


def _value(text: str, aliases: tuple[str, ...]) -> int:
    return aliases.index(text) + (1 if len(aliases) == 12 else 0) if text in aliases else int(text)
