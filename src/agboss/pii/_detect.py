"""Finding personal data in free text: card numbers, IBANs, e-mail addresses, phone numbers.

A pattern only proposes candidates; what decides is the kind's own check, from well-kept
libraries: the Luhn digit and the IBAN country formats and check digits (python-stdnum), phone
numbers as Google's libphonenumber reads them (phonenumbers). A number that fails its check is
not personal data of that kind (an order id of 16 digits is not a card number).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import phonenumbers
from stdnum import iban as stdnum_iban
from stdnum import luhn

from agboss.pii._rules import PiiKind

__all__ = ["DETECTORS", "Span"]

Span = tuple[int, int]

_CARD = re.compile(r"(?<![\d])\d(?:[ -]?\d){12,18}(?![\d])")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")


def _cards(text: str) -> list[Span]:
    found = []
    for match in _CARD.finditer(text):
        digits = re.sub(r"[ -]", "", match.group())
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits):
            found.append(match.span())
    return found


def _ibans(text: str) -> list[Span]:
    found = []
    for match in _IBAN.finditer(text):
        candidate = match.group()
        # The pattern may run into the words after it: shorten until the check holds.
        while len(candidate.replace(" ", "")) >= 15:
            if stdnum_iban.is_valid(candidate):
                found.append((match.start(), match.start() + len(candidate)))
                break
            candidate = candidate[:-1].rstrip()
    return found


def _emails(text: str) -> list[Span]:
    return [match.span() for match in _EMAIL.finditer(text)]


_INTERNATIONAL = re.compile(r"\+\s*\(?\d")


def _phones(text: str) -> list[Span]:
    first = _INTERNATIONAL.search(text)
    if first is None:  # only +<country> numbers are read: skip the parser
        return []
    # The parser starts at the first of them (with an opening bracket just before it): what
    # comes before holds no +<country> number, and each digit group there would be parsed in
    # vain. A number glued to the word before it, which the parser would refuse with that word
    # in view, is then found too — the safe side for a detector.
    start = first.start()
    while start > 0 and text[start - 1] in "([":
        start -= 1
    return [
        (start + match.start, start + match.end)
        for match in phonenumbers.PhoneNumberMatcher(
            text[start:], None, phonenumbers.Leniency.VALID
        )
    ]


DETECTORS: dict[str, Callable[[str], list[Span]]] = {
    PiiKind.CARD_NUMBER: _cards,
    PiiKind.IBAN: _ibans,
    PiiKind.EMAIL: _emails,
    PiiKind.PHONE: _phones,
}
"""The detector of each kind agboss finds in free text."""
