"""The office desk's DTOs, shared by the office and approvals examples."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel

from agboss import Pii, PiiKind

__all__ = ["DepositRefundDto", "DepositReturnDto", "DeskDoneDto", "ExpenseDto"]


class DepositReturnDto(BaseModel):
    """A lease whose deposit is returned."""

    lease_id: str


class DepositRefundDto(BaseModel):
    """A lease whose deposit is paid back to an account: the IBAN is personal data."""

    lease_id: str
    iban: Annotated[str, Pii(kind=PiiKind.IBAN)]


class ExpenseDto(BaseModel):
    """An expense to book."""

    purpose: str
    amount: float


class DeskDoneDto(BaseModel):
    """What a desk tool did."""

    status: str
