"""A compiled PII policy, a tree's tokens, and the seam every model call goes through.

`PiiSeam.to_model` is what a model reads: the sensitive values the engine knows (the marked
fields of the DTOs on their way to the model) and what the detectors find in the text, each
replaced by its rule's action. `PiiSeam.reveal` turns the model's tokens back into the real
values before its answer is validated. `PiiPolicy.outside` is what leaves the process (pending
asks, events, records, channels): every sensitive value masked, whatever its rule.
"""

from __future__ import annotations

import json
import re
import typing
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel

from agboss.errors import PiiRefusedError
from agboss.pii._detect import DETECTORS, Span
from agboss.pii._rules import Pii, PiiAction, PiiRule

__all__ = ["PiiPolicy", "PiiSeam", "TreeTokens", "UnknownTokenError", "marked_values", "masked"]

_FOUND_CACHE = 512
_TOKEN = re.compile(r"<([A-Z][A-Z0-9_]*)_(\d+)>")


def masked(value: str) -> str:
    """A value as everything outside the process shows it: its last four characters at most
    (spaces and dashes left out)."""
    compact = re.sub(r"[\s-]", "", value)
    return "****" + compact[-4:] if len(compact) >= 10 else "****"


def _kind_label(kind: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", kind.upper()).strip("_") or "PII"


@cache
def _marks(dto: type[BaseModel]) -> tuple[tuple[str, str | None, Any], ...]:
    """A DTO's fields that hold personal data or DTOs that may: ``(name, kind, nested)``."""
    found = []
    for name, info in dto.model_fields.items():
        kind = next((m.kind for m in info.metadata if isinstance(m, Pii)), None)
        nested = _nested(info.annotation)
        if kind is not None or nested:
            found.append((info.alias or name, kind, nested))
    return tuple(found)


def _nested(annotation: Any) -> tuple[type[BaseModel], ...]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return (annotation,)
    return tuple(model for argument in typing.get_args(annotation) for model in _nested(argument))


def marked_values(data: Any, dto: type[BaseModel] | None) -> list[tuple[str, str]]:
    """The ``(value, kind)`` of every marked field in a DTO, or in its JSON-like dump."""
    if dto is None or not _marks(dto):
        return []
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json", by_alias=True)
    found: list[tuple[str, str]] = []
    _walk(data, dto, found)
    return found


def _walk(data: Any, dto: type[BaseModel], found: list[tuple[str, str]]) -> None:
    if isinstance(data, list | tuple):
        for item in data:
            _walk(item, dto, found)
        return
    if not isinstance(data, dict):
        return
    for name, kind, nested in _marks(dto):
        value = data.get(name)
        if kind is not None:
            for text in _strings(value):
                if text:
                    found.append((text, kind))
        for model in nested:
            _walk(value, model, found)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


class UnknownTokenError(Exception):
    """A model's answer names a token this tree never issued."""

    def __init__(self, token: str) -> None:
        self.token = token
        super().__init__(f"the answer names {token}, a token nobody issued")


@dataclass
class TreeTokens:
    """A tree's tokens: what each stands for, read from the store when first needed (``load``);
    the ones issued since, to be stored with the pass's next commit."""

    known: dict[str, str] = field(default_factory=dict)
    issued: list[tuple[str, str]] = field(default_factory=list)
    load: Callable[[], Awaitable[dict[str, str]]] | None = None

    def __post_init__(self) -> None:
        self._by_value = {value: token for token, value in self.known.items()}
        self._counts: dict[str, int] = {}
        for token in self.known:
            self._count(token)

    def _count(self, token: str) -> None:
        found = _TOKEN.fullmatch(token)
        if found is not None:
            label, number = found.group(1), int(found.group(2))
            self._counts[label] = max(self._counts.get(label, 0), number)

    async def ready(self) -> None:
        """Reads the stored tokens, once: before a token is issued or revealed."""
        if self.load is not None:
            load, self.load = self.load, None
            for token, value in (await load()).items():
                self.known.setdefault(token, value)
                self._by_value.setdefault(value, token)
                self._count(token)

    def token_for(self, value: str, kind: str) -> str:
        assert self.load is None, "the tree's stored tokens are read first (ready())"
        found = self._by_value.get(value)
        if found is not None:
            return found
        label = _kind_label(kind)
        number = self._counts.get(label, 0) + 1
        self._counts[label] = number
        token = f"<{label}_{number}>"
        self.known[token] = value
        self._by_value[value] = token
        self.issued.append((token, value))
        return token

    def take_issued(self) -> list[tuple[str, str]]:
        issued, self.issued = self.issued, []
        return issued


@dataclass(frozen=True)
class PiiPolicy:
    """The rules in force for one workflow's executions, by kind."""

    rules: dict[str, PiiRule]
    _found: OrderedDict[str, list[tuple[Span, str]]] = field(
        default_factory=OrderedDict, compare=False, repr=False
    )
    """What the detectors found in recent texts: a conversation's prompt and input are sent
    again on every turn and every pass."""

    @classmethod
    def of(cls, *layers: Sequence[PiiRule]) -> PiiPolicy:
        """The policy of rule lists, a later list's rule for a kind replacing an earlier's."""
        rules: dict[str, PiiRule] = {}
        for layer in layers:
            for rule in layer:
                rules[rule.kind] = rule
        return cls(rules)

    @property
    def active(self) -> bool:
        return bool(self.rules)

    def action(self, kind: str) -> PiiAction:
        """A kind's action; a marked field whose kind no rule covers is masked."""
        rule = self.rules.get(kind)
        return PiiAction.MASK if rule is None else rule.action

    def detected(self, text: str) -> list[tuple[Span, str]]:
        """What the detectors of the rules in force find in a text, without overlaps."""
        found = self._found.get(text)
        if found is not None:
            self._found.move_to_end(text)
            return found
        found = self._detect(text)
        self._found[text] = found
        if len(self._found) > _FOUND_CACHE:
            self._found.popitem(last=False)
        return found

    def _detect(self, text: str) -> list[tuple[Span, str]]:
        spans: list[tuple[Span, str]] = []
        for kind, rule in self.rules.items():
            detector = DETECTORS.get(kind)
            if rule.detect and detector is not None:
                spans += [(span, kind) for span in detector(text)]
        spans.sort(key=lambda item: (item[0][0], -item[0][1]))
        kept: list[tuple[Span, str]] = []
        for span, kind in spans:
            if not kept or span[0] >= kept[-1][0][1]:
                kept.append((span, kind))
        return kept

    def outside(self, text: str, values: Sequence[tuple[str, str]] = ()) -> str:
        """A text as it may leave the process: known values and detected ones masked."""
        for value, _ in sorted(values, key=lambda item: -len(item[0])):
            text = _replace(text, value, masked(value))
        return _substitute(text, self.detected(text), lambda value, kind: masked(value))

    def outside_value(self, data: Any, dto: type[BaseModel] | None) -> Any:
        """A JSON-like value (a tool's arguments) as it may leave the process."""
        values = marked_values(data, dto)
        return _map_strings(data, lambda text: self.outside(text, values))


def _replace(text: str, value: str, by: str) -> str:
    text = text.replace(value, by)
    escaped = json.dumps(value, ensure_ascii=False)[1:-1]
    return text.replace(escaped, by) if escaped != value else text


def _substitute(text: str, spans: list[tuple[Span, str]], by: Any) -> str:
    for (start, end), kind in reversed(spans):
        text = text[:start] + by(text[start:end], kind) + text[end:]
    return text


def _map_strings(data: Any, change: Any) -> Any:
    if isinstance(data, str):
        return change(data)
    if isinstance(data, list):
        return [_map_strings(item, change) for item in data]
    if isinstance(data, tuple):
        return tuple(_map_strings(item, change) for item in data)
    if isinstance(data, dict):
        return {key: _map_strings(item, change) for key, item in data.items()}
    return data


@dataclass
class PiiSeam:
    """One model call's view: the policy, the tree's tokens, the values the engine knows."""

    policy: PiiPolicy
    tokens: TreeTokens
    known: dict[str, str] = field(default_factory=dict)
    """The marked values on their way to the model, and their kinds (each once: a pass
    re-enters the same calls, and tools return the same values)."""
    _seen: dict[tuple[str, int], str] = field(default_factory=dict)
    """Texts already shown to the model, by the number of values known then: a conversation
    sends its earlier messages again on every turn."""

    @property
    def values(self) -> list[tuple[str, str]]:
        """The known ``(value, kind)`` pairs."""
        return list(self.known.items())

    def know(self, data: Any, dto: type[BaseModel] | None) -> None:
        """Registers the marked fields of a DTO on its way to the model."""
        for value, kind in marked_values(data, dto):
            self.known.setdefault(value, kind)

    def to_model(self, text: str) -> str:
        """The text as the model may read it.

        Raises:
            PiiRefusedError: It holds a value a `block_with_refusal` rule covers.
        """
        if not text:
            return text
        key = (text, len(self.known))
        shown = self._seen.get(key)
        if shown is None:
            shown = self._seen[key] = self._shown_text(text)
        return shown

    def _shown_text(self, text: str) -> str:
        for value, kind in sorted(self.known.items(), key=lambda item: -len(item[0])):
            if value in text or json.dumps(value, ensure_ascii=False)[1:-1] in text:
                text = _replace(text, value, self._shown(value, kind))
        spans = [
            (span, kind)
            for span, kind in self.policy.detected(text)
            if not _TOKEN.fullmatch(text[span[0] : span[1]])
        ]
        return _substitute(text, spans, self._shown)

    def _shown(self, value: str, kind: str) -> str:
        action = self.policy.action(kind)
        if action is PiiAction.BLOCK:
            raise PiiRefusedError(
                f"a model call would read a value of kind {kind!r}, which a "
                "block_with_refusal() rule keeps from every model",
                hint="take the value out of the agent's input and its tools' results, or "
                "change the rule to replace_with_token() or mask()",
            )
        if action is PiiAction.TOKEN:
            return self.tokens.token_for(value, kind)
        return masked(value)

    async def ready_for(self, texts: Iterable[str]) -> None:
        """Reads the tree's tokens if showing or revealing these texts needs them: a value a
        token rule covers is in them, or a token is (else a pass reads nothing more)."""
        if self.tokens.load is None:
            return
        tokening = {k for k, r in self.policy.rules.items() if r.action is PiiAction.TOKEN}
        if any(kind in tokening for kind in self.known.values()):
            await self.tokens.ready()  # a known value a token rule covers: it gets its token
            return
        for text in texts:
            if text and (
                _TOKEN.search(text)
                or (tokening and any(kind in tokening for _, kind in self.policy.detected(text)))
            ):
                await self.tokens.ready()
                return

    def reveal(self, text: str) -> str:
        """A model's text with its tokens turned back into values.

        Raises:
            UnknownTokenError: It names a token of a kind in force that was never issued.
        """
        if "<" not in text:
            return text
        labels = {_kind_label(kind) for kind in self.policy.rules}

        def real(match: re.Match[str]) -> str:
            token = match.group()
            found = self.tokens.known.get(token)
            if found is not None:
                return found
            if match.group(1) in labels:
                raise UnknownTokenError(token)
            return token

        return _TOKEN.sub(real, text)

    def reveal_value(self, data: Any) -> Any:
        """`reveal` over every string of a JSON-like value."""
        return _map_strings(data, self.reveal)

    def reveal_json(self, text: str) -> str:
        """A model's JSON arguments with their tokens revealed (as JSON again: a value with
        quotes in it stays one string)."""
        if "<" not in text:
            return text
        try:
            data = json.loads(text)
        except ValueError:
            return self.reveal(text)
        return json.dumps(self.reveal_value(data), ensure_ascii=False)
