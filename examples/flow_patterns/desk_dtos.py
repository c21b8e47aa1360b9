"""The office desk's DTOs, shared by the office and approvals examples."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["DepositReturnDto", "DeskDoneDto", "ExpenseDto"]


class DepositReturnDto(BaseModel):
    """A lease whose deposit is returned."""

    lease_id: str


class ExpenseDto(BaseModel):
    """An expense to book."""

    purpose: str
    amount: float


class DeskDoneDto(BaseModel):
    """What a desk tool did."""

    status: str
