"""Signed answer links (`agboss.web.AnswerLinks`): the pattern of docs/slack.md for a channel
that mails its question — a link per answer, signed, expiring, single-use by its pause."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agboss import ConfigurationError
from agboss.testing import TestClock
from agboss.web import AnswerLinkError, AnswerLinks

SECRET = "s" * 32


async def test_a_signed_link_reads_back_as_the_answer_it_carries_until_it_expires() -> None:
    clock = TestClock()
    links = AnswerLinks(SECRET, clock=clock)
    token = links.sign("p" * 32, tenant_id="acme", approved=True, valid_for=timedelta(days=3))
    link = links.read(token)
    assert (link.pause_id, link.tenant_id, link.approved) == ("p" * 32, "acme", True)
    assert link.expires_at == (clock.now() + timedelta(days=3)).replace(microsecond=0)
    await clock.advance(timedelta(days=3))
    with pytest.raises(AnswerLinkError, match="expired"):
        links.read(token)


def test_a_link_changed_cut_off_or_signed_elsewhere_is_refused() -> None:
    links = AnswerLinks(SECRET)
    token = links.sign("p" * 32, tenant_id="acme", approved=False, valid_for=timedelta(hours=1))
    payload, signature = token.split(".")
    other = AnswerLinks("o" * 32).sign(
        "p" * 32, tenant_id="acme", approved=True, valid_for=timedelta(hours=1)
    )
    approving = other.split(".")[0]
    for bad in (f"{approving}.{signature}", payload, token[:-3], other, "", "..", "a.b"):
        with pytest.raises(AnswerLinkError) as caught:
            links.read(bad)
        assert caught.value.code == "web.bad-link"
    assert links.read(token).approved is False


def test_a_short_secret_or_a_validity_not_ahead_is_refused_where_it_is_written() -> None:
    with pytest.raises(ConfigurationError, match="at least 32 bytes"):
        AnswerLinks("short")
    with pytest.raises(ConfigurationError, match="must be positive"):
        AnswerLinks(SECRET).sign("p", tenant_id="t", approved=True, valid_for=timedelta(0))
