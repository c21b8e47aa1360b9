"""The seam where PII policies will apply to what models read and answer.

Every model input of a reply interpreter (and its answer) passes through `PiiSeam`, so that the
application's and the workflow's PII policies — masking a value as a token for the model and
revealing it in the answer before validation — can be added in one place. Today it passes
everything through unchanged: agboss has no PII policies yet.
"""

from __future__ import annotations

__all__ = ["PiiSeam"]


class PiiSeam:
    """What a model reads goes out through `to_model`; what it answers comes back through
    `from_model`. The identity, until PII policies exist."""

    def to_model(self, text: str) -> str:
        """The text as the model may read it."""
        return text

    def from_model(self, value: object) -> object:
        """The model's answer with any tokens revealed, before it is validated."""
        return value
