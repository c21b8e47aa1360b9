"""A pause's reference: the name a screen, a Slack button or a link may carry, in place of its
secret id."""

from __future__ import annotations

import hashlib
import re
from typing import Final

__all__ = ["is_pause_ref", "pause_ref"]

_PREFIX: Final = "ref_"
_SHAPE: Final = re.compile(r"ref_[0-9a-f]{32}")


def pause_ref(pause_id: str) -> str:
    """A pause's reference: ``ref_`` and 128 bits of SHA-256 of its id.

    One-way, so it tells nothing of the id (128 random bits): it may travel where the id must
    not — in a URL's place, an inbox's body, a Slack button, an access log. It names the pause
    but is no right to answer it: a door maps it back to the pause only after it authenticated
    its caller (`App.pause_id_of`). The same id always gives the same reference, so a channel
    computes it from what ``send`` got (`ChannelAsk.pause_ref`).
    """
    digest = hashlib.sha256(b"agboss pause ref\0" + pause_id.encode("utf-8")).hexdigest()
    return _PREFIX + digest[:32]


def is_pause_ref(text: object) -> bool:
    """Whether ``text`` has a reference's shape (not whether a pause has it)."""
    return isinstance(text, str) and _SHAPE.fullmatch(text) is not None
