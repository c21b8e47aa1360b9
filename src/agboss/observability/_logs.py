"""Lifecycle logs: one line through `logging` for each thing an operator follows an execution
by — started, paused, answered, completed, failed, cancelled, recovered, taken over — at INFO,
and each step at DEBUG.

Every line starts with its event (``run.paused: …``) and carries it and its ids as ``extra=``
fields (``event``, ``execution_id``, ``tenant_id``, …) for a structured handler. Never a pause
id (a channel pause's id is the right to answer it) nor a value of the execution (its input,
a decision's reason, a tool's arguments): PII policies mask what leaves the process, and a
log is outside it. Free when its level is off: nothing is formatted, no ``extra`` is built.
"""

from __future__ import annotations

import logging

__all__ = ["log_event"]

Field = str | int | float | bool | None


def log_event(
    logger: logging.Logger, level: int, event: str, message: str, /, **fields: Field
) -> None:
    """Logs ``event: message`` (``message`` a %-format of the ``fields`` by name) with
    ``event`` and the fields as ``extra``, if ``level`` is on for ``logger``."""
    if logger.isEnabledFor(level):
        logger.log(level, f"{event}: {message}", fields, extra={"event": event, **fields})
