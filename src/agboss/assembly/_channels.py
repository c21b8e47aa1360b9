"""Assembly's rules over channels: roles and their implementations, who answers, reply
interpreters."""

from __future__ import annotations

import inspect
import typing
from dataclasses import replace
from datetime import timedelta
from typing import Any

from agboss.assembly._definitions import ToolChannel
from agboss.assembly._walk import Walk
from agboss.components import (
    ApplicationSpec,
    ChannelHandler,
    ChannelRoleSpec,
    ChannelSpec,
    Claims,
    Escalate,
    Quorum,
    ReplyInterpreterSpec,
    ToolSpec,
    spec_of,
)
from agboss.enums import DecidedBy, OnExpiry, PauseAnswerer
from agboss.interpreters import ReplyInterpreterHandler
from agboss.mcp import McpArguments

__all__ = ["ChannelRules"]


class ChannelRules(Walk):
    """The channel rules, mixed into the assembler."""

    # ---- channels ------------------------------------------------------------------

    def check_channels(self, app_spec: ApplicationSpec) -> dict[type[Any], ToolChannel]:
        listed = [cls for cls in app_spec.channels if spec_of(cls, ChannelSpec) is not None]
        self.chosen = self._choices()
        asked: set[type[Any]] = set()  # the roles a tool or a ladder asks
        for cls in listed:  # the roles the listed channels implement take part too
            for base in cls.__mro__[1:]:
                role_spec = spec_of(base, ChannelRoleSpec)
                if role_spec is not None:
                    self.components.setdefault(base, role_spec)
        targets = self._escalation_targets(listed)
        asked.update(targets)
        handoff_roles = self._handoff_roles(listed)
        tool_channels: dict[type[Any], ToolChannel] = {}
        for cls, spec in list(self.components.items()):
            if not isinstance(spec, ToolSpec):
                continue
            if spec.channel is None:
                if spec.expires_after is not None or spec.on_expiry is not None:
                    self.violate(
                        "tool.expiry-without-channel",
                        spec.name,
                        "declares a deadline (expires_after= / on_expiry=) but has no channel "
                        "to ask; name a channel=, or drop the deadline",
                    )
                continue
            named = spec.channel
            role = spec_of(named, ChannelRoleSpec)
            if role is not None:
                self.components.setdefault(named, role)
                if role.approves is None:
                    self.violate(
                        "tool.question-role",
                        spec.name,
                        f"names the question role {role.name}; a tool can only name an "
                        "approval role (approves=...) today",
                    )
                    continue
                if role.approves is not spec.input and not _approves_mcp(role, spec):
                    self.violate(
                        "channel.approves-mismatch",
                        spec.name,
                        f"takes {spec.input.__name__} but its channel {role.name} approves "
                        f"{role.approves.__name__}; they must be the same DTO",
                    )
                asked.add(named)
                if named in self.refused_choices:
                    continue
                implementations = self._implementations(named, listed)
                if not implementations:
                    self.violate(
                        "channel.role-unimplemented",
                        role.name,
                        f"{spec.name} asks it, but no @channel in channels=[...] implements it; "
                        f"add a @channel class that subclasses {named.__qualname__}",
                    )
                    continue
                if len(implementations) > 1:
                    self.violate(
                        "channel.role-ambiguous",
                        role.name,
                        f"{spec.name} asks it: " + _ambiguity(named, implementations),
                    )
                    continue
                expires_after, on_expiry = self._deadline(spec, role)
                self._ladder_within(spec, role, expires_after)
                # An escalated question keeps its deadline, what it decides, and its ladder.
                escalations = tuple(
                    ToolChannel(
                        step.to,
                        targets[step.to][0],
                        targets[step.to][1].name,
                        targets[step.to][1].answered_by,
                        targets[step.to][1],
                        expires_after,
                        on_expiry,
                        role.ladder,
                    )
                    for step in role.ladder
                    if isinstance(step, Escalate) and step.to in targets
                )
                declared = ToolChannel(
                    named,
                    implementations[0],
                    role.name,
                    role.answered_by,
                    role,
                    expires_after,
                    on_expiry,
                    role.ladder,
                    escalations,
                )
                # A question handed on keeps them too, and its ladder's escalations.
                handed = _handoffs(handoff_roles, spec, named, declared)
                tool_channels[cls] = replace(declared, handoffs=handed)
            else:
                concrete = spec_of(named, ChannelSpec)
                if concrete is None:
                    continue  # reported by tool.channel-not-a-channel
                self.components.setdefault(named, concrete)
                expires_after, on_expiry = self._deadline(spec, None)
                declared = ToolChannel(
                    named,
                    named,
                    concrete.name,
                    PauseAnswerer.THREAD_OWNER,
                    None,
                    expires_after,
                    on_expiry,
                )
                handed = _handoffs(handoff_roles, spec, named, declared)
                tool_channels[cls] = replace(declared, handoffs=handed)
        self.check_interpreters()
        for role_cls in self.chosen.keys() - asked:
            self.violate(
                "channel.choice-unused",
                spec_of(role_cls, ChannelRoleSpec).name,  # type: ignore[union-attr]
                "App.create(channels=...) chooses an implementation for it, but no tool of "
                "the application asks it; remove the choice, or key it by the role a tool names",
            )
        return tool_channels

    # ---- which implementation answers a role ----------------------------------------

    def _choices(self) -> dict[type[Any], type[Any]]:
        """The valid choices of `App.create(channels=...)`; a violation for each other one."""
        valid: dict[type[Any], type[Any]] = {}
        for role_cls, picked in self.chosen.items():
            self.refused_choices.add(role_cls)  # until it proves valid
            role = spec_of(role_cls, ChannelRoleSpec)
            shown = getattr(picked, "__qualname__", repr(picked))
            if role is None:
                label = getattr(role_cls, "__qualname__", repr(role_cls))
                self.violate(
                    "channel.choice-not-a-role",
                    label,
                    f"App.create(channels=...) chooses {shown} for it, but it is not a "
                    "@channel_role class; key each choice by the role a tool names",
                )
                continue
            concrete = spec_of(picked, ChannelSpec)
            if concrete is None:
                self.violate(
                    "channel.choice-not-a-channel",
                    role.name,
                    f"App.create(channels=...) chooses {shown} for it, which is not a @channel "
                    f"class; choose a @channel class that subclasses {role_cls.__qualname__}",
                )
                continue
            if not (issubclass(picked, role_cls) or _takes_any(picked, role)):
                self.violate(
                    "channel.choice-not-implementing",
                    role.name,
                    f"App.create(channels=...) chooses {concrete.name}, which does not "
                    f"implement it; choose a @channel class that subclasses "
                    f"{role_cls.__qualname__}, or one that takes any question "
                    "(AutoApproveChannel, AutoRejectChannel, TerminalUserChannel)",
                )
                continue
            self.components.setdefault(picked, concrete)
            self.refused_choices.discard(role_cls)
            valid[role_cls] = picked
        return valid

    def _implementations(self, role_cls: type[Any], listed: list[type[Any]]) -> list[type[Any]]:
        """The channels that may answer a role: the one chosen at `App.create`, else the
        listed ones that implement it."""
        picked = self.chosen.get(role_cls)
        if picked is not None:
            return [picked]
        return [cls for cls in listed if issubclass(cls, role_cls)]

    def _deadline(
        self, tool: ToolSpec, role: ChannelRoleSpec | None
    ) -> tuple[timedelta | None, OnExpiry]:
        """A tool's questions' deadline and what it decides: the tool's over its role's."""
        expires_after = tool.expires_after
        if expires_after is None and role is not None:
            expires_after = role.expires_after
        on_expiry = tool.on_expiry or (role.on_expiry if role is not None else OnExpiry.REJECT)
        owner = tool.name if tool.expires_after is not None or role is None else role.name
        rule = "tool" if owner == tool.name else "channel"
        if expires_after is not None and expires_after <= timedelta(0):
            self.violate(
                f"{rule}.expiry-not-positive",
                owner,
                f"expires_after={expires_after!r} must be a positive timedelta",
            )
        elif (
            expires_after is not None
            and tool.timeout is not None
            and (expires_after <= tool.timeout)
        ):
            self.violate(
                "tool.expiry-before-timeout",
                tool.name,
                f"its questions expire after {expires_after}, no later than its channel's send "
                f"may take (its timeout, {tool.timeout}); give a deadline longer than the "
                "timeout",
            )
        if tool.on_expiry is OnExpiry.APPROVE and (
            role is None or role.on_expiry is not OnExpiry.APPROVE
        ):
            self.violate(
                "tool.approve-on-expiry",
                tool.name,
                "on_expiry=OnExpiry.APPROVE makes silence a yes, which only its channel role "
                "may allow: declare on_expiry=OnExpiry.APPROVE on the role, or reject or "
                "withdraw here",
            )
        return expires_after, on_expiry

    def _ladder_within(
        self, tool: ToolSpec, role: ChannelRoleSpec, expires_after: timedelta | None
    ) -> None:
        """A tool's own deadline must leave its role's ladder room to happen."""
        if tool.expires_after is None or expires_after is None:
            return  # the role's own deadline is checked with the role
        late = [step.after for step in role.ladder if step.after >= expires_after]
        if late:
            self.violate(
                "tool.ladder-past-deadline",
                tool.name,
                f"its questions expire after {expires_after}, but its channel {role.name}'s "
                f"ladder has a step {late[0]} after asking, which would never happen; "
                "give the tool a deadline after the ladder's last step",
            )

    def _handoff_roles(
        self, listed: list[type[Any]]
    ) -> list[tuple[type[Any], type[Any], ChannelRoleSpec]]:
        """The approval roles a question may be handed to (`App.reassign`): each with its one
        implementation in ``channels=[...]`` (a role with none, or several, is asked by no
        one, and said so where a tool or a ladder names it)."""
        found: list[tuple[type[Any], type[Any], ChannelRoleSpec]] = []
        for cls, spec in list(self.components.items()):
            if not isinstance(spec, ChannelRoleSpec) or spec.approves is None:
                continue
            if cls in self.refused_choices:
                continue
            implementations = self._implementations(cls, listed)
            if len(implementations) == 1:
                found.append((cls, implementations[0], spec))
        return found

    def _escalation_targets(
        self, listed: list[type[Any]]
    ) -> dict[type[Any], tuple[type[Any], ChannelRoleSpec]]:
        """The roles the ladders escalate to, each with its one implementation in
        ``channels=[...]``; a violation for each `Escalate` step that cannot ask its role."""
        targets: dict[type[Any], tuple[type[Any], ChannelRoleSpec]] = {}
        for cls, spec in list(self.components.items()):
            if not isinstance(spec, ChannelRoleSpec):
                continue
            for step in spec.ladder:
                if not isinstance(step, Escalate):
                    continue
                found = self._escalation_target(cls, spec, step, listed)
                if found is not None:
                    targets[step.to] = found
        return targets

    def _escalation_target(
        self, cls: type[Any], role: ChannelRoleSpec, step: Escalate, listed: list[type[Any]]
    ) -> tuple[type[Any], ChannelRoleSpec] | None:
        target = spec_of(step.to, ChannelRoleSpec)
        to = getattr(step.to, "__qualname__", repr(step.to))
        if target is None:
            self.violate(
                "channel.escalate-not-a-role",
                role.name,
                f"its ladder escalates to {to}, which is not a @channel_role class; name the "
                "role whose channel is asked instead",
            )
            return None
        if step.to is cls:
            self.violate(
                "channel.escalate-to-self",
                role.name,
                "its ladder escalates to itself; name another role, or remind (Remind) instead",
            )
            return None
        if target.approves is None or target.approves is not role.approves:
            approves = "nothing" if target.approves is None else target.approves.__name__
            self.violate(
                "channel.escalate-approves-mismatch",
                role.name,
                f"its ladder escalates to {target.name}, which approves {approves}, not "
                f"{role.approves.__name__ if role.approves else 'what it approves'}; escalate to "
                "a role that approves the same DTO",
            )
            return None
        if step.to in self.refused_choices:
            return None
        implementations = self._implementations(step.to, listed)
        if not implementations:
            self.violate(
                "channel.escalate-unimplemented",
                role.name,
                f"its ladder escalates to {target.name}, which no @channel in channels=[...] "
                f"implements; add one that subclasses {to}",
            )
            return None
        if len(implementations) > 1:
            self.violate(
                "channel.escalate-unimplemented",
                role.name,
                f"its ladder escalates to {target.name}: " + _ambiguity(step.to, implementations),
            )
            return None
        self.components.setdefault(step.to, target)
        return implementations[0], target

    def check_ladder(self, role: ChannelRoleSpec) -> None:
        """A role's ladder: its steps at positive times, in increasing order, before its
        deadline (that they are steps is the argument types' rule)."""
        previous = timedelta(0)
        for place, step in enumerate(role.ladder, start=1):
            if step.after <= timedelta(0):
                self.violate(
                    "channel.ladder-not-positive",
                    role.name,
                    f"ladder step {place} is at {step.after!r}; each step is a positive time "
                    "after the question was asked",
                )
                return
            if step.after <= previous:
                self.violate(
                    "channel.ladder-not-increasing",
                    role.name,
                    f"ladder step {place} is at {step.after}, not after the step before it "
                    f"({previous}); list the steps in the order of their times",
                )
                return
            if role.expires_after is not None and step.after >= role.expires_after:
                self.violate(
                    "channel.ladder-past-deadline",
                    role.name,
                    f"ladder step {place} is at {step.after}, not before its questions' "
                    f"deadline ({role.expires_after}), so it would never happen; move it "
                    "before the deadline, or drop it",
                )
                return
            previous = step.after

    def check_quorum(self, role: ChannelRoleSpec) -> None:
        """A role's ``approvals=`` and ``distinct_from_owner=``: a count of at least one, on an
        approval role, with voters named where the answerer alone could not make it (that
        ``approvals`` is a number or a `Quorum` is the argument types' rule)."""
        if isinstance(role.approvals, bool) or not isinstance(role.approvals, Quorum | int | None):
            return  # [channel-role.argument-type] says it
        quorum = role.quorum
        owner_role = role.answered_by is PauseAnswerer.THREAD_OWNER
        if quorum is None:
            if role.distinct_from_owner and owner_role:
                self.violate(
                    "channel.distinct-owner-alone",
                    role.name,
                    "is answered by the thread's owner and refuses the thread's owner "
                    "(distinct_from_owner=True), so nobody could answer; give it "
                    "approvals=Quorum(1, of=...) naming who answers, or drop one of them",
                )
            return
        for problem in _quorum_problems(quorum, owner_role):
            self.violate("channel.quorum", role.name, problem)
        if role.asks is not None or role.answers is not None:
            self.violate(
                "channel.quorum",
                role.name,
                "is a question role (asks= / answers=); approvals= counts votes to approve a "
                "call, so only an approval role (approves=) takes it",
            )

    def check_claims(self, role: ChannelRoleSpec) -> None:
        """A role's ``claims=``: a `Claims` whose claims hold for a positive time."""
        claims = role.claims
        if not isinstance(claims, Claims):
            self.violate(
                "channel.claims", role.name, f"claims={claims!r} is not a Claims(lasts=...)"
            )
        elif not isinstance(claims.lasts, timedelta) or claims.lasts <= timedelta(0):
            self.violate(
                "channel.claims",
                role.name,
                f"Claims(lasts={claims.lasts!r}) must hold for a positive timedelta",
            )

    def check_roles(self) -> None:
        for spec in list(self.components.values()):
            if not isinstance(spec, ChannelRoleSpec):
                continue
            self.check_ladder(spec)
            self.check_quorum(spec)
            self.check_claims(spec)
            question = spec.asks is not None or spec.answers is not None
            if (spec.approves is None) == (not question) or (
                question and (spec.asks is None or spec.answers is None)
            ):
                self.violate(
                    "channel-role.shape",
                    spec.name,
                    "a role names either approves= (an approval role) or both asks= and "
                    "answers= (a question role)",
                )

    def check_interpreters(self) -> None:
        self.check_roles()
        owners: dict[type[Any], list[str]] = {}
        for spec in list(self.components.values()):
            if isinstance(spec, ChannelRoleSpec) and spec.reply_interpreter is not None:
                owners.setdefault(spec.reply_interpreter, []).append(spec.name)
                interpreter = spec_of(spec.reply_interpreter, ReplyInterpreterSpec)
                if interpreter is None:
                    self.violate(
                        "reply-interpreter.not-an-interpreter",
                        spec.name,
                        f"reply_interpreter={spec.reply_interpreter.__qualname__} is not a "
                        "@reply_interpreter class; decorate it with @reply_interpreter(...)",
                    )
                else:
                    self.components.setdefault(spec.reply_interpreter, interpreter)
                    self.check_interpreter(spec, spec.reply_interpreter, interpreter)
        for cls, roles in owners.items():
            if len(roles) > 1:
                self.violate(
                    "channel.shared-interpreter",
                    cls.__qualname__,
                    f"is the reply interpreter of {len(roles)} roles ({', '.join(roles)}); "
                    "one interpreter belongs to one role: give each role its own class",
                )

    def check_interpreter(
        self, role: ChannelRoleSpec, cls: type[Any], spec: ReplyInterpreterSpec
    ) -> None:
        if spec.decided_by is DecidedBy.CODE:
            method = getattr(cls, "interpret", None)
            inherited = getattr(ReplyInterpreterHandler, "interpret", None)
            if method is None or method is inherited or inspect.isabstract(cls):
                self.violate(
                    "reply-interpreter.no-interpret-method",
                    spec.name,
                    f"is DecidedBy.CODE but {cls.__qualname__} does not implement "
                    "interpret(input); subclass ReplyInterpreterHandler[Args] and define it",
                )
            return
        if spec.model is None:
            self.violate(
                "reply-interpreter.no-model",
                spec.name,
                "is DecidedBy.MODEL but names no model; add model='provider/model-name'",
            )
            return
        if role.approves is None and self.resolver.decision_model(spec.model) is not None:
            answer = role.answers.__name__ if role.answers is not None else "its answer DTO"
            self.violate(
                "reply-interpreter.decision-model",
                spec.name,
                f"reads replies of the question role {role.name} on the decision model "
                f"{spec.model!r}, which only answers yes / no; {answer} needs more than a "
                "yes / no can give: use a chat model",
            )


