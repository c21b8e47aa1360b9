"""The agent's tool loop: model turns, tool calls, and one answer tool.

Each model turn may call several tools at once; they run concurrently, each as a journaled
step. Arguments are validated against the tool's input DTO; an invalid call, an unknown tool or
a tool that raises becomes a ``Tool error: …`` message the model reads and can correct. The
agent answers through one answer tool whose arguments are its output DTO (a text DTO may also be
answered in plain text); an invalid answer goes back to the model up to
``max_validation_attempts`` times, then the step fails with `AgentFailedError`.

The loop is deterministic given the journal: a re-entered agent rebuilds the same messages from
the journaled model turns and tool results, and repeats no model call and no tool run.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ValidationError

from agboss.agents import ANSWER_TOOL
from agboss.assembly import McpTool
from agboss.components import AgentSpec, ToolSpec
from agboss.context import StepContext
from agboss.dto import ToolCallApprovalDecisionDto, is_text_dto, schema_of, validation_errors
from agboss.engine.questions import ask_approval, not_as_decided
from agboss.engine.steps import (
    MODEL_CALL,
    MODEL_CALL_UNDER_BUDGET,
    Answering,
    Asked,
    CallSite,
    Step,
    ToolRaised,
    ToolResult,
    ToolStep,
    journal_refusal,
    on_interrupted,
    run_asking,
    run_step,
    tool_policy,
)
from agboss.engine.trees import (
    TOOL_STEP,
    ExecutionFrame,
    Waiting,
    check_budgets,
    maybe_await,
    run_within,
    step_context,
)
from agboss.errors import (
    AgbossError,
    AgentFailedError,
    DtoValidationError,
    PassStoppingError,
    ToolError,
)
from agboss.flow import FlowNode
from agboss.mcp.client import McpRound
from agboss.models import (
    ChatRequest,
    ChatResponse,
    Message,
    MessageRole,
    ModelCaller,
    ToolCall,
    ToolSchema,
)
from agboss.observability import (
    ExecutionEvent,
    ExecutionEventKind,
    agent_span,
    chat_span,
    emit,
    listening,
    log_event,
    tool_span,
    usage_seen,
)
from agboss.pii import PiiSeam, UnknownTokenError
from agboss.records import ComponentRecord, PauseRecord, StepRecord, ToolCallRecord
from agboss.store.writes import AddLedgerEntry

__all__ = ["AgentRun", "describe_validation_error"]


def describe_validation_error(error: ValidationError) -> str:
    """A validation error as one line a model (or a person) can act on."""
    return "; ".join(validation_errors(error))


class AgentRun:
    """One visit of an agent node: its tool loop, from its input to its output DTO."""

    def __init__(
        self,
        frame: ExecutionFrame,
        node: FlowNode,
        visit: int,
        spec: AgentSpec,
        value: BaseModel,
        *,
        scope: str | None = None,
        output: type[BaseModel] | None = None,
        copy_index: int = 0,
        item_index: int | None = None,
    ) -> None:
        self.frame = frame
        self.node = node
        self.visit = visit
        self.spec = spec
        self.value = value
        self.scope = scope or f"{node.node_id}#{visit}"
        self.output = output or node.output
        self.copy_index = copy_index
        self.item_index = item_index
        self.tools = frame.runtime.assembly.tools_by_name(spec)
        self.site = CallSite(frame, spec.name, node.node_id, frame.branch_path(self.scope))
        """Where its tools' calls are made, for the rules around a call."""
        assembly = frame.runtime.assembly
        # A budget reads the ledger back: what was counted must be committed first.
        kind = MODEL_CALL_UNDER_BUDGET if assembly.declares_budgets else MODEL_CALL
        self._model_policy = kind.calling_a_model(assembly.model_retry(spec))
        """How its model calls run as steps."""
        self._component = ComponentRecord(kind="agent", name=spec.name)
        self._text_answer = is_text_dto(self.output)
        self.pii: PiiSeam | None = None
        self._history_sent = 0
        """The thread's earlier exchanges this run sent before the request."""
        self._bad_tokens: dict[str, str] = {}
        """Tool calls whose arguments named a token nobody issued, by call id."""

    def _key(self, iteration: int, part: str) -> str:
        return f"{self.scope}/turn-{iteration}/{part}"

    def _fail(
        self, message: str, hint: str | None = None, *, final: bool = False
    ) -> AgentFailedError:
        if self.pii is not None:  # a failure's text leaves the process: masked like a record
            message = self.pii.policy.outside(message, self.pii.values)
        return AgentFailedError(
            message, agent=self.spec.name, node_id=self.node.node_id, hint=hint, final=final
        )

    # ---- the loop ------------------------------------------------------------------

    async def run(self) -> BaseModel | Waiting:
        """Runs the loop until the agent answers, or until a tool call waits for an answer.

        Every call of a turn runs to its end (or its pause) before the agent waits: a paused
        call does not stop its siblings.

        Raises:
            AgentFailedError: The model failed, kept answering invalidly, or ran out of turns.
        """
        row, spec = self.frame.row, self.spec
        with agent_span(spec.name, spec.description, row.thread_id, execution_id=row.execution_id):
            return await self._loop()

    async def _loop(self) -> BaseModel | Waiting:
        await self.frame.load(self.scope + "/")
        self.pii = await self.frame.pii_seam()
        if self.pii is not None:
            self.pii.know(self.value, type(self.value))
        messages = self._first_messages()
        messages[1:1] = await self._history()
        attempts = 0
        for iteration in range(self.spec.max_tool_loop_iterations):
            seen = await self._model_turn(iteration, attempts, messages)
            if isinstance(seen, Waiting):
                return seen.at(self.site.path)  # its next attempt is due later: the tree rests
            if self.pii is not None:
                await self.pii.ready_for(
                    [seen.content or "", *(c.arguments for c in seen.tool_calls)]
                )
            # The conversation keeps what the model wrote (its tokens); the loop reads it with
            # the real values, so tools and validation never see a token.
            messages.append(Message(MessageRole.ASSISTANT, seen.content or "", seen.tool_calls))
            response, unknown = self._revealed(seen)
            answers = [call for call in response.tool_calls if call.name == ANSWER_TOOL]
            calls = [call for call in response.tool_calls if call.name != ANSWER_TOOL]
            invalid: str | None = None
            if unknown is not None and (answers or not calls):
                invalid = f"it names {unknown}, a token nobody issued; use the ones you were given"
            elif answers:
                answer, invalid = self._read_answer(answers[0].arguments)
                if answer is not None:
                    return answer
            elif not calls:
                answer, invalid = self._read_text(response.content)
                if answer is not None:
                    return answer
            # Every call runs to its end (or its pause) even when a sibling fails, so that no
            # send is left half-done behind the failure; the first failure is then raised.
            outcomes = await asyncio.gather(
                *(
                    self._tool_call(iteration, attempts, index, call)
                    for index, call in enumerate(calls)
                ),
                return_exceptions=True,
            )
            failures = [o for o in outcomes if isinstance(o, BaseException)]
            # A lost lease or a failing store stops the pass; it is not this agent's failure.
            stops = [f for f in failures if isinstance(f, PassStoppingError)]
            if failures:
                raise (stops or failures)[0]
            results = [o for o in outcomes if not isinstance(o, BaseException)]
            waits = [result for result in results if isinstance(result, Waiting)]
            if waits:
                # A paused call waits; its siblings ran to their end.
                return Waiting.joined(waits).at(self.site.path)
            for call, result in zip(calls, results, strict=True):
                assert not isinstance(result, Waiting)
                messages.append(Message(MessageRole.TOOL, result.content, tool_call_id=call.id))
            for index, call in enumerate(answers):
                reply = invalid if index == 0 else "Only one final_answer call is read per turn."
                messages.append(Message(MessageRole.TOOL, f"Invalid answer: {reply}", (), call.id))
            if invalid is not None:
                attempts += 1
                if attempts > self.spec.max_validation_attempts:
                    raise self._fail(
                        f"its answer stayed invalid after {self.spec.max_validation_attempts} "
                        f"validation attempts: {invalid}",
                        hint="make the prompt say what the answer must hold, or raise "
                        "max_validation_attempts",
                        final=True,  # the journaled answers fail it again on a retry
                    )
                if not answers:
                    messages.append(Message(MessageRole.USER, f"Invalid answer: {invalid}"))
        raise self._fail(
            f"it did not answer within {self.spec.max_tool_loop_iterations} model turns",
            hint="raise @agent(max_tool_loop_iterations=...) or make the prompt more direct",
            final=True,
        )

    def _revealed(self, response: ChatResponse) -> tuple[ChatResponse, str | None]:
        """The model's turn with its tokens turned back into values; the first token nobody
        issued in its text or answer, if any (a tool call's is kept in ``_bad_tokens``)."""
        seam = self.pii
        if seam is None:
            return response, None
        unknown = None
        try:
            content = seam.reveal(response.content) if response.content else response.content
        except UnknownTokenError as error:
            content, unknown = response.content, error.token
        calls = []
        for call in response.tool_calls:
            try:
                calls.append(
                    call.model_copy(update={"arguments": seam.reveal_json(call.arguments)})
                )
            except UnknownTokenError as error:
                if call.name == ANSWER_TOOL:
                    unknown = unknown or error.token
                else:
                    self._bad_tokens[call.id] = error.token
                calls.append(call)
        return response.model_copy(update={"content": content, "tool_calls": tuple(calls)}), unknown

    def _to_model(self, messages: list[Message]) -> tuple[Message, ...]:
        """The conversation as the model may read it (PII rules applied)."""
        seam = self.pii
        if seam is None:
            return tuple(messages)
        return tuple(
            Message(
                message.role,
                seam.to_model(message.content),
                tuple(
                    call.model_copy(update={"arguments": seam.to_model(call.arguments)})
                    for call in message.tool_calls
                ),
                message.tool_call_id,
            )
            for message in messages
        )

    def _first_messages(self) -> list[Message]:
        if self._text_answer:
            how = (
                "When you are done, answer in plain text, or call the "
                f"`{ANSWER_TOOL}` tool with your answer."
            )
        else:
            how = f"When you are done, call the `{ANSWER_TOOL}` tool with your answer."
        value = self.value
        text = value.text if is_text_dto(type(value)) else value.model_dump_json()  # type: ignore[attr-defined]
        return [
            Message(MessageRole.SYSTEM, f"{self.spec.prompt}\n\n{how}"),
            Message(MessageRole.USER, str(text)),
        ]

    async def _history(self) -> list[Message]:
        """The thread's earlier exchanges, as the conversation before the request: each
        earlier request as the user's message and its answer as the agent's.

        Only in a root execution (a child is a task of its tree, not the conversation). They
        are the exchanges completed before this execution began, so a pass that re-enters the
        agent rebuilds the same conversation: as many as its first model call was sent (its
        journal row says), read again only when there were any.
        """
        limit = self.spec.history.turns
        row = self.frame.row
        if limit == 0 or row.parent_execution_id is not None:
            return []
        first = self.frame.journal.get(self._key(0, "model"))
        if first is not None:
            limit = StepRecord.model_validate_json(first.record_json).history
            if limit == 0:
                return []
        elif self.frame.state.new_thread:
            return []
        exchanges = await self.frame.runtime.store.executions.find_exchanges(
            row.tenant_id, row.thread_id, row, limit
        )
        self._history_sent = len(exchanges)
        return [
            message
            for exchange in exchanges
            for message in (
                Message(MessageRole.USER, _said(exchange.input_json)),
                Message(MessageRole.ASSISTANT, _said(exchange.output_json)),
            )
        ]

    def _streamed_text(self, execution_id: str) -> Callable[[str], None]:
        """What a streaming provider calls with each piece of the model's text."""
        clock = self.frame.runtime.clock

        def told(piece: str) -> None:
            emit(
                lambda: ExecutionEvent(
                    ExecutionEventKind.TEXT_DELTA,
                    execution_id,
                    clock.now(),
                    agent=self.spec.name,
                    text=piece,
                )
            )

        return told

    def _tool_schemas(self) -> tuple[ToolSchema, ...]:
        schemas = [
            ToolSchema(name, spec.description, schema_of(spec.input))
            for name, (_, spec) in self.tools.items()
        ]
        schemas.append(ToolSchema(ANSWER_TOOL, "Gives your final answer.", schema_of(self.output)))
        return tuple(schemas)

    def _read_answer(self, arguments: str) -> tuple[BaseModel | None, str | None]:
        try:
            return self.output.model_validate_json(arguments or "{}"), None
        except ValidationError as error:
            return None, describe_validation_error(error)

    def _read_text(self, content: str | None) -> tuple[BaseModel | None, str | None]:
        if self._text_answer and content:
            return self.output.model_validate({"text": content}), None
        return None, f"answer by calling the `{ANSWER_TOOL}` tool"

    # ---- steps ---------------------------------------------------------------------

    def _record(
        self, kind: str, key: str, iteration: int, attempts: int, **extra: Any
    ) -> StepRecord:
        return StepRecord(
            kind=kind,
            key=self.frame.idempotency_key(key),
            agent=self._component,
            node_id=self.node.node_id,
            visit=self.visit,
            copy=self.copy_index,
            item_index=self.item_index if self.item_index is not None else self.frame.item_index,
            tool_loop_iteration=iteration,
            validation_attempts=attempts,
            **extra,
        )

    async def _model_turn(
        self, iteration: int, attempts: int, messages: list[Message]
    ) -> ChatResponse | Waiting:
        key = self._key(iteration, "model")
        history = {"history": self._history_sent} if iteration == 0 else {}
        record = self._record("model-call", key, iteration, attempts, **history)
        request = ChatRequest(
            model=self.spec.model,
            messages=(),  # the conversation goes through the PII seam when the call is made
            tools=self._tool_schemas(),
            caller=ModelCaller(
                "agent", self.spec.name, self.frame.row.tenant_id, self.frame.row.execution_id
            ),
            subject={"input": self.value},
            require_tool=not self._text_answer,
        )

        runtime = self.frame.runtime
        row = self.frame.row

        async def call(attempt: int) -> ChatResponse:
            model = runtime.models.chat_model(self.spec.model)
            # PiiRefusedError here: the model is never called, the step fails.
            if self.pii is not None:
                await self.pii.ready_for(_texts(messages))
            sent = replace(
                request,
                messages=self._to_model(messages),
                on_text=self._streamed_text(row.execution_id) if listening() else None,
            )
            await check_budgets(runtime, row, request.caller.label)  # before each attempt
            with chat_span(
                self.spec.model,
                cost_caller=request.caller.label,
                execution_id=row.execution_id,
                root_execution_id=row.root_execution_id,
                tenant_id=row.tenant_id,
                step=record.key,
                attempt=attempt,
            ) as current:
                response = await model.complete(sent)
                usage_seen(current, response.usage.input_tokens, response.usage.output_tokens)
            emit(
                lambda: ExecutionEvent(
                    ExecutionEventKind.MODEL_ANSWERED,
                    row.execution_id,
                    runtime.clock.now(),
                    agent=self.spec.name,
                    text=response.content,
                    tool_calls=tuple(call.name for call in response.tool_calls),
                    call_ids=tuple(call.id for call in response.tool_calls),
                )
            )
            # Counted with the step's journal row, in the same commit (and the tokens the
            # call issued, which its answer may name): an attempt that failed spent nothing.
            self.frame.keep_tokens(self.pii)
            self.frame.writes.add(
                AddLedgerEntry(
                    row.root_execution_id,
                    row.execution_id,
                    request.caller.label,
                    response.usage,
                    runtime.clock.now(),
                )
            )
            return response

        result = await run_step(
            self.frame,
            Step(
                key,
                record,
                call,
                encode=lambda response: response.model_dump_json(),
                decode=ChatResponse.model_validate_json,
                record_of=lambda response: record.model_copy(update={"usage": response.usage}),
            ),
            self._model_policy,
            fail=self._model_failed,
        )
        assert result is not None  # never in doubt: a model call writes no intent
        return result

    def _model_failed(self, error: BaseException, errors: list[str]) -> AgentFailedError:
        """The step's failure once its model call is not tried again."""
        said = error.message if isinstance(error, AgbossError) else repr(error)
        after = f" after {len(errors)} attempts" if len(errors) > 1 else ""
        failure = self._fail(f"its model call failed{after}: {said}")
        failure.attempts = list(errors)
        return failure

    async def _tool_call(
        self, iteration: int, attempts: int, index: int, call: ToolCall
    ) -> ToolResult | Waiting:
        found = self.tools.get(call.name)
        if found is None:
            ran = self.frame.journaled(self._key(iteration, f"tool-{index}"))
            if ran is not None:  # ran under an earlier build that had it: replayed as it ran
                return ToolResult.decode(ran.result_json)
            names = ", ".join([*self.tools, ANSWER_TOOL])
            return ToolResult(
                f"Tool error: there is no tool {call.name!r}; use one of {names}", True
            )
        unknown = self._bad_tokens.get(call.id)
        if unknown is not None:  # a decline: the tool never runs on a made-up value
            return ToolResult(
                f"Tool error: the arguments name {unknown}, a token nobody issued; use the "
                "tokens you were given",
                True,
            )
        tool_spec = found[1]
        try:
            args = tool_spec.input.model_validate_json(call.arguments or "{}")
        except ValidationError as error:
            return ToolResult(
                f"Tool error: invalid arguments for {call.name}: "
                f"{describe_validation_error(error)}",
                True,
            )
        result = await self._validated_call(iteration, attempts, index, call, args, found)
        if self.pii is not None:
            # The marked fields of what goes to the model next are known to the seam.
            self.pii.know(args, tool_spec.input)
            if isinstance(result, ToolResult) and not result.error:
                self.pii.know(json.loads(result.content), tool_spec.output)
        return result

    async def _validated_call(
        self,
        iteration: int,
        attempts: int,
        index: int,
        call: ToolCall,
        args: BaseModel,
        found: tuple[type[Any], ToolSpec],
    ) -> ToolResult | Waiting:
        tool_cls, tool_spec = found
        key = self._key(iteration, f"tool-{index}")
        record = self._record(
            TOOL_STEP,
            key,
            iteration,
            attempts,
            tool_call=ToolCallRecord(
                tool=call.name, call_id=call.id, arguments=args.model_dump(mode="json")
            ),
        )
        step = step_context(record)
        entry = self.frame.journaled(key)
        if entry is not None:
            return ToolResult.decode(entry.result_json)
        channel = self.frame.runtime.assembly.tool_channels.get(tool_cls)
        if channel is None:
            return await self._run_call(ToolStep(key, record, tool_cls, tool_spec, args, step))
        approval = await ask_approval(
            self.frame,
            agent=self.spec.name,
            channel=channel,
            tool=tool_spec,
            step_key=key,
            step=record,
            context=step,
            args=args,
            path=self.site.path,
        )
        if isinstance(approval, Waiting):
            return approval
        decision = approval.decision
        pause = approval.pause
        taken = approval.taken  # with the commit that journals the step
        answer = pause.answer
        if answer is not None and answer.usage is not None:
            # What reading a free-text reply cost joins the spend once: with this step.
            record = record.model_copy(update={"usage": answer.usage})
        if decision.approved:
            if decision.override_arguments is not None:
                try:
                    args = tool_spec.input.model_validate(decision.override_arguments)
                except ValidationError as error:
                    if not self.frame.runtime.assembly.continues_by_mapping:
                        raise
                    # Given for the call as an earlier build made it, on an instance of that
                    # build, as this one's continuation moved the tree: never run.
                    return await journal_refusal(
                        self.frame,
                        key,
                        record,
                        f"the arguments {approval.decided_by} gave do not fit {call.name} "
                        f"since a deploy changed it: {describe_validation_error(error)}",
                        taken,
                    )
                assert record.tool_call is not None
                record = record.model_copy(
                    update={
                        "tool_call": record.tool_call.model_copy(
                            update={"arguments": args.model_dump(mode="json")}
                        )
                    }
                )
            refused = self._not_as_decided(decision, pause, call.name, args)
            if refused is not None:
                return await journal_refusal(self.frame, key, record, refused, taken)
            return await self._run_call(
                ToolStep(key, record, tool_cls, tool_spec, args, step, taken)
            )
        reason = f": {decision.reason}" if decision.reason else ""
        return await journal_refusal(
            self.frame,
            key,
            record,
            f"the call was rejected by {approval.decided_by}{reason}",
            taken,
        )

    def _not_as_decided(
        self, decision: ToolCallApprovalDecisionDto, pause: PauseRecord, tool: str, args: BaseModel
    ) -> str | None:
        """Why the call about to run is not the one decided (`not_as_decided`), said in the
        log as well: a row changed under a decision is the operator's to look at."""
        runtime = self.frame.runtime
        why = not_as_decided(decision, pause, tool, runtime.assembly.tool_definition(tool), args)
        if why is not None:
            log_event(
                runtime.logger,
                logging.WARNING,
                "run.not-as-decided",
                "execution %(execution_id)s: %(why)s",
                execution_id=pause.execution_id,
                tenant_id=pause.tenant_id,
                why=why,
            )
        return why

    async def _run_call(self, call: ToolStep) -> ToolResult | Waiting:
        """Runs an approved (or unguarded) call; an MCP tool's may ask questions first."""
        if issubclass(call.tool_cls, McpTool):
            return await run_asking(self.site, call, self.journal_tool)
        return await self.journal_tool(call)

    async def journal_tool(
        self, call: ToolStep, answering: Answering | None = None, ended: int = 0
    ) -> ToolResult | Waiting:
        """Runs the tool once, as a journaled step — a tool that must not run twice with its
        intent committed before it runs (``answering``: an MCP tool's call with the answers to
        the questions it asked before; ``ended``: how many of its earlier attempts ended — in
        those questions).

        An attempt begun before and never ended may have run: the tool's ``on_interrupted``
        says what happens (see `on_interrupted`).

        Returns:
            The call's result, or what waits while a person is asked whether to run it again,
            or while the call rests until its next attempt is due.

        Raises:
            Asked: The MCP tool asked questions instead of answering; nothing was journaled.
            ToolInterruptedError: An attempt may have run and the tool says ``FAIL``.
        """
        record, spec = call.record, call.spec

        async def run(attempt: int) -> ToolResult:
            step = replace(call.step, attempt=attempt)
            return await self._run_tool(call.tool_cls, spec, call.args, step, answering)

        return await run_step(
            self.frame,
            Step(
                call.key,
                record,
                run,
                encode=ToolResult.encode,
                decode=ToolResult.decode,
                record_of=lambda result: record.model_copy(
                    update={"error": result.content if result.error else None}
                ),
                implies=call.taken,
            ),
            tool_policy(spec),
            fail=lambda error, errors: self._tool_failed(spec, error, errors),
            in_doubt=lambda attempt: on_interrupted(self.site, call, attempt),
            ended=ended,
        )

    def _tool_failed(self, spec: ToolSpec, error: BaseException, errors: list[str]) -> Exception:
        """The step's failure once a tool's raised run is not tried again."""
        after = f" after {len(errors)} attempts" if len(errors) > 1 else ""
        failure = self._fail(
            f"{spec.name} raised {type(error).__name__}{after}: {_error_text(error)}",
            hint="raise ToolError from the tool for a refusal the model should read",
        )
        failure.attempts = list(errors)
        return failure

    async def _run_tool(
        self,
        tool_cls: type[Any],
        spec: ToolSpec,
        args: BaseModel,
        step: StepContext,
        answering: Answering | None,
    ) -> ToolResult:
        context = self.frame.context(step)
        clock = self.frame.runtime.clock

        def event(kind: ExecutionEventKind, failed: bool = False) -> ExecutionEvent:
            return ExecutionEvent(
                kind,
                context.execution_id,
                clock.now(),
                agent=self.spec.name,
                tool=spec.name,
                call_id=step.call_id,
                failed=failed,
            )

        emit(lambda: event(ExecutionEventKind.TOOL_STARTED))
        with tool_span(
            spec.name,
            step.call_id,
            spec.description,
            execution_id=context.execution_id,
            root_execution_id=context.root_execution_id,
            step=step.idempotency_key,
        ):
            result = await self._run_handler(tool_cls, spec, args, context, answering)
        emit(lambda: event(ExecutionEventKind.TOOL_DONE, result.error))
        return result

    async def _run_handler(
        self,
        tool_cls: type[Any],
        spec: ToolSpec,
        args: BaseModel,
        context: Any,
        answering: Answering | None,
    ) -> ToolResult:
        handler = self.frame.runtime.assembly.container.create(tool_cls, spec.deps, context)
        run: Callable[[BaseModel], Any] = handler.run
        if answering is not None:
            run = functools.partial(
                handler.run_round, answers=answering[0], request_state=answering[1]
            )
        try:
            if inspect.iscoroutinefunction(run):
                work: Awaitable[Any] = run(args)
            else:
                work = _in_thread(run, args)
            result = await run_within(
                self.frame.runtime.clock, work, spec.timeout, context.signal, spec.name
            )
        except TimeoutError:
            return ToolResult(
                f"Tool error: {spec.name} did not finish within its timeout of {spec.timeout}",
                True,
            )
        except ToolError as error:
            return ToolResult(f"Tool error: {error.message}", True)
        except ValidationError as error:
            return ToolResult(f"Tool error: {describe_validation_error(error)}", True)
        except DtoValidationError as error:
            return ToolResult(f"Tool error: {error.message}", True)
        except Exception as error:
            # A bug or a domain failure, not a refusal the model can correct: tried again if
            # its policy names it, else the step fails (and `.on_join_error` can match the
            # error through the cause chain).
            raise ToolRaised(error) from error
        if isinstance(result, McpRound):  # questions before the answer: not a result
            raise Asked(result)
        try:
            if isinstance(result, dict):
                result = spec.output.model_validate(result)
        except ValidationError as error:
            raise self._fail(
                f"{spec.name} returned a mapping that is not a valid {spec.output.__name__}: "
                f"{describe_validation_error(error)}"
            ) from error
        if not isinstance(result, spec.output):
            raise self._fail(
                f"{spec.name} returned {type(result).__name__}, not {spec.output.__name__}",
                hint=f"return a {spec.output.__name__} from run()",
            )
        return ToolResult(result.model_dump_json(), False)


def _texts(messages: list[Message]) -> list[str]:
    return [
        text
        for message in messages
        for text in (message.content, *(call.arguments for call in message.tool_calls))
    ]


async def _in_thread(run: Callable[[BaseModel], Any], args: BaseModel) -> Any:
    # A sync run() would block the event loop: it runs in a worker thread. A mock's sync
    # wrapper may hand back a coroutine of the real async method; it is awaited here.
    return await maybe_await(await asyncio.to_thread(run, args))


def _error_text(error: BaseException) -> str:
    text = str(error)
    return text if text else type(error).__name__


def _said(value_json: str) -> str:
    """A stored request or answer as a message: a text DTO's text, any other DTO as JSON."""
    try:
        value = json.loads(value_json)
    except ValueError:
        return value_json
    if isinstance(value, dict) and set(value) == {"text"} and isinstance(value["text"], str):
        return value["text"]
    return value_json
