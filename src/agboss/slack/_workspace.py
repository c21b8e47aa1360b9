"""The Slack workspace an application asks in: the official SDK's async client, and the
conversation questions go to unless a channel chooses another."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from slack_sdk.web.async_client import AsyncWebClient

from agboss.errors import ConfigurationError

__all__ = ["SlackWorkspace"]

_API_URL = "https://slack.com/api/"


@dataclass(frozen=True, slots=True)
class SlackWorkspace:
    """Where questions are posted, and with which client — provided to the application's
    Slack channels (``deps=[SlackWorkspace, ExecutionContext]``) and used by `slack_router`.

    Attributes:
        client: The official SDK's `AsyncWebClient`, with the app's bot token
            (``xoxb-…``; scopes ``chat:write``, and ``chat:write.public`` to post in public
            channels it was not invited to).
        conversation: The conversation (a channel's id, ``C…``) questions go to unless a
            channel says otherwise.
    """

    client: AsyncWebClient = field(repr=False)
    conversation: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.client, AsyncWebClient):
            raise ConfigurationError(
                "SlackWorkspace takes slack_sdk's AsyncWebClient, not "
                f"{type(self.client).__name__}",
                hint="SlackWorkspace(AsyncWebClient(token=...)), or SlackWorkspace.from_env()",
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SlackWorkspace:
        """The workspace the environment names.

        ``SLACK_BOT_TOKEN`` (required), ``SLACK_CONVERSATION`` (the default conversation) and
        ``SLACK_API_URL`` (another Web API, such as `agboss.testing.slack.FakeSlack`'s).

        Raises:
            ConfigurationError: ``SLACK_BOT_TOKEN`` is not set.
        """
        found = os.environ if environ is None else environ
        token = found.get("SLACK_BOT_TOKEN", "").strip()
        if not token:
            raise ConfigurationError(
                "SLACK_BOT_TOKEN is not set",
                hint="set it to the bot token of your Slack app (OAuth & Permissions, xoxb-…)",
            )
        client = AsyncWebClient(token=token, base_url=found.get("SLACK_API_URL") or _API_URL)
        return cls(client, found.get("SLACK_CONVERSATION") or None)
