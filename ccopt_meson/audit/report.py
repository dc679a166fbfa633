"""The audit's report: one line per finding, a summary line per file, the notes; or the same as JSON."""

from __future__ import annotations

from .._record import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from .allow import Allowance
    from .build import Result
    from .check import FileReport

__all__ = ["format_text", "to_json"]


def _may_use(a: Allowance) -> str:
    what = "the baseline" if a.target == "BASELINE" else f"version {a.target}: the baseline and its run-time test"
    return f"{what} ({' '.join(a.names) or 'nothing above the architecture'})"


def _summary(r: FileReport) -> str:
    state = f"{len(r.findings)} offending function{'s' if len(r.findings) != 1 else ''}" if r.findings else "ok"
    line = f"summary: {r.object}: {state}; highest feature used {r.highest or 'none'}; may use {r.allowance.target}"
    if r.declared is not None:
        versions = ", ".join(f"{v} {n}" for v, n in r.versions) or "none"
        line += (f"; declared baseline {' '.join(r.declared) or 'none'}; unguarded code uses up to {r.floor or 'none'}"
                 f"; guarded versions (functions): {versions}")
    return line + (f" ({r.note})" if r.note else "")


def format_text(result: Result) -> str:
    lines = []
    for r in result.reports:
        for f in r.findings:
            lines.append(f"{r.object}: {f.function}: needs {f.highest} ({' '.join(f.beyond)}), "
                         f"first at 0x{f.offset:x}: '{f.instruction}' ({f.feature}); "
                         f"{'it' if f.allowance != r.allowance else 'the object'} may use {_may_use(f.allowance)}")
    lines += [_summary(r) for r in result.reports]
    lines += [f"note: {n}" for n in result.notes]
    lines += [f"error: {p}" for p in result.problems]
    bad = sum(1 for r in result.reports if r.findings)
    unread = f", {len(result.problems)} not read" if result.problems else ""
    lines.append(f"isa audit: {len(result.reports)} objects, {bad} with findings{unread}")
    return "".join(line + "\n" for line in lines)


def to_json(result: Result) -> dict[str, Any]:
    return {"objects": [{"object": r.object, "target": r.allowance.target, "may_use": list(r.allowance.names),
                         "highest": r.highest, "functions": r.functions,
                         "declared": None if r.declared is None else list(r.declared), "floor": r.floor,
                         "versions": dict(r.versions), "note": r.note,
                         "findings": [{"function": f.function, "offset": f.offset, "instruction": f.instruction,
                                       "needs": list(f.needs), "feature": f.feature, "highest": f.highest,
                                       "beyond": list(f.beyond), "may_use": f.allowance.target} for f in r.findings]}
                        for r in result.reports],
            "findings": sum(len(r.findings) for r in result.reports),
            "notes": list(result.notes), "errors": list(result.problems)}
