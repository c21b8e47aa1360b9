"""A fake Slack for tests and demos: the Web API methods a Slack channel uses, served on
loopback, and interactions posted to an app as Slack posts them — signed.

```python
with FakeSlack(clock=env.clock) as slack:
    workspace = SlackWorkspace(AsyncWebClient(token=slack.token, base_url=slack.base_url))
    ...                                    # the app posts a question
    [message] = slack.messages()
    response = await slack.click(url, message, "Approve", user="U0MANAGER")
    assert "Approved by <@U0MANAGER>" in slack.message(message.ts).text_of_blocks()
```

It implements ``chat.postMessage``, ``chat.update``, ``chat.postEphemeral`` and
``views.open`` (with the checks that catch a wrong call: the bot token, a known message, a
trigger id used once within 3 seconds of its click, Block Kit's main size limits), and records
every call. Needs the ``slack`` extra (the signing uses ``slack_sdk``'s own code).
"""

from agboss.testing.slack._fake import FakeMessage, FakeSlack, FakeView, SlackCall

__all__ = ["FakeMessage", "FakeSlack", "FakeView", "SlackCall"]
