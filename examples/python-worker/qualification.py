"""qualification-match in Python: how well a company's qualifications cover a project's
requirements, scored as the node's own Java handler scores it (exact fractions, halves rounded up),
so that a task gets the same result whichever of them runs it."""
from datetime import date
from fractions import Fraction


def _expired(qualification, as_of):
    expires = qualification.get("expires")
    return as_of is not None and expires is not None and date.fromisoformat(expires) < as_of


def _half_up(value, places=0):
    scaled = value * 10 ** places
    return Fraction(int(scaled + Fraction(1, 2)), 10 ** places)  # values here are never negative


def score(payload):
    as_of = date.fromisoformat(payload["asOf"]) if payload.get("asOf") else None
    best = {}  # per name: unexpired beats expired, then the higher level, then the earlier listing
    for q in payload["company"]["qualifications"]:
        key, current = q["name"].strip().lower(), best.get(q["name"].strip().lower())
        if current is None or (_expired(current, as_of) and not _expired(q, as_of)) or (
                _expired(current, as_of) == _expired(q, as_of) and q["level"] > current["level"]):
            best[key] = q
    weighted, total, mandatory_met, breakdown = Fraction(0), Fraction(0), True, []
    for r in payload["project"]["requirements"]:
        held, required = best.get(r["name"].strip().lower()), r.get("minLevel", 1)
        expired = held is not None and _expired(held, as_of)
        if held is None or expired:
            status, credit = ("missing" if held is None else "expired"), Fraction(0)
        elif held["level"] >= required:
            status, credit = "met", Fraction(1)
        else:
            status, credit = "partial", Fraction(held["level"], required)
        mandatory_met = mandatory_met and not (r.get("mandatory", False) and credit != 1)
        weight = Fraction(str(r.get("weight", 1)))
        weighted, total = weighted + weight * credit, total + weight
        breakdown.append({"requirement": r["name"], "weight": r.get("weight", 1),
                          "mandatory": r.get("mandatory", False), "required": required,
                          "held": None if held is None else held["level"], "expired": expired,
                          "credit": float(_half_up(credit, 3)), "status": status})
    result = int(_half_up(weighted * 100 / total)) if total else 100
    return {"company": payload["company"]["name"], "project": payload["project"]["name"],
            "score": result, "mandatoryMet": mandatory_met, "breakdown": breakdown}
