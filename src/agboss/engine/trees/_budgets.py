"""Budgets enforced: every model call of a tree — an agent's turn, a reply interpreter's
reading — is checked against the tree's budgets before it is made and counted in the tree's
ledger as soon as it returns."""

from __future__ import annotations

from agboss.engine.instance import Runtime
from agboss.errors import BudgetExceededError
from agboss.models import Usage
from agboss.policies import Budget
from agboss.store.protocol import ExecutionRow
from agboss.store.writes import AddLedgerEntry

__all__ = ["check_budgets", "count_spend"]


def _budgets(runtime: Runtime, workflows: list[str]) -> list[tuple[str, Budget]]:
    assembly = runtime.assembly
    found: list[tuple[str, Budget]] = []
    if assembly.spec.budget is not None:
        found.append((assembly.spec.name, assembly.spec.budget))
    for name in dict.fromkeys(workflows):
        definition = assembly.workflows_by_name.get(name)
        if definition is not None and definition.spec.budget is not None:
            found.append((definition.spec.name, definition.spec.budget))
    return found


async def check_budgets(runtime: Runtime, execution: ExecutionRow, caller: str) -> None:
    """Raises `BudgetExceededError` if a budget of the execution's tree is spent.

    The application's budget, the root workflow's and the execution's own workflow's (for a
    child) bound what the whole tree spent.

    Args:
        runtime: The instance's services.
        execution: The execution the model call is made in.
        caller: Who is about to call a model (``agent:office-agent``).
    """
    if not runtime.assembly.declares_budgets:
        return
    root = execution
    if execution.root_execution_id != execution.execution_id:
        root = await runtime.store.executions.find_by_id(execution.root_execution_id) or execution
    budgets = _budgets(runtime, [root.workflow, execution.workflow])
    if not budgets:
        return
    spent = await runtime.store.ledger.total(root.execution_id)
    for owner, budget in budgets:
        exhausted = budget.exhausted_by(spent)
        if exhausted is not None:
            raise BudgetExceededError(
                f"the budget of {owner} is spent ({exhausted}); {caller} may not call its "
                f"model in execution tree {root.execution_id}",
                hint=f"raise budget= on {owner}, or start a new execution",
            )


async def count_spend(
    runtime: Runtime, root_execution_id: str, execution_id: str, caller: str, usage: Usage
) -> None:
    """Counts a model call in the tree's ledger, at once (its own commit)."""
    await runtime.store.write(
        [AddLedgerEntry(root_execution_id, execution_id, caller, usage, runtime.clock.now())]
    )
