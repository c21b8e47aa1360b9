"""Checking a decision before it is recorded: the DTO, and ``override_arguments``."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ValidationError

from agboss.dto import ToolCallApprovalDecisionDto, validation_errors
from agboss.errors import DtoValidationError

__all__ = ["validate_decision"]


def _non_finite(value: object, where: str) -> str | None:
    """The path of the first NaN or infinity in a JSON-like value, if any."""
    if isinstance(value, float):
        return None if math.isfinite(value) else where
    if isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite(item, f"{where}.{key}")
            if found is not None:
                return found
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _non_finite(item, f"{where}[{index}]")
            if found is not None:
                return found
    return None


def validate_decision(
    decision: object, tool: str, tool_input: type[BaseModel]
) -> ToolCallApprovalDecisionDto:
    """A decision as a valid `ToolCallApprovalDecisionDto` for a call of ``tool``.

    Args:
        decision: A `ToolCallApprovalDecisionDto` or a mapping of its fields (a webhook's body).
        tool: The tool whose call it decides.
        tool_input: The tool's input DTO, which ``override_arguments`` must be.

    Raises:
        DtoValidationError: It is not a decision, or ``override_arguments`` comes without
            ``approved=True`` or is not a valid input of the tool.
    """
    raw: Any = decision.model_dump() if isinstance(decision, BaseModel) else decision
    try:
        valid = ToolCallApprovalDecisionDto.model_validate(raw)
    except ValidationError as error:
        raise DtoValidationError(
            "the decision is not a valid ToolCallApprovalDecisionDto",
            errors=validation_errors(error),
            hint="pass approved (a bool), and optionally reason and override_arguments",
        ) from error
    if valid.override_arguments is None:
        return valid
    where = _non_finite(valid.override_arguments, "override_arguments")
    if where is not None:
        raise DtoValidationError(
            f"{where} is not a finite number (NaN and infinity cannot be stored or replayed)",
            hint="pass a finite number, or leave the field out to keep the model's argument",
        )
    if not valid.approved:
        raise DtoValidationError(
            "override_arguments is only allowed with approved=True",
            hint="drop override_arguments from a rejection, or approve the call",
        )
    try:
        tool_input.model_validate(valid.override_arguments)
    except ValidationError as error:
        raise DtoValidationError(
            f"override_arguments is not a valid input of {tool} ({tool_input.__name__})",
            errors=validation_errors(error),
            hint=f"give every field {tool_input.__name__} requires, with valid values",
        ) from error
    return valid
