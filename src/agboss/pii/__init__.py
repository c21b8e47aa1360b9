"""PII policies: what models see, what pending / records / channels keep, what is refused.

See ``docs/pii.md``. Rules are declared on ``@application(pii=[...])`` and
``@workflow(pii=[...])``; DTO fields are marked with ``Annotated[str, Pii(kind=...)]``.
"""

from agboss.pii._outside import PiiOutside
from agboss.pii._policy import PiiPolicy, PiiSeam, TreeTokens, UnknownTokenError
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
    "PiiOutside",
    "PiiPolicy",
    "PiiRule",
    "PiiSeam",
    "TreeTokens",
    "UnknownTokenError",
    "block_with_refusal",
    "mask",
    "replace_with_token",
]
