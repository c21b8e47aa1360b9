"""OpenTelemetry metrics of decisions (issue 56): how long a question waits for its decision,
how questions are decided and by whom, and how many wait — what a team alerts on.

agboss depends on the OpenTelemetry API only: the instruments record nothing until the
application installs an SDK and a meter provider (the API's proxy meter follows it). No
attribute names a pause, an execution or a person: a metric's attributes are few-valued.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

from agboss.enums import Decider, Outcome
from agboss.records import PauseRecord

__all__ = ["closed", "decided", "questions_waiting", "waiting_wanted"]

_METER = metrics.get_meter("agboss")


_DURATION = _METER.create_histogram(
    "agboss.decision.duration",
    unit="s",
    description="Time from a question asked to its decision, by role, tool, outcome and who",
)
_DECISIONS = _METER.create_counter(
    "agboss.decisions",
    unit="{decision}",
    description="Questions decided, by role, tool, outcome and who decided",
)

_waiting: list[int] = []
"""The count of waiting questions the last sweep read, once the gauge was collected."""
_wanted: list[bool] = [False]


def _observe_waiting(options: CallbackOptions) -> Iterable[Observation]:
    _wanted[0] = True  # collected: the sweep reads the count from now on
    return [Observation(_waiting[-1])] if _waiting else []


_METER.create_observable_gauge(
    "agboss.questions.waiting",
    callbacks=[_observe_waiting],
    unit="{question}",
    description="Questions waiting for a decision, across tenants, as the last sweep read them",
)


def decided(pause: PauseRecord, outcome: Outcome, by: Decider, at: datetime) -> None:
    """Counts a question decided at ``at``, and how long it waited (on the application's
    Clock)."""
    attributes = {
        "agboss.role": pause.channel,
        "agboss.tool": pause.ask.tool,
        "agboss.outcome": outcome.value,
        "agboss.decided_by": by.value,
    }
    _DECISIONS.add(1, attributes)
    _DURATION.record(max((at - pause.asked_at).total_seconds(), 0.0), attributes)


def waiting_wanted() -> bool:
    """Whether a meter provider collects the waiting questions' gauge (else nothing reads
    the count for it)."""
    return _wanted[0]


def questions_waiting(count: int) -> None:
    """The count of waiting questions the sweep read, for the gauge's next collection."""
    _waiting[:] = [count]


def closed(pauses: Iterable[PauseRecord], outcome: Outcome, by: Decider, at: datetime) -> None:
    """Counts questions closed unanswered (withdrawn or cancelled) at ``at``."""
    for pause in pauses:
        decided(pause, outcome, by, at)
