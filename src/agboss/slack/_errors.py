"""What a Slack interaction can be refused with."""

from __future__ import annotations

from agboss.errors import PauseAnswererError
from agboss.http import NotAuthenticatedError

__all__ = [
    "SlackNotAllowedError",
    "SlackSignatureError",
    "SlackStaleRequestError",
    "SlackUnmappedUserError",
]


class SlackSignatureError(NotAuthenticatedError):
    """The request is not signed with the app's signing secret (``401``)."""

    code = "slack.bad-signature"
    default_message = "the request does not carry a valid Slack signature"
    default_hint = (
        "point the Slack app's Interactivity Request URL here, and give slack_router the "
        "app's Signing Secret (Basic Information → App Credentials)"
    )


class SlackStaleRequestError(NotAuthenticatedError):
    """The request's timestamp is outside the window: a replay, or a clock far off (``401``)."""

    code = "slack.stale-request"
    default_message = "the request's X-Slack-Request-Timestamp is more than 5 minutes away"
    default_hint = "a replayed request is refused; if the server's clock is off, set it right"


class SlackUnmappedUserError(PauseAnswererError):
    """The Slack user who clicked is not mapped to anyone who may answer (shown to them)."""

    code = "slack.unmapped-user"
    default_message = "your Slack account is not allowed to answer this question"
    default_hint = "ask an administrator to map your Slack user to an answerer"


class SlackNotAllowedError(PauseAnswererError):
    """The question's channel names who in Slack may answer it, and the user who clicked is
    none of them (shown to them alone; nothing is recorded)."""

    code = "slack.not-allowed"
    default_message = "this question is answered by the people its channel names, not by you"
    default_hint = (
        "leave it to them; if you should answer it, ask to be added to its channel's list"
    )
