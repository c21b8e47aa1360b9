"""The DTOs of an MCP tool's calls: its arguments, checked against the server's input schema,
and what the tool answered.

An MCP tool has no Python class: its input is the JSON Schema its server lists. Each tool gets
a subclass of `McpArguments` that carries that schema, so a call's arguments (and a decision's
``override_arguments``) are validated where any tool's are, with the server's own rules, and a
channel role that approves MCP calls names `McpArguments` as what it approves.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

__all__ = ["McpArguments", "McpSchemaError", "McpToolOutput", "arguments_model"]


class McpSchemaError(ValueError):
    """A server listed an input schema that is not valid JSON Schema."""


class McpArguments(BaseModel):
    """The arguments of a call of an MCP tool: the JSON object its input schema accepts.

    A channel role that approves MCP calls declares ``approves=McpArguments``; its ``send``
    reads the values with `McpArguments.values`.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    """The server's input schema of the tool (a subclass per tool sets it)."""
    _validator: ClassVar[Any] = None

    @property
    def values(self) -> dict[str, Any]:
        """The arguments, as JSON values."""
        return dict(self.model_extra or {})

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """Validates against the server's input schema: a `ValidationError` naming each
        field the schema refuses, as any DTO's would."""
        _check(cls, obj)
        return super().model_validate(obj, *args, **kwargs)

    @classmethod
    def model_validate_json(
        cls, json_data: str | bytes | bytearray, *args: Any, **kwargs: Any
    ) -> Self:
        """Reads and validates JSON arguments (see `model_validate`)."""
        try:
            obj = json.loads(json_data)
        except ValueError:
            return super().model_validate_json(json_data, *args, **kwargs)  # pydantic says why
        return cls.model_validate(obj, *args, **kwargs)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The server's input schema, as the model is shown it."""
        return cls.input_schema


def _check(cls: type[McpArguments], obj: Any) -> None:
    if not isinstance(obj, dict):
        problems: list[InitErrorDetails] = [
            _problem((), "the arguments must be a JSON object", obj)
        ]
    elif cls._validator is None:
        return
    else:
        found = sorted(cls._validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
        problems = [
            _problem(tuple(error.absolute_path), error.message, error.instance)
            for error in found[:10]
        ]
    if problems:
        raise ValidationError.from_exception_data(cls.__name__, problems)


def _problem(where: tuple[str | int, ...], message: str, value: Any) -> InitErrorDetails:
    return {
        "type": PydanticCustomError("json_schema", "{message}", {"message": message}),
        "loc": where,
        "input": value,
    }


def arguments_model(
    label: str, schema: dict[str, Any], *, base: type[McpArguments] | None = None
) -> type[McpArguments]:
    """The `McpArguments` subclass of one tool, validating against its input schema.

    Args:
        label: The class's name (the server's and the tool's names).
        schema: The tool's input schema as the server listed it.
        base: The class it derives from; `McpArguments` by default.

    Raises:
        McpSchemaError: The schema is not valid JSON Schema.
    """
    import jsonschema  # the mcp extra brings it; only an application with MCP servers needs it

    checker = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        checker.check_schema(schema)
    except jsonschema.SchemaError as error:
        raise McpSchemaError(error.message) from error
    return type(
        label,
        (base or McpArguments,),
        {
            "__module__": __name__,
            "input_schema": schema,
            "_validator": checker(schema, format_checker=checker.FORMAT_CHECKER),
        },
    )


class McpToolOutput(BaseModel):
    """What an MCP tool answered, as the agent's model reads it.

    Attributes:
        text: Its content as text (a non-text part is named by its kind).
        structured_content: Its structured result, when the server gives one.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    structured_content: dict[str, Any] | None = Field(default=None)
