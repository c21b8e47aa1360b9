"""What a question asks, digested (issue 56): the tool, its definition's fingerprint and the
arguments as asked, in one canonical form — shown wherever the question is shown, recorded with
the decision that answered it, and checked against the call about to run.

The digest is keyed by the question's secret id (an HMAC), so that one shown beside masked
arguments says nothing of the values it covers to whoever cannot answer the question: a few
guessable values under a plain hash could be found by trying them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["SHOWN_DIGEST", "call_digest", "shown_digest"]

SHOWN_DIGEST = 12
"""How many of a digest's characters a page or a message shows."""


def call_digest(key: str, tool: str, definition: str | None, arguments: Mapping[str, Any]) -> str:
    """The digest of a call: ``tool`` as ``definition`` (its part of the build's fingerprint,
    ``None`` when not known) defines it, with ``arguments`` (JSON values), keyed by ``key``
    (the question's secret id); 64 hexadecimal characters.

    Raises:
        ValueError: An argument is no JSON value (NaN, infinity): no call takes it.
    """
    canonical = json.dumps(
        {"v": 1, "tool": tool, "definition": definition, "arguments": arguments},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hmac.new(key.encode(), canonical.encode(), hashlib.sha256).hexdigest()


def shown_digest(digest: str | None) -> str | None:
    """A digest as a page or a message shows it: its first `SHOWN_DIGEST` characters."""
    return None if digest is None else digest[:SHOWN_DIGEST]
