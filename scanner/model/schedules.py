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

from typing import Any

from scanner.model.unknown import Unknown, UnknownValueError, known

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
    frequency = str(known(trigger.get("frequency", ""))).lower()
    interval = known(trigger.get("interval", 1))
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or interval < 1:
        raise UnknownValueError(
            Unknown(f"recurrence interval {interval!r} is not a positive number", path="properties.trigger.interval")
        )
    schedule = known(trigger.get("schedule")) or {}
    if not isinstance(schedule, dict):
        raise UnknownValueError(Unknown("the recurrence schedule is not an object", path="properties.trigger.schedule"))
    hours, minutes, week_days, month_days = (
        _count(schedule.get(key), key) for key in ("hours", "minutes", "weekDays", "monthDays")
    )
    if frequency == "minute":
        return 24 * 60 / interval
    if frequency == "hour":
        return 24 / interval * (minutes or 1)
    times_a_day = (hours or 1) * (minutes or 1)
    if frequency == "day":
        return times_a_day / interval
    if frequency == "week":
        return (week_days or 1) * times_a_day / interval / DAYS_PER_WEEK
    if frequency == "month":
        return (month_days or 1) * times_a_day / interval / DAYS_PER_MONTH
    raise UnknownValueError(
        Unknown(f"recurrence frequency {frequency or 'absent'!r} is not known", path="properties.trigger")
    )


def _count(value: Any, key: str) -> int:
    """How many entries a recurrence schedule list has (0 when absent)."""
    value = known(value)
    if value is None:
        return 0
    if not isinstance(value, list):
        raise UnknownValueError(Unknown(f"schedule.{key} is not a list", path=f"properties.trigger.schedule.{key}"))
    return len(set(map(str, value)))


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
