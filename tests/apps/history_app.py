"""Agents on a thread that remembers: every earlier exchange, the last one, none."""

from __future__ import annotations

from agboss import (
    History,
    PiiKind,
    PiiRule,
    agent,
    application,
    replace_with_token,
    workflow,
)
from tests.apps.office_parts import office_flow


@agent(
    name="chat-agent",
    description="Answers in a conversation",
    prompt="Answer.",
    model="test/chat",
)
class ChatAgent: ...


@agent(
    name="brief-agent",
    description="Remembers the last exchange only",
    prompt="Answer.",
    model="test/chat",
    history=History.last(1),
)
class BriefAgent: ...


@agent(
    name="forgetful-agent",
    description="Remembers nothing",
    prompt="Answer.",
    model="test/chat",
    history=History.none(),
)
class ForgetfulAgent: ...


@workflow(name="chat-workflow", version="1", flow=office_flow(ChatAgent))
class ChatWorkflow: ...


@workflow(name="brief-workflow", version="1", flow=office_flow(BriefAgent))
class BriefWorkflow: ...


@workflow(name="forgetful-workflow", version="1", flow=office_flow(ForgetfulAgent))
class ForgetfulWorkflow: ...


@application(
    name="history-application",
    workflows=[ChatWorkflow, BriefWorkflow, ForgetfulWorkflow],
    pii=[PiiRule(PiiKind.IBAN, replace_with_token())],
)
class HistoryApplication: ...
