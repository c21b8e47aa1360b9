"""``agboss.slack``: approvals in Slack, on the official ``slack_sdk``.

A question is posted as a Block Kit message with its buttons (`SlackChannel`); Slack posts
the clicks to `slack_router`, which checks the signature, answers with `App.answer` and
updates the message — or tells the user who clicked why not. A question withdrawn or
cancelled says so, its buttons gone::

    @channel(
        name="slack-refund-approval-channel",
        description="Asks the finance managers in Slack",
        deps=[SlackWorkspace, ExecutionContext],
    )
    class SlackRefundApprovalChannel(SlackChannel[RefundDto], RefundApprovalChannel):
        conversation = "C0FINANCE"

    api.mount("/slack", slack_router(app, signing_secret=secret, answerer=managers))

Needs the ``slack`` extra: ``pip install 'agboss[slack]'``. ``docs/slack.md`` sets up the
Slack app.
"""

try:
    import aiohttp  # noqa: F401 - only to say which extra is missing
    import slack_sdk  # noqa: F401
    import starlette  # noqa: F401
except ModuleNotFoundError as missing:
    raise ModuleNotFoundError(
        "agboss.slack needs the slack extra (slack_sdk, aiohttp, starlette): "
        "pip install 'agboss[slack]'",
        name=missing.name,
    ) from missing

from agboss.slack._channel import SlackChannel
from agboss.slack._errors import (
    SlackNotAllowedError,
    SlackSignatureError,
    SlackStaleRequestError,
    SlackUnmappedUserError,
)
from agboss.slack._router import SlackAnswerer, SlackAnswering, SlackUser, slack_router
from agboss.slack._workspace import SlackWorkspace

__all__ = [
    "SlackAnswerer",
    "SlackAnswering",
    "SlackChannel",
    "SlackNotAllowedError",
    "SlackSignatureError",
    "SlackStaleRequestError",
    "SlackUnmappedUserError",
    "SlackUser",
    "SlackWorkspace",
    "slack_router",
]
