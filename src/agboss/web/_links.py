"""Signed answer links: a channel that mails a question sends one link per answer, and the
route it opens checks that the server signed it and that it has not expired.

A link is ``<payload>.<signature>``, both URL-safe base64: the payload is the pause's reference
(never its id: a link is read in URLs, mail and logs), its tenant, the answer and the expiry;
the signature is HMAC-SHA256 over it with the server's secret. The route maps the reference back
(`App.pause_id_of`) once the signature is checked. The pause itself makes the link single-use:
a second answer is `NotPausedError`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from agboss.clock import Clock, SystemClock
from agboss.errors import AgbossError, ConfigurationError
from agboss.records import is_pause_ref

__all__ = ["AnswerLink", "AnswerLinkError", "AnswerLinks"]

_MIN_SECRET = 32


class AnswerLinkError(AgbossError):
    """The link was not signed with this server's secret, is damaged, or has expired."""

    code = "web.bad-link"
    default_message = "the link is not valid: it was changed, cut off, or not made here"
    default_hint = "open the link exactly as it was sent, or ask for the question again"


@dataclass(frozen=True, slots=True)
class AnswerLink:
    """What a valid link answers.

    Attributes:
        pause_ref: The reference of the pause it answers (`agboss.pause_ref`).
        tenant_id: The pause's tenant.
        approved: The answer it carries.
        expires_at: When it stops being valid.
    """

    pause_ref: str
    tenant_id: str
    approved: bool
    expires_at: datetime


def _encoded(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _decoded(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class AnswerLinks:
    """Signs and checks answer links with one secret.

    Args:
        secret: At least 32 bytes (e.g. ``secrets.token_urlsafe(32)``), kept on the server.
        clock: The clock expiry is read on; the system clock by default.

    Raises:
        ConfigurationError: The secret is shorter than 32 bytes.
    """

    def __init__(self, secret: str | bytes, *, clock: Clock | None = None) -> None:
        key = secret.encode() if isinstance(secret, str) else secret
        if not isinstance(key, bytes) or len(key) < _MIN_SECRET:
            raise ConfigurationError(
                f"an answer link's secret must be at least {_MIN_SECRET} bytes",
                hint="make one with secrets.token_urlsafe(32) and keep it in the server's config",
            )
        self._key = key
        self._clock = clock or SystemClock()

    def _signature(self, payload: str) -> str:
        return _encoded(hmac.new(self._key, payload.encode("ascii"), hashlib.sha256).digest())

    def sign(self, pause_ref: str, *, tenant_id: str, approved: bool, valid_for: timedelta) -> str:
        """A link's token that answers the pause ``pause_ref`` names with ``approved`` until
        ``valid_for`` from now: a right to give that one answer, to send only to who may.

        Raises:
            ConfigurationError: ``pause_ref`` is not a reference (``ask.pause_ref``; the id
                itself must not travel in a link), or ``valid_for`` is not positive.
        """
        if not is_pause_ref(pause_ref):
            raise ConfigurationError(
                "a link names its pause by its reference, not by its id",
                hint="sign(ask.pause_ref, …): the id stays on the server",
            )
        if valid_for <= timedelta(0):
            raise ConfigurationError(
                f"valid_for={valid_for!r} must be positive", hint="e.g. timedelta(days=3)"
            )
        expires = int((self._clock.now() + valid_for).timestamp())
        body = {"r": pause_ref, "t": tenant_id, "a": bool(approved), "e": expires}
        payload = _encoded(json.dumps(body, separators=(",", ":")).encode())
        return f"{payload}.{self._signature(payload)}"

    def read(self, link: str) -> AnswerLink:
        """What a link answers, once its signature and expiry are checked.

        Raises:
            AnswerLinkError: It was not signed with this secret, is damaged, or has expired.
        """
        text = str(link)
        if not text.isascii():  # a link this server signed is URL-safe base64
            raise AnswerLinkError()
        payload, _, signature = text.partition(".")
        if not payload or not hmac.compare_digest(self._signature(payload), signature):
            raise AnswerLinkError()
        try:
            body = json.loads(_decoded(payload))
            found = AnswerLink(
                str(body["r"]),
                str(body["t"]),
                body["a"] is True,
                datetime.fromtimestamp(int(body["e"]), UTC),
            )
        except (ValueError, KeyError, TypeError, binascii.Error) as error:
            raise AnswerLinkError() from error
        if found.expires_at <= self._clock.now():
            raise AnswerLinkError(
                "the link has expired", hint="ask for the question to be sent again"
            )
        return found
