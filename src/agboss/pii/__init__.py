"""PII policies: what models see, what pending / records / channels keep, what is refused.

See ``docs/pii.md``. Rules are declared on ``@application(pii=[...])`` and
``@workflow(pii=[...])``; DTO fields are marked with ``Annotated[str, Pii(kind=...)]``.
"""

from agboss.pii._rules import (
    Pii,
    PiiAction,
    PiiKind,
    PiiRule,
    block_with_refusal,
    mask,
    replace_with_token,
)

__all__ = [
    "Pii",
    "PiiAction",
    "PiiKind",
    "PiiRule",
    "block_with_refusal",
    "mask",
    "replace_with_token",
]
