"""The public surface is pinned: adding or removing a name is a deliberate change here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import agboss
import agboss.cli
import agboss.testing
import agboss.web

PUBLIC = [
    "AbortSignal",
    "AgbossError",
    "AgentFailedError",
    "AlreadyVotedError",
    "AnswerNotMovedError",
    "AnswerReceipt",
    "App",
    "ApprovalAsk",
    "AssemblyError",
    "AssemblyViolation",
    "AutoApproveChannel",
    "AutoRejectChannel",
    "BlockedVersion",
    "BranchResult",
    "Budget",
    "BudgetExceededError",
    "ChannelAnswered",
    "ChannelAsk",
    "ChannelHandler",
    "ChannelOf",
    "ChannelOutcome",
    "ChannelReminder",
    "ChannelWithdrawal",
    "ChildExecutionRecord",
    "Claims",
    "Clock",
    "ComponentRecord",
    "ConfigurationError",
    "ContinuationFailedError",
    "ContinuationRecord",
    "ContinuedCall",
    "DecidedBy",
    "DefinitionChangedError",
    "DeployCheck",
    "DevelopmentChannel",
    "DtoValidationError",
    "Escalate",
    "ExecutionContext",
    "ExecutionEvent",
    "ExecutionEventKind",
    "ExecutionFailedError",
    "ExecutionOutput",
    "ExecutionPauseEvent",
    "ExecutionRecord",
    "ExecutionResumeEvent",
    "ExecutionStatus",
    "FailedExecution",
    "FailedPage",
    "Failure",
    "FailureRecord",
    "FinalFailureError",
    "FunctionProvider",
    "History",
    "InboxEntry",
    "InboxPage",
    "InputLimits",
    "InterpreterInput",
    "JoinDeadlineError",
    "JoinHandler",
    "JoinInput",
    "LeaseBusyError",
    "LeaseLostError",
    "LedgerRecord",
    "McpCallError",
    "ModelProviderError",
    "ModelUnservedError",
    "NotAnAnswererError",
    "NotFailedError",
    "NotPausedError",
    "OnExpiry",
    "OnInterrupted",
    "PassStoppingError",
    "PauseAnswer",
    "PauseAnswerRecord",
    "PauseAnswerer",
    "PauseAnswererError",
    "PauseClaimedError",
    "PauseDescription",
    "PauseExpiredError",
    "PauseKind",
    "PauseRecord",
    "PauseResolution",
    "PauseStatus",
    "PauseVote",
    "PauseVotes",
    "PendingCall",
    "PendingPause",
    "Pii",
    "PiiKind",
    "PiiRefusedError",
    "PiiRule",
    "Provide",
    "QuestionChangedError",
    "Quorum",
    "QuorumAsk",
    "QuorumGroup",
    "QuorumOutcome",
    "ReassignTargetError",
    "RecordedError",
    "Remind",
    "ReplyInterpretation",
    "ReplyInterpreterHandler",
    "ReplyInterpreterMissingError",
    "RetryPolicy",
    "RetryRecord",
    "Scope",
    "Spend",
    "StandingDecision",
    "StandingScope",
    "StepContext",
    "StepFailedError",
    "StepRecord",
    "StoreBusyError",
    "StoreError",
    "StoreOutcomeUnknownError",
    "StoreSchemaError",
    "StoreUnavailableError",
    "StoreValueError",
    "StrandedExecution",
    "StrandedPage",
    "SystemClock",
    "Tenant",
    "TerminalUserChannel",
    "ThreadOwnerError",
    "ToolCallApprovalAskDto",
    "ToolCallApprovalDecisionDto",
    "ToolCallRecord",
    "ToolError",
    "ToolHandler",
    "ToolInterruptedError",
    "UninterpretableReplyError",
    "UnknownDelegationError",
    "UnknownExecutionError",
    "UnknownPauseError",
    "UnknownStandingDecisionError",
    "UnknownThreadError",
    "UnknownWorkflowError",
    "VersionNotServedError",
    "WorkflowFinishTextDto",
    "WorkflowStartTextDto",
    "agent",
    "application",
    "block_with_refusal",
    "channel",
    "channel_role",
    "check_deploy",
    "join",
    "mask",
    "pause_ref",
    "provide",
    "replace_with_token",
    "reply_interpreter",
    "start",
    "tool",
    "workflow",
    "workflow_finish",
    "workflow_start",
]

TESTING = sorted(
    [
        "ComponentMock",
        "LlmScript",
        "ScriptedDecision",
        "ScriptedFailure",
        "ScriptedProvider",
        "ScriptedTurn",
        "ScriptedWhen",
        "TestClock",
        "TestEnv",
        "call_tools",
        "decide_with",
        "fail_with",
        "invalid_answer",
        "reply_with",
        "test_with",
        "tool_call",
    ]
)


def test_the_public_names_are_pinned() -> None:
    assert sorted(agboss.__all__) == PUBLIC
    assert all(hasattr(agboss, name) for name in agboss.__all__)


WEB = [
    "AnswerLink",
    "AnswerLinkError",
    "AnswerLinks",
    "AppNotOpenError",
    "Authenticator",
    "Caller",
    "NotAuthenticatedError",
    "RequestTooLargeError",
    "UnreadableRequestError",
    "authenticated",
    "mount",
    "pause_router",
]


def test_the_web_names_are_pinned() -> None:
    assert sorted(agboss.web.__all__) == WEB
    assert all(hasattr(agboss.web, name) for name in WEB)


SLACK = [
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

SLACK_TESTING = ["FakeMessage", "FakeSlack", "FakeView", "SlackCall"]


def test_the_slack_names_are_pinned() -> None:
    import agboss.slack
    import agboss.testing.slack

    assert sorted(agboss.slack.__all__) == SLACK
    assert all(hasattr(agboss.slack, name) for name in SLACK)
    assert sorted(agboss.testing.slack.__all__) == SLACK_TESTING
    assert all(hasattr(agboss.testing.slack, name) for name in SLACK_TESTING)


def test_the_command_line_names_are_pinned() -> None:
    assert agboss.cli.__all__ == ["main"]


def test_the_test_kit_names_are_pinned() -> None:
    assert sorted(agboss.testing.__all__) == TESTING


def test_all_is_sorted() -> None:
    assert agboss.__all__ == sorted(agboss.__all__)


def test_the_package_ships_py_typed() -> None:
    assert (Path(agboss.__file__).parent / "py.typed").exists()


def test_test_kit_names_are_not_collected_by_pytest() -> None:
    assert agboss.testing.test_with.__test__ is False  # type: ignore[attr-defined]
    assert agboss.testing.TestEnv.__test__ is False
    assert agboss.testing.TestClock.__test__ is False


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_without_the_web_extra_importing_agboss_web_names_the_extra() -> None:
    done = _run(
        "import sys\nsys.modules['starlette'] = None\n"
        "try:\n    import agboss.web\nexcept ModuleNotFoundError as error:\n    print(error)"
    )
    assert "pip install 'agboss[web]'" in done.stdout


def test_without_the_postgres_extra_importing_the_postgres_store_names_the_extra() -> None:
    done = _run(
        "import sys\nsys.modules['psycopg'] = None\n"
        "try:\n    import agboss.store.postgres\nexcept ModuleNotFoundError as error:\n"
        "    print(error)"
    )
    assert "pip install 'agboss[postgres]'" in done.stdout


def test_without_the_cli_extra_the_command_names_the_extra() -> None:
    done = _run("import sys\nsys.modules['click'] = None\nfrom agboss.cli import main\nmain()")
    assert done.returncode == 1
    assert "pip install 'agboss[cli]'" in done.stderr


def test_the_mcp_names_are_pinned() -> None:
    import agboss.mcp

    assert sorted(agboss.mcp.__all__) == [
        "McpArguments",
        "McpHttp",
        "McpInputRequest",
        "McpServer",
        "McpStdio",
        "McpToolOutput",
    ]


def test_declaring_an_mcp_server_needs_no_sdk_until_an_app_opens_it() -> None:
    done = _run(
        "import sys\nsys.modules['mcp'] = None\nsys.modules['jsonschema'] = None\n"
        "from agboss.mcp import McpServer\n"
        "print(McpServer.http('crm-mcp', url='https://u:p@crm.example/mcp').transport.describe())"
    )
    assert done.stdout.strip() == "https://crm.example/mcp", done.stderr
