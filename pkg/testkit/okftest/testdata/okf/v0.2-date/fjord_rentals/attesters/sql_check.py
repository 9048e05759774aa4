"""Receipt check for Attested Computations with runtime: postgres.

A test fixture: the bundle stores this file as data; nothing runs it.
"""

import re

_COMMENT = re.compile(r"--[^\n]*")
_SPACE = re.compile(r"\s+")


def _canonical(sql: str) -> str:
    return _SPACE.sub(" ", _COMMENT.sub(" ", sql)).strip().lower()


def attest(*, sanctioned_sql: str, receipt: dict, claimed_value) -> dict:
    """Return {"ok": bool, "reason": str | None}."""
    if _canonical(receipt.get("executed_sql", "")) != _canonical(sanctioned_sql):
        return {"ok": False, "reason": "executed SQL differs from the sanctioned SQL"}
    result = receipt.get("result")
    first = result[0] if isinstance(result, list) else result
    if first != claimed_value:
        return {"ok": False, "reason": "shown value differs from the receipt"}
    return {"ok": True, "reason": None}
