"""The fake Slack: a Web API on loopback and interactions posted as Slack posts them."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

from agboss.clock import Clock, SystemClock

__all__ = ["FakeMessage", "FakeSlack", "FakeView", "SlackCall"]

_TRIGGER_SECONDS = 3.0


@dataclass(frozen=True, slots=True)
class SlackCall:
    """One call of the Web API: its method (``chat.update``) and its arguments."""

    method: str
    arguments: Mapping[str, Any]


@dataclass(slots=True)
class FakeMessage:
    """A message as the fake workspace holds it now.

    Attributes:
        channel: Its conversation.
        ts: Its id in the conversation.
        text: Its notification text.
        blocks: Its blocks, as last posted or updated.
        updates: How many times ``chat.update`` changed it.
        thread_ts: The message whose thread it replies in, ``None`` for a message of its own.
    """

    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    updates: int = 0
    thread_ts: str | None = None

    def text_of_blocks(self) -> str:
        """Every text its blocks show, one per line: what a person reads (its buttons'
        labels are `buttons`)."""
        return "\n".join(_texts([b for b in self.blocks if b.get("type") != "actions"]))

    def buttons(self) -> list[str]:
        """The labels of its buttons, in order."""
        return [button["text"]["text"] for button in self._buttons()]

    def _buttons(self) -> list[dict[str, Any]]:
        return [
            element
            for block in self.blocks
            if block.get("type") == "actions"
            for element in block.get("elements", [])
            if element.get("type") == "button"
        ]


@dataclass(slots=True)
class FakeView:
    """A modal opened with ``views.open``.

    Attributes:
        id: Its view id.
        view: The view as it was opened.
        user: Who it was opened for (the user whose click gave the trigger id).
    """

    id: str
    view: dict[str, Any]
    user: str

    def text_of_blocks(self) -> str:
        """Every text its blocks show, one per line."""
        return "\n".join(_texts(self.view.get("blocks", [])))

    def initial_values(self) -> dict[str, Any]:
        """Each input block's pre-filled value (a text, or a selected option's text)."""
        found: dict[str, Any] = {}
        for block in self.view.get("blocks", []):
            element = block.get("element", {})
            if block.get("type") != "input":
                continue
            if "initial_option" in element:
                found[block["block_id"]] = element["initial_option"]["text"]["text"]
            elif "initial_value" in element:
                found[block["block_id"]] = element["initial_value"]
        return found


def _texts(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        if value.get("type") in ("plain_text", "mrkdwn") and isinstance(value.get("text"), str):
            yield value["text"]
            return
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


class _SlackError(Exception):
    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


@dataclass
class _Trigger:
    user: str
    at: float
    used: bool = False


@dataclass
class _State:
    messages: dict[tuple[str, str], FakeMessage] = field(default_factory=dict)
    calls: list[SlackCall] = field(default_factory=list)
    ephemerals: list[dict[str, Any]] = field(default_factory=list)
    views: list[FakeView] = field(default_factory=list)
    triggers: dict[str, _Trigger] = field(default_factory=dict)


class FakeSlack:
    """A Slack workspace on loopback: a real HTTP server that speaks the Web API.

    Args:
        signing_secret: What it signs interactions with (the app's Signing Secret).
        token: The bot token its Web API accepts.
        team_id: The workspace's id in payloads.
        clock: The time interactions are signed at, and trigger ids expire by (the
            application's, so that a test clock agrees with the router's check).
        user_groups: The workspace's user groups (``S…``) and their members, as
            ``usergroups.users.list`` lists them (``no_such_subteam`` for another).
    """

    def __init__(
        self,
        *,
        signing_secret: str = "fake-signing-secret",
        token: str = "xoxb-fake-token",
        team_id: str = "T0AGBOSS",
        clock: Clock | None = None,
        user_groups: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.signing_secret = signing_secret
        self.user_groups = {group: list(users) for group, users in (user_groups or {}).items()}
        self.token = token
        self.team_id = team_id
        self.clock = clock or SystemClock()
        self._state = _State()
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._stalls: dict[str, threading.Event] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- the server -----------------------------------------------------------------------

    def start(self) -> Self:
        """Serves on 127.0.0.1, on a free port."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                if fake._stalled_until_released(self.path):
                    self._reply(200, {"ok": False, "error": "fatal_error"})
                    return
                status, body = fake._serve(
                    self.path, self.headers.get("authorization", ""), self.headers, raw
                )
                self._reply(status, body)

            def do_GET(self) -> None:  # the SDK reads some methods with a query string
                _, _, query = self.path.partition("?")
                status, body = fake._serve(
                    self.path, self.headers.get("authorization", ""), {}, query.encode()
                )
                self._reply(status, body)

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, daemon=True, name="fake-slack"
        )
        self._thread.start()
        return self

    def stall(self, method: str) -> None:
        """Holds every call of ``method`` (``chat.update``) until `release`, then fails it
        without doing it (``fatal_error``): a Slack that hangs while a caller dies."""
        with self._lock:
            self._stalls.setdefault(method, threading.Event())

    def release(self) -> None:
        """Lets the calls `stall` holds fail, and serves the later ones again."""
        with self._lock:
            stalls, self._stalls = self._stalls, {}
        for event in stalls.values():
            event.set()

    def _stalled_until_released(self, path: str) -> bool:
        with self._lock:
            event = self._stalls.get(path.removeprefix("/api/").split("?")[0])
        if event is None:
            return False
        event.wait(timeout=60)
        return True

    def close(self) -> None:
        """Stops serving."""
        self.release()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        """The Web API's base URL, for ``AsyncWebClient(base_url=…)`` or ``SLACK_API_URL``."""
        if self._server is None:
            raise RuntimeError("the fake Slack is not started: use it as a context manager")
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/"

    # ---- what it holds --------------------------------------------------------------------

    @property
    def calls(self) -> list[SlackCall]:
        """Every Web API call, in order."""
        with self._lock:
            return list(self._state.calls)

    def calls_of(self, method: str) -> list[SlackCall]:
        """The calls of one method (``chat.update``), in order."""
        return [call for call in self.calls if call.method == method]

    def messages(self, channel: str | None = None) -> list[FakeMessage]:
        """The messages posted (in ``channel``), oldest first, as they are now — not the
        replies in their threads (`replies`)."""
        with self._lock:
            found = list(self._state.messages.values())
        return [
            m for m in found if m.thread_ts is None and (channel is None or m.channel == channel)
        ]

    def replies(self, ts: str) -> list[FakeMessage]:
        """The replies in the thread of the message with this ``ts``, oldest first."""
        with self._lock:
            found = list(self._state.messages.values())
        return [m for m in found if m.thread_ts == ts]

    def message(self, ts: str) -> FakeMessage:
        """The message with this ``ts``."""
        for message in self.messages():
            if message.ts == ts:
                return message
        raise KeyError(f"no message has ts {ts!r}")

    @property
    def ephemerals(self) -> list[dict[str, Any]]:
        """The ephemeral messages posted: each with ``channel``, ``user`` and ``text``."""
        with self._lock:
            return list(self._state.ephemerals)

    @property
    def views(self) -> list[FakeView]:
        """The modals opened, in order."""
        with self._lock:
            return list(self._state.views)

    # ---- interactions, as Slack posts them ------------------------------------------------

    def signed(self, body: bytes, *, timestamp: int | None = None) -> dict[str, str]:
        """The headers Slack signs a request with (``X-Slack-Signature``)."""
        stamp = str(int(self.clock.now().timestamp()) if timestamp is None else timestamp)
        signature = SignatureVerifier(self.signing_secret).generate_signature(
            timestamp=stamp, body=body
        )
        assert signature is not None
        return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}

    async def post(
        self,
        url: str,
        payload: Mapping[str, Any],
        *,
        retry: int | None = None,
        timestamp: int | None = None,
        signing_secret: str | None = None,
    ) -> httpx.Response:
        """Posts an interaction's payload to ``url`` as Slack does: a form with a JSON
        ``payload`` field, signed (with another secret when ``signing_secret`` is given)."""
        body = urlencode({"payload": json.dumps(payload)}).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        signer = self if signing_secret is None else FakeSlack(signing_secret=signing_secret)
        signer.clock = self.clock
        headers.update(signer.signed(body, timestamp=timestamp))
        if retry is not None:
            headers["X-Slack-Retry-Num"] = str(retry)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        async with httpx.AsyncClient(timeout=10) as client:
            return await client.post(url, content=body, headers=headers)

    def _user(self, user: str) -> dict[str, Any]:
        return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": self.team_id}

    def _trigger(self, user: str) -> str:
        trigger = f"{next(self._numbers)}.{self.team_id}.fake"
        with self._lock:
            self._state.triggers[trigger] = _Trigger(user, self.clock.now().timestamp())
        return trigger

    def click_payload(self, message: FakeMessage, button: str, *, user: str) -> dict[str, Any]:
        """The ``block_actions`` payload of a click on the button labelled ``button``."""
        found = [b for b in message._buttons() if b["text"]["text"] == button]
        if not found:
            raise KeyError(f"the message has no button {button!r}: {message.buttons()}")
        pressed = found[0]
        return {
            "type": "block_actions",
            "team": {"id": self.team_id, "domain": "agboss"},
            "user": self._user(user),
            "api_app_id": "A0AGBOSS",
            "token": "deprecated-verification-token",
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": False,
            },
            "trigger_id": self._trigger(user),
            "channel": {"id": message.channel, "name": "approvals"},
            "message": {
                "type": "message",
                "ts": message.ts,
                "text": message.text,
                "blocks": message.blocks,
            },
            "response_url": f"{self.base_url}response/{message.ts}",
            "actions": [
                {
                    "type": "button",
                    "action_id": pressed["action_id"],
                    "block_id": "agboss.actions",
                    "text": pressed["text"],
                    "value": pressed.get("value", ""),
                    "action_ts": f"{self.clock.now().timestamp():.6f}",
                }
            ],
        }

    async def click(
        self,
        url: str,
        message: FakeMessage,
        button: str,
        *,
        user: str = "U0MANAGER",
        retry: int | None = None,
        timestamp: int | None = None,
        signing_secret: str | None = None,
    ) -> httpx.Response:
        """Clicks the button labelled ``button`` of ``message``, as ``user``: posts the
        interaction to ``url`` (the app's interactions route)."""
        payload = self.click_payload(message, button, user=user)
        return await self.post(
            url, payload, retry=retry, timestamp=timestamp, signing_secret=signing_secret
        )

    async def submit(
        self, url: str, view: FakeView, values: Mapping[str, Any], *, user: str | None = None
    ) -> httpx.Response:
        """Submits a modal with ``values`` (by block id, or by field name for an edit form:
        the text typed, or a select's option text); inputs not named keep their initial value.
        """
        state: dict[str, Any] = {}
        for block in view.view.get("blocks", []):
            if block.get("type") != "input":
                continue
            block_id = block["block_id"]
            name = block_id.removeprefix("field.")
            element = block["element"]
            given = values.get(block_id, values.get(name, _INITIAL))
            state[block_id] = {element["action_id"]: _element_state(element, given)}
        payload = {
            "type": "view_submission",
            "team": {"id": self.team_id, "domain": "agboss"},
            "user": self._user(user or view.user),
            "api_app_id": "A0AGBOSS",
            "trigger_id": self._trigger(user or view.user),
            "view": {
                **view.view,
                "id": view.id,
                "team_id": self.team_id,
                "state": {"values": state},
                "hash": f"{view.id}.hash",
            },
        }
        return await self.post(url, payload)

    # ---- the Web API ----------------------------------------------------------------------

    def _serve(
        self, path: str, authorization: str, headers: Any, raw: bytes
    ) -> tuple[int, dict[str, Any]]:
        method = path.removeprefix("/api/").split("?")[0]
        media = str(headers.get("content-type", ""))
        if media.startswith("application/json"):
            arguments: dict[str, Any] = json.loads(raw or b"{}")
        else:
            arguments = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        with self._lock:
            self._state.calls.append(SlackCall(method, arguments))
        if authorization != f"Bearer {self.token}":
            return 200, {"ok": False, "error": "invalid_auth"}
        handler = _METHODS.get(method)
        if handler is None:
            return 200, {"ok": False, "error": "unknown_method"}
        try:
            with self._lock:
                return 200, {"ok": True, **handler(self, arguments)}
        except _SlackError as error:
            return 200, {"ok": False, "error": error.error}

    def _post_message(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        channel = _required(arguments, "channel")
        blocks = _blocks(arguments)
        ts = f"{1_700_000_000 + next(self._numbers)}.{next(self._numbers):06d}"
        text = str(arguments.get("text", ""))
        thread = arguments.get("thread_ts")
        self._state.messages[(channel, ts)] = FakeMessage(
            channel, ts, text, blocks, thread_ts=None if thread is None else str(thread)
        )
        return {"channel": channel, "ts": ts, "message": {"text": text, "blocks": blocks}}

    def _update(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        channel, ts = _required(arguments, "channel"), _required(arguments, "ts")
        message = self._state.messages.get((channel, ts))
        if message is None:
            raise _SlackError("message_not_found")
        message.blocks = _blocks(arguments)
        message.text = str(arguments.get("text", message.text))
        message.updates += 1
        return {"channel": channel, "ts": ts, "text": message.text}

    def _post_ephemeral(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        channel, user = _required(arguments, "channel"), _required(arguments, "user")
        text = _required(arguments, "text")
        self._state.ephemerals.append({"channel": channel, "user": user, "text": text})
        return {"message_ts": f"{1_700_000_000 + next(self._numbers)}.000000"}

    def _open_view(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        trigger = self._state.triggers.get(_required(arguments, "trigger_id"))
        now = self.clock.now().timestamp()
        if trigger is None or trigger.used:
            raise _SlackError("invalid_trigger_id")
        if now - trigger.at > _TRIGGER_SECONDS:
            raise _SlackError("expired_trigger_id")
        trigger.used = True
        view = arguments.get("view")
        if isinstance(view, str):
            view = json.loads(view)
        if not isinstance(view, dict) or view.get("type") != "modal":
            raise _SlackError("invalid_arguments")
        for key in ("title", "submit", "close"):
            if key in view and len(view[key]["text"]) > 24:
                raise _SlackError("invalid_arguments")
        _check_blocks(view.get("blocks", []), 100)
        opened = FakeView(f"V{next(self._numbers):08d}", view, trigger.user)
        self._state.views.append(opened)
        return {"view": {**view, "id": opened.id}}


_INITIAL = object()


def _element_state(element: Mapping[str, Any], given: object) -> dict[str, Any]:
    kind = element["type"]
    if kind == "static_select":
        option = element.get("initial_option") if given is _INITIAL else None
        for choice in element.get("options", []):
            if given is not _INITIAL and given in (choice["text"]["text"], choice["value"]):
                option = choice
        return {"type": kind, "selected_option": option}
    value = element.get("initial_value") if given is _INITIAL else given
    return {"type": kind, "value": None if value in (None, "") else str(value)}


def _required(arguments: Mapping[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value:
        raise _SlackError(f"missing_{name}" if name != "channel" else "channel_not_found")
    return value


def _blocks(arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    blocks = arguments.get("blocks", [])
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    if not isinstance(blocks, list):
        raise _SlackError("invalid_blocks")
    _check_blocks(blocks, 50)
    return blocks


def _check_blocks(blocks: Sequence[Any], most: int) -> None:
    """Block Kit's limits a wrong message trips first (Slack answers ``invalid_blocks``)."""
    if len(blocks) > most:
        raise _SlackError("invalid_blocks")
    for block in blocks:
        if not isinstance(block, dict) or "type" not in block:
            raise _SlackError("invalid_blocks")
        text = block.get("text")
        if isinstance(text, dict):
            limit = 150 if block["type"] == "header" else 3000
            if len(text.get("text", "")) > limit:
                raise _SlackError("invalid_blocks")
        if len(block.get("fields", [])) > 10:
            raise _SlackError("invalid_blocks")
        for element in block.get("elements", []):
            if len(str(element.get("value", ""))) > 2000:
                raise _SlackError("invalid_blocks")
        if block["type"] == "actions" and len(block.get("elements", [])) > 25:
            raise _SlackError("invalid_blocks")


def _group_users(fake: FakeSlack, arguments: Mapping[str, Any]) -> dict[str, Any]:
    group = _required(arguments, "usergroup")
    if group not in fake.user_groups:
        raise _SlackError("no_such_subteam")
    return {"users": list(fake.user_groups[group])}


_METHODS = {
    "usergroups.users.list": _group_users,
    "chat.postMessage": FakeSlack._post_message,
    "chat.update": FakeSlack._update,
    "chat.postEphemeral": FakeSlack._post_ephemeral,
    "views.open": FakeSlack._open_view,
}
