"""The decision log as an auditor reads it: verified link by link (`verify_decisions`),
paged and exported masked (`decision_page`, `write_export`), read back (`read_export`).

Verifying needs the store alone — no application, no PII rules — so an auditor runs it with
the store's URL (``agboss audit verify``); what shows entries goes through the application's
PII rules (`App.decisions`, `App.export_decisions`, ``agboss audit export``).
"""

from agboss.audit._exporting import (
    DecisionPage,
    ExportFormat,
    LogEntry,
    decision_page,
    read_export,
    write_export,
)
from agboss.audit._verifying import Anchor, ChainBreak, Tampering, Verification, verify_decisions

__all__ = [
    "Anchor",
    "ChainBreak",
    "DecisionPage",
    "ExportFormat",
    "LogEntry",
    "Tampering",
    "Verification",
    "decision_page",
    "read_export",
    "verify_decisions",
    "write_export",
]
