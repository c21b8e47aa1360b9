"""A worker process that answers some pauses of a tree: ``python -m tests.answer_worker URL IDS``.

It opens its own `App` on the store URL and answers each pause id of IDS (comma-separated) at
once, concurrently; it prints the statuses it got back.
"""

from __future__ import annotations

import asyncio
import sys

from agboss import App, FunctionProvider
from tests.apps.multi_app import ItemsApplication, model


async def main(url: str, ids: list[str]) -> None:
    app = await App.create(ItemsApplication, store=url, providers=[FunctionProvider(model)])
    try:
        results = await asyncio.gather(
            *(app.resume(pause_id, decision={"approved": True}, owner_id="u") for pause_id in ids)
        )
        print(" ".join(result.status.value for result in results))
    finally:
        await app.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2].split(",")))
