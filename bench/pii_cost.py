"""What PII rules cost on the pause cycle: the same application with and without five rules.

The cycle of ``pause_resume.py`` (execute until an approval pauses, resume it, finish) on a
SQLite file, once with no rules and once with five (an IBAN tokenized, e-mails and phone
numbers masked, card numbers refused, a field kind of the application's own masked): every
model request's text goes through the detectors, every answer is revealed, every pending ask
and record is masked. Runs alternate in blocks so that the machine's drift hits both alike.

    python bench/pii_cost.py [--cycles 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agboss import (
    App,
    ExecutionStatus,
    FunctionProvider,
    PiiKind,
    PiiRule,
    application,
    block_with_refusal,
    mask,
    replace_with_token,
)
from bench.pause_resume import InboxRefundApprovalChannel, RefundWorkflow, scripted

RULES = [
    PiiRule(PiiKind.IBAN, replace_with_token()),
    PiiRule(PiiKind.EMAIL, mask()),
    PiiRule(PiiKind.PHONE, mask()),
    PiiRule(PiiKind.CARD_NUMBER, block_with_refusal()),
    PiiRule("customer-name", mask()),
]


@application(
    name="plain-refund-application",
    workflows=[RefundWorkflow],
    channels=[InboxRefundApprovalChannel],
)
class PlainApplication: ...


@application(
    name="pii-refund-application",
    workflows=[RefundWorkflow],
    channels=[InboxRefundApprovalChannel],
    pii=RULES,
)
class PiiApplication: ...


REQUEST = "refund order {n} for ada{n}@example.org, call +44 20 7946 {n:04d} if needed"
"""A new text each cycle: nothing is found in a cache that a real run would not find."""


async def cycles(app: App, count: int) -> list[float]:
    times = []
    for n in range(count):
        began = time.perf_counter()
        request = {"text": REQUEST.format(n=n % 10_000)}
        paused = await app.execute(RefundWorkflow, request, owner_id="u")
        pause_id = paused.pending[0].pause_id
        assert pause_id is not None
        done = await app.resume(pause_id, decision={"approved": True}, owner_id="u")
        times.append(time.perf_counter() - began)
        assert done.status is ExecutionStatus.COMPLETED
    return times


async def main(count: int, blocks: int) -> None:
    with tempfile.TemporaryDirectory(prefix="agboss-bench-") as name:
        folder = Path(name)
        apps: dict[str, Any] = {}
        for label, cls in (("no rules", PlainApplication), ("five rules", PiiApplication)):
            apps[label] = await App.create(
                cls, store=folder / f"{label}.db", providers=[FunctionProvider(scripted)]
            )
            await cycles(apps[label], 20)  # warm-up
        times: dict[str, list[float]] = {label: [] for label in apps}
        for _ in range(blocks):
            for label, app in apps.items():
                times[label] += await cycles(app, count // blocks)
        for app in apps.values():
            await app.close()
    plain = statistics.median(times["no rules"])
    ruled = statistics.median(times["five rules"])
    print(f"pause cycle on SQLite, {count} cycles each, alternating in {blocks} blocks")
    print(f"no PII rules      median {plain * 1000:7.3f} ms")
    print(f"five PII rules    median {ruled * 1000:7.3f} ms")
    print(f"cost of the seam: {(ruled / plain - 1) * 100:+.1f} %  (goal: under 10 %)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cycles", type=int, default=600)
    parser.add_argument("--blocks", type=int, default=120)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.cycles, arguments.blocks))
