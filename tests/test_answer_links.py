"""Signed answer links (`agboss.web.AnswerLinks`): the pattern of docs/slack.md for a channel
that mails its question — a link per answer, signed, expiring, single-use by its pause."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest

from agboss import ConfigurationError, pause_ref
from agboss.testing import TestClock
from agboss.web import AnswerLinkError, AnswerLinks

SECRET = "s" * 32
PAUSE_ID = "p" * 32
REF = pause_ref(PAUSE_ID)


async def test_a_signed_link_reads_back_as_the_answer_it_carries_until_it_expires() -> None:
    clock = TestClock()
    links = AnswerLinks(SECRET, clock=clock)
    token = links.sign(REF, tenant_id="acme", approved=True, valid_for=timedelta(days=3))
    link = links.read(token)
    assert (link.pause_ref, link.tenant_id, link.approved) == (REF, "acme", True)
    assert link.expires_at == (clock.now() + timedelta(days=3)).replace(microsecond=0)
    await clock.advance(timedelta(days=3))
    with pytest.raises(AnswerLinkError, match="expired"):
        links.read(token)


def test_a_link_changed_cut_off_or_signed_elsewhere_is_refused() -> None:
    links = AnswerLinks(SECRET)
    token = links.sign(REF, tenant_id="acme", approved=False, valid_for=timedelta(hours=1))
    payload, signature = token.split(".")
    other = AnswerLinks("o" * 32).sign(
        REF, tenant_id="acme", approved=True, valid_for=timedelta(hours=1)
    )
    approving = other.split(".")[0]
    odd = (f"{payload}.{signature}é", f"é{payload}.{signature}", "ü.ß", "\ud800.x")
    for bad in (f"{approving}.{signature}", payload, token[:-3], other, "", "..", "a.b", *odd):
        with pytest.raises(AnswerLinkError) as caught:
            links.read(bad)
        assert caught.value.code == "web.bad-link"
    assert links.read(token).approved is False


def test_a_short_secret_or_a_validity_not_ahead_is_refused_where_it_is_written() -> None:
    with pytest.raises(ConfigurationError, match="at least 32 bytes"):
        AnswerLinks("short")
    with pytest.raises(ConfigurationError, match="must be positive"):
        AnswerLinks(SECRET).sign(REF, tenant_id="t", approved=True, valid_for=timedelta(0))


def test_a_link_carries_the_pauses_reference_and_refuses_its_id() -> None:
    links = AnswerLinks(SECRET)
    token = links.sign(REF, tenant_id="acme", approved=True, valid_for=timedelta(days=1))
    payload = base64.urlsafe_b64decode(token.split(".")[0] + "==")
    assert PAUSE_ID.encode() not in payload
    assert REF.encode() in payload
    with pytest.raises(ConfigurationError, match="by its reference"):
        links.sign(PAUSE_ID, tenant_id="acme", approved=True, valid_for=timedelta(days=1))
