"""Reading reply interpreters' ``prompt_urls`` once, when the App is created."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlparse

import httpx

from agboss.assembly import Assembly
from agboss.components import ReplyInterpreterSpec
from agboss.errors import AssemblyError, AssemblyViolation

__all__ = ["load_prompts"]


async def _read(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme in ("http", "https"):
        async with httpx.AsyncClient(timeout=30.0) as client:
            response = await client.get(url)
            response.raise_for_status()
            return response.text
    path = Path(parsed.path if parsed.scheme == "file" else url)
    return await asyncio.to_thread(path.read_text, encoding="utf-8")


async def load_prompts(assembly: Assembly) -> dict[str, str]:
    """Each reply interpreter's instructions: its ``prompt`` and the text of its ``prompt_urls``.

    Raises:
        AssemblyError: A prompt URL cannot be read (``[reply-interpreter.prompt-url]``).
    """
    prompts: dict[str, str] = {}
    violations: list[AssemblyViolation] = []
    for spec in assembly.components.values():
        if not isinstance(spec, ReplyInterpreterSpec):
            continue
        parts = [spec.prompt] if spec.prompt else []
        for url in spec.prompt_urls:
            try:
                parts.append(await _read(url))
            except (OSError, httpx.HTTPError) as error:
                violations.append(
                    AssemblyViolation(
                        "reply-interpreter.prompt-url",
                        spec.name,
                        f"its prompt URL {url!r} cannot be read ({error}); fix the path or URL",
                    )
                )
        prompts[spec.name] = "\n\n".join(parts)
    if violations:
        raise AssemblyError(assembly.spec.name, violations)
    return prompts
