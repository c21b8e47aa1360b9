"""What a workflow's journal depends on, as a fingerprint: the same fingerprint, the same
journal semantics.

A tree's journal names its flow's nodes, its agents' tools, the tools' inputs and outputs and
the roles their questions wait on. A build that changes any of them reads an old journal
differently; one that changes a prompt, a model or a timeout does not. Each of those parts is
described as plain data and digested on its own (``flow``, ``agent:<name>``, ``tool:<name>``,
``role:<name>``, ``workflow:<child>``), so that two builds' fingerprints differ exactly when a
part does, and the parts say which.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from agboss.assembly._definitions import ToolChannel, WorkflowDefinition
from agboss.components import AgentSpec, ComponentSpec, Quorum, ToolSpec, WorkflowSpec
from agboss.flow import FlowGraph, StepKind
from agboss.mcp import McpServer

__all__ = ["fingerprint_of", "parts_of"]


def _schema(model: type[BaseModel] | None) -> Any:
    return None if model is None else model.model_json_schema()


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _named(value: object) -> str:
    """A function (a quorum's voters) by its qualified name (never its ``repr``: an
    address)."""
    named = getattr(value, "__qualname__", type(value).__qualname__)
    return f"{getattr(value, '__module__', '')}.{named}"


def _quorum(quorum: Quorum | None) -> Any:
    if quorum is None:
        return None
    voters = quorum.of
    return {
        "needed": quorum.needed,
        "of": None
        if voters is None
        else list(voters)
        if isinstance(voters, tuple)
        else _named(voters),
        "rejection_decides": quorum.rejection_decides,
    }


def _flow(graph: FlowGraph) -> list[Any]:
    nodes = []
    for node in sorted(graph.nodes.values(), key=lambda node: node.node_id):
        launch = node.launch
        # A group names its branches by component (assembly checked they are the launch's).
        named = {} if launch is None else {b.component: b.name for b in launch.branches}
        nodes.append(
            {
                "id": node.node_id,
                "kind": node.kind.value,
                "name": node.name,
                "input": _schema(node.input),
                "output": _schema(node.output),
                "next": node.next,
                "launch": None
                if launch is None
                else {
                    "branches": [(b.name, b.workflow, _schema(b.output)) for b in launch.branches],
                    "over": launch.over,
                    "failure": launch.failure.value,
                    "join": launch.join_name,
                    "groups": [
                        (group.name, [named[b] for b in group.branches], group.min)
                        for group in launch.groups
                    ],
                },
            }
        )
    return nodes


def _components(graph: FlowGraph) -> Iterator[type[Any]]:
    """The components a flow runs: each agent or child workflow."""
    for node in graph.nodes.values():
        if node.kind in (StepKind.AGENT, StepKind.WORKFLOW) and node.component is not None:
            yield node.component
        if node.launch is not None:
            yield from (branch.component for branch in node.launch.branches)


def parts_of(
    definition: WorkflowDefinition,
    components: Mapping[type[Any], ComponentSpec],
    tool_channels: Mapping[type[Any], ToolChannel],
    agent_tools: Mapping[str, Mapping[str, tuple[type[Any], ToolSpec]]],
) -> dict[str, str]:
    """Each part of what ``definition``'s journal depends on, with its digest."""
    parts = {"flow": _digest(_flow(definition.graph))}
    for component in _components(definition.graph):
        spec = components[component]  # every component a compiled flow runs was taken
        if isinstance(spec, WorkflowSpec):
            # A child is its own tree of executions: its name and version stand for it.
            parts[f"workflow:{spec.name}"] = _digest(spec.version)
        elif isinstance(spec, AgentSpec):
            tools = agent_tools.get(spec.name, {})
            servers = sorted(t.name for t in spec.tools if isinstance(t, McpServer))
            parts[f"agent:{spec.name}"] = _digest(
                {
                    "tools": sorted(tools),
                    "servers": servers,
                    "input": _schema(spec.input),
                    "output": _schema(spec.output),
                }
            )
            for name, (tool, tool_spec) in tools.items():
                channel = tool_channels.get(tool)
                parts[f"tool:{name}"] = _digest(
                    {
                        "input": _schema(tool_spec.input),
                        "output": _schema(tool_spec.output),
                        "channel": None if channel is None else channel.name,
                        "on_interrupted": tool_spec.on_interrupted.value,
                    }
                )
                if channel is not None and channel.role is not None:
                    role = channel.role
                    parts[f"role:{channel.name}"] = _digest(
                        {
                            "answered_by": role.answered_by.value,
                            "approves": _schema(role.approves),
                            "asks": _schema(role.asks),
                            "answers": _schema(role.answers),
                            "approvals": _quorum(role.quorum),
                        }
                    )
    return parts


def fingerprint_of(parts: Mapping[str, str]) -> str:
    """One digest of every part: equal for two builds exactly when every part is."""
    return _digest(sorted(parts.items()))