def _quorum_problems(quorum: Quorum, owner_role: bool) -> list[str]:
    """What is wrong with a role's quorum, a sentence each."""
    problems = []
    needed = quorum.needed
    if not isinstance(needed, int) or isinstance(needed, bool) or needed < 1:
        problems.append(f"Quorum(needed={needed!r}) is not a whole number of at least 1")
        needed = 1
    if not isinstance(quorum.rejection_decides, bool):
        problems.append(f"rejection_decides={quorum.rejection_decides!r} is not True or False")
    voters = quorum.of
    if voters is None:
        if owner_role:
            problems.append(
                "is answered by the thread's owner, who is one person, so its quorum names who "
                "votes: approvals=Quorum(n, of=[...]) (each votes with owner_id=)"
            )
    elif not callable(voters):
        named = list(voters) if isinstance(voters, tuple) else None
        if named is None or not all(isinstance(v, str) and v.strip() for v in named):
            problems.append(
                f"Quorum(of={voters!r}) is neither a list of answerer ids (non-blank strings) "
                "nor a function of the QuorumAsk that returns them"
            )
        elif len(set(named)) < needed:
            problems.append(
                f"Quorum(of=...) names {len(set(named))} voter(s), fewer than the {needed} "
                "approvals it needs, so no question could ever be approved"
            )
    return problems


