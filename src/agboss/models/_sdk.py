"""What the official SDKs' errors mean to agboss: one mapping for the `openai` and `anthropic`
SDKs, whose errors have the same shape (a status error with its response, a connection error,
a timeout), each provider passing its SDK's classes.

What a retry can fix (408, 409, 429 honouring ``Retry-After``, 5xx, a lost connection) is
marked retryable, with the wait the server asked for: the agent's `RetryPolicy` tries it again
(the SDK's own retries are off by default: one policy, one loop).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agboss.errors import ModelProviderError

__all__ = ["RETRYABLE_STATUS", "provider_error", "retry_after", "wire_name"]

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
"""The statuses a later attempt may fix (`RetryPolicy` retries them)."""


def wire_name(names: Mapping[str, str], model: str) -> str:
    """The name a server knows a model by: its own entry in a provider's ``model_names``, else
    the ``"*"`` entry, else the name the application uses."""
    return names.get(model, names.get("*", model))


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The seconds a response's ``Retry-After`` (or ``retry-after-ms``) asks to wait."""
    if not headers:
        return None
    milliseconds = headers.get("retry-after-ms")
    seconds = headers.get("retry-after")
    try:
        if milliseconds is not None:
            return float(milliseconds) / 1000
        if seconds is not None:
            return float(seconds)
    except ValueError:
        return None  # an HTTP date: the SDK honours it; the error only says it asked
    return None


def _hint(status: int) -> str:
    if status in (401, 403):
        return "check the provider's API key"
    if status == 404:
        return "check the model name and the provider's base URL"
    if status in RETRYABLE_STATUS or status >= 500:
        return (
            "the provider kept failing; try again later (app.retry), or give the agent a "
            "RetryPolicy with more attempts"
        )
    return "the provider refused the request; its message above says why"


def _said(body: object, fallback: str) -> str:
    """What the provider said, from an error body of the usual shapes (the SDKs hand on an
    ``{"error": …}`` body's inner value)."""
    if isinstance(body, str) and body:
        return body[:500]
    if isinstance(body, Mapping):
        inner: Any = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])[:500]
        if isinstance(inner, str):
            return inner[:500]
    return fallback[:500]


def provider_error(
    error: Exception,
    provider: str,
    *,
    status_error: type[Exception],
    connection_error: type[Exception],
) -> ModelProviderError:
    """An SDK's error as a `ModelProviderError` with its status, whether a later attempt may
    succeed, the wait the provider asked for, and a hint.

    Args:
        error: What the SDK raised.
        provider: Who failed, for the message (``the OpenAI API at http://…``).
        status_error: The SDK's class of an error answered with a status.
        connection_error: The SDK's class of a request that got no answer (timeouts too).
    """
    if isinstance(error, status_error):
        status = int(getattr(error, "status_code", 0))
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None)
        said = _said(getattr(error, "body", None), str(error))
        return ModelProviderError(
            f"{provider} answered {status}: {said}",
            status=status,
            retryable=status in RETRYABLE_STATUS or status >= 500,
            retry_after=retry_after(headers),
            hint=_hint(status),
        )
    if isinstance(error, connection_error):
        return ModelProviderError(
            f"{provider} could not be reached: {error}",
            retryable=True,
            hint="check the provider's base URL and that it is up",
        )
    return ModelProviderError(
        f"{provider} answered with something agboss cannot read: {error}",
        hint="check that the base URL points at the API the provider is configured for",
    )
