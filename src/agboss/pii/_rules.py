"""PII rules: what is sensitive, and what to do with it.

**What**: a DTO field marked ``Annotated[str, Pii(kind=...)]``, and — for the kinds agboss can
detect — the same kind found in free text (`PiiKind`). **What to do**: `replace_with_token`
(the model reads a token, its answer gets the real value back), `mask` (the model and
everything outside read ``****1234``) or `block_with_refusal` (a model call that would read one
fails with `PiiRefusedError`). Whatever the action, a sensitive value is masked in everything
that leaves the process: pending asks, events, records, channels' asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agboss.errors import ConfigurationError

__all__ = [
    "Pii",
    "PiiAction",
    "PiiKind",
    "PiiRule",
    "block_with_refusal",
    "mask",
    "replace_with_token",
]


class PiiKind(StrEnum):
    """Kinds of personal data agboss detects in free text (fields may name any kind)."""

    CARD_NUMBER = "card-number"
    """A payment card number: 13 to 19 digits (spaces or dashes between) with a valid Luhn
    check digit (python-stdnum)."""
    IBAN = "iban"
    """An IBAN with a valid country format and check digits (python-stdnum)."""
    EMAIL = "email"
    """An e-mail address."""
    PHONE = "phone"
    """A phone number in international form, ``+`` and the country code (phonenumbers)."""


@dataclass(frozen=True, slots=True)
class Pii:
    """Marks a DTO field as personal data: ``iban: Annotated[str, Pii(kind=PiiKind.IBAN)]``.

    Attributes:
        kind: A `PiiKind`, or a name of the application's own (``"customer-name"``).
    """

    kind: str

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind.strip():
            raise ConfigurationError(
                f"Pii(kind={self.kind!r}) needs a kind",
                hint="pass a PiiKind, or a name such as 'customer-name'",
            )


class PiiAction(StrEnum):
    """What a rule does with a sensitive value on its way to a model."""

    TOKEN = "replace-with-token"
    MASK = "mask"
    BLOCK = "block-with-refusal"


def replace_with_token() -> PiiAction:
    """The model reads a token (``<IBAN_1>``); a token in its answer is the real value again,
    before the answer is validated — tools always get real values. The tree's tokens are stored
    with it, so a token survives a pause of days and a restart."""
    return PiiAction.TOKEN


def mask() -> PiiAction:
    """The model reads the value masked (``****3000``), as everything outside does."""
    return PiiAction.MASK


def block_with_refusal() -> PiiAction:
    """A model call that would read the value is refused: `PiiRefusedError` (``pii.refused``)
    fails the step, and the model never sees it."""
    return PiiAction.BLOCK


@dataclass(frozen=True, slots=True)
class PiiRule:
    """One rule of a policy: ``PiiRule(PiiKind.IBAN, replace_with_token())``.

    Declared on ``@application(pii=[...])`` (every tree) and ``@workflow(pii=[...])`` (added to
    the application's for that workflow's executions). A rule covers the fields marked with its
    kind and, for a `PiiKind` agboss detects, the same kind in free text (``detect=False``:
    marked fields only).

    Attributes:
        kind: The kind it covers.
        action: `replace_with_token()`, `mask()` or `block_with_refusal()`.
        detect: Whether free text is searched for the kind too.
    """

    kind: str
    action: PiiAction
    detect: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind.strip():
            raise ConfigurationError(
                f"PiiRule(kind={self.kind!r}) needs a kind", hint="pass a PiiKind or a name"
            )
        if not isinstance(self.action, PiiAction):
            raise ConfigurationError(
                f"PiiRule({self.kind}, {self.action!r}) needs an action",
                hint="pass replace_with_token(), mask() or block_with_refusal()",
            )