def _handoffs(
    roles: list[tuple[type[Any], type[Any], ChannelRoleSpec]],
    tool: ToolSpec,
    named: type[Any],
    declared: ToolChannel,
) -> tuple[ToolChannel, ...]:
    """The channels a tool's questions may be handed to (`App.reassign`): each other role of
    ``roles`` that approves its calls, keeping what ``declared`` (the channel the tool names)
    gives a question — its deadline, what it decides, its ladder and escalations."""
    return tuple(
        replace(
            declared,
            named=other,
            implementation=implementation,
            name=other_spec.name,
            answered_by=other_spec.answered_by,
            role=other_spec,
            handoffs=(),
        )
        for other, implementation, other_spec in roles
        if other is not named and _takes_tool(other_spec, tool)
    )


def _takes_tool(role: ChannelRoleSpec, tool: ToolSpec) -> bool:
    """Whether a role approves a tool's calls: the same DTO, or an MCP tool's."""
    return role.approves is tool.input or _approves_mcp(role, tool)


def _approves_mcp(role: ChannelRoleSpec, tool: ToolSpec) -> bool:
    """Whether a role approves an MCP tool: it approves `McpArguments`, which every MCP
    tool's input (its server's schema) is."""
    return role.approves is McpArguments and issubclass(tool.input, McpArguments)


def _ambiguity(role_cls: type[Any], implementations: list[type[Any]]) -> str:
    names = ", ".join(spec_of(c, ChannelSpec).name for c in implementations)  # type: ignore[union-attr]
    return (
        f"{len(implementations)} channels implement it ({names}) and none is chosen; choose one "
        f"for this instance with App.create(channels={{{role_cls.__qualname__}: ...}}), or "
        "list only one of them"
    )


def _takes_any(channel: type[Any], role: ChannelRoleSpec) -> bool:
    """Whether a concrete channel takes the questions of any role that approves what ``role``
    approves (a `ChannelHandler` over a base of its DTO, such as `AutoApproveChannel`'s)."""
    for cls in channel.__mro__:
        for base in getattr(cls, "__orig_bases__", ()):
            if typing.get_origin(base) is ChannelHandler:
                [takes] = typing.get_args(base)
                return (
                    isinstance(takes, type)
                    and role.approves is not None
                    and issubclass(role.approves, takes)
                )
    return False
