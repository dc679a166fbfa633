"""Dispatch sources: numpy's ``@targets`` statement and the targets it yields.

A dispatch source declares, in a C comment, which targets it is compiled for::

    /*@targets $maxopt baseline avx2 avx512_skx (fma3 avx2) asimd vsx2 */

Names are case-insensitive; ``baseline`` also builds the baseline version;
``( ... )`` is one multi-feature target; policies start with ``$``.  Names of
other architectures are skipped (one source serves every architecture).
Parsing is pure; ``select`` applies the ``Detection`` of a build.
"""

from __future__ import annotations

import os
import re

from . import fsio
from ._record import TYPE_CHECKING, NamedTuple
from .errors import DispatchSourceError, InputError, did_you_mean, did_you_mean_token, unknown_names
from .records import Detection
from .tables import Table, all_feature_names, macro_style
from .tokens import TARGETS_KEYWORDS, TARGETS_SEPARATORS, lex, show

if TYPE_CHECKING:
    from typing import Dict, Optional, Sequence, Tuple

    from .tables import Project

    # Targets already made for one detection (select_all), by (members or None for BASELINE, policy args,
    # covered)
    Made = Dict[Tuple[Optional[Tuple[str, ...]], Tuple[str, ...], bool], "Target"]

__all__ = ["POLICIES", "Statement", "parse_text", "parse_targets", "parse_file", "render_statement", "Target",
           "guard", "select",
           "select_all", "target_name"]

# NOHEADER: the source is compiled for its targets like any other, but gets no generated <source>.h: a file
# of a project's own per-ISA layout (x86/pitch_sse.c beside its own pitch_sse.h), called through its own tables.
POLICIES = ("KEEP_BASELINE", "KEEP_SORT", "MAXOPT", "WERROR", "AUTOVEC", "NOHEADER")
MAX_LINES = 1000
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Statement(NamedTuple):
    """What a ``@targets`` statement says, before any compiler is consulted."""

    baseline: bool
    targets: tuple[tuple[str, ...], ...]  # each a single name or a multi-feature group, as written
    policies: frozenset[str]
    line: int
    renamed: tuple[tuple[str, str], ...] = ()  # retired names of the project's file and what they stood for


def _fail(where: str, line: int, message: str) -> DispatchSourceError:
    """``file:line: message``; line 0 is a target list given in meson.build, which has no line of its own."""
    shown = show(where, 200)
    return DispatchSourceError(f"{shown}:{line}: {message}" if line else f"{shown}: {message}")


def _statement_text(text: str, where: str) -> tuple[str, int]:
    lines = _LINE_BREAK.split(text)  # what a compiler counts: not str.splitlines(), which also breaks at '\f'
    for i, line in enumerate(lines[:MAX_LINES]):
        pos = line.find("@targets")
        if pos < 0:
            continue
        body = [line[pos + len("@targets"):]]
        if line[:pos].rstrip().endswith("//"):
            for nxt in lines[i + 1:]:
                if not nxt.lstrip().startswith("//"):
                    break
                body.append(nxt.lstrip()[2:])
            return "\n".join(body), i + 1
        joined = "\n".join([body[0], *lines[i + 1:]])
        end = joined.find("*/")
        if end >= 0:
            return joined[:end], i + 1
        raise _fail(where, i + 1, "the @targets comment is not closed with '*/'")
    raise _fail(where, 1, "no '@targets' statement found in a comment of the first 1000 lines")


def parse_text(text: str, where: str = "<source>", project: Project | None = None) -> Statement:
    """The ``@targets`` statement of a source's text; ``project``: the features file (its names and groups)."""
    body, line = _statement_text(text, where)
    return _Parser(where, line, project).parse(body)


def parse_targets(text: str, where: str, project: Project | None = None) -> Statement:
    """A target list given outside the source (in ``meson.build``): the body of a ``@targets`` statement."""
    if _LINE_BREAK.search(text):
        raise DispatchSourceError(f"{where}: the target list holds a line break")
    if not text.strip():  # computed in meson.build ('NAME: ' when an option leaves nothing): no version,
        return Statement(False, (), frozenset(), 0)  # an empty header, as the fork's multi_targets(dispatch: [])
    return _Parser(where, 0, project).parse(text)


class _Parser:
    """One ``@targets`` body: names, ``( ... )`` groups, ``baseline``, ``$policies``, ``#groups``."""

    def __init__(self, where: str, line: int, project: Project | None) -> None:
        self.where, self.line = where, line
        self.known = all_feature_names(project)
        self.groups = project.groups if project else {}
        self.retired = project.retired if project else {}
        self.renamed: list[tuple[str, str]] = []
        self.baseline = False
        self.policies: set[str] = set()
        self.targets: list[tuple[str, ...]] = []
        self.group: list[str] | None = None
        self.unknown: list[tuple[str, str]] = []

    def fail(self, message: str) -> DispatchSourceError:
        return _fail(self.where, self.line, message)

    def parse(self, body: str) -> Statement:
        lexemes = lex(body, TARGETS_SEPARATORS)
        if not lexemes:
            raise self.fail("the @targets statement is empty")
        for i, lx in enumerate(lexemes):
            following = lexemes[i + 1].text if i + 1 < len(lexemes) and lx.kind == "sign" else ""
            getattr(self, f"_{lx.kind}")(lx.text, following)
        if self.group is not None:
            raise self.fail("'(' is not closed in @targets")
        if self.unknown:
            raise self.fail(unknown_names(self.unknown, self.known, "target"))
        # policies alone: no version, and with $noheader no header
        if not self.baseline and not self.targets and self.policies:
            policies = [f"${p.lower()}" for p in POLICIES if p in self.policies]
            raise self.fail(f"the target list names no target, only the polic{'ies' if len(policies) > 1 else 'y'} "
                            f"'{' '.join(policies)}': nothing would be built; add 'baseline' or a feature "
                            "(e.g. 'baseline avx2')")
        return Statement(self.baseline, tuple(dict.fromkeys(self.targets)), frozenset(self.policies), self.line,
                         tuple(dict.fromkeys(self.renamed)))

    def _open(self, text: str, following: str) -> None:
        if self.group is not None:
            raise self.fail("nested '(' in @targets")
        self.group = []

    def _close(self, text: str, following: str) -> None:
        if self.group is None:
            raise self.fail("')' without a matching '('")
        if not self.group:
            raise self.fail("empty group '()' in @targets")
        self.targets.append(tuple(self.group))
        self.group = None

    def _name(self, text: str, following: str) -> None:
        up = text.upper()
        if up in TARGETS_KEYWORDS:
            if self.group is not None:
                raise self.fail("'baseline' cannot be part of a group")
            self.baseline = True
            return
        if up in self.retired:  # as in cpu-baseline/cpu-dispatch: the name it stands for, with a warning
            self.renamed.append((up, self.retired[up]))
            up = self.retired[up]
            if not up:
                return
        if up not in self.known:
            self.unknown.append((show(text), up))
        if self.group is not None:
            self.group.append(up)
        else:
            self.targets.append((up,))

    def _policy(self, text: str, following: str) -> None:
        name = text[1:].upper()
        if self.group is not None:
            raise self.fail(f"policy '{show(text)}' cannot be part of a group")
        if name not in POLICIES:
            valid = ", ".join("$" + p.lower() for p in POLICIES)
            raise self.fail(f"unknown policy '{show(text)}'{did_you_mean(name, POLICIES).lower()}; valid: {valid}")
        self.policies.add(name)

    def _group(self, text: str, following: str) -> None:
        name = text[1:].upper()
        if self.group is not None:
            raise self.fail(f"target group '{show(text)}' cannot be part of a '(' group")
        if name not in self.groups:
            hint = did_you_mean(f"#{name}", [f"#{g}" for g in self.groups])
            raise self.fail(f"unknown target group '{show(text)}'{hint}; groups are defined in the "
                            "project's features file (the 'features-file' option)")
        self.targets.extend(self.groups[name])

    def _sign(self, text: str, following: str) -> None:
        raise self.fail(f"'{show(text + following)}': '+' and '-' are not allowed in @targets")

    def _bad(self, text: str, following: str) -> None:
        raise self.fail(f"invalid token '{show(text)}'{did_you_mean_token(text, self.known)} in @targets")


def parse_file(path: str | os.PathLike[str], where: str | None = None, project: Project | None = None) -> Statement:
    """The statement of a source file; ``where`` names it in messages (default: the path as given)."""
    try:
        data = fsio.read_bounded(path, fsio.LIMITS.dispatch_source, "dispatch source")
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InputError(f"dispatch source '{fsio.show_path(path)}' does not exist") from exc
    return parse_text(data.decode("utf-8", errors="replace"), os.fspath(path) if where is None else where, project)


def render_statement(st: Statement) -> str:
    """Canonical text: ``parse_text('/*@targets ' + render(s) + '*/')`` equals ``s`` (line aside)."""
    words = ["$" + p.lower() for p in POLICIES if p in st.policies]
    words += ["baseline"] if st.baseline else []
    words += [t[0] if len(t) == 1 else "(" + " ".join(t) + ")" for t in st.targets]
    return " ".join(words)


class Target(NamedTuple):
    name: str  # e.g. AVX2, FMA3__AVX2, BASELINE
    members: tuple[str, ...]
    args: tuple[str, ...]
    checks: tuple[str, ...] = ()  # what the CPU must have at run time before this version is called


def target_name(members: Sequence[str]) -> str:
    return "__".join(members)


def make_target(det: Detection, members: Sequence[str], extra: Sequence[str] = (), covered: bool = False) -> Target:
    """One (multi-)feature target: its compile args and its run-time checks.  ``covered``: a target the
    baseline covers, kept by a project's ``keep_covered``: built with its own flags alone, after the
    baseline's on the line (numpy's fork: a VSX2 version under a VSX3 baseline gets -mcpu=power8 last)."""
    table = det.table
    assert table is not None
    name = target_name(members)
    # The baseline's flags go in too: a target build is the baseline plus more.  On ARM this
    # merges -march=...+ext of both, where the later flag alone would drop the baseline's.
    flags = table.flags_for(members if covered else [*det.baseline, *members])
    args = [*flags, *det.defines(members), *extra, *_target_with(det, name),
            det.define(det.spelling("target", target=name))]
    # The run-time library judges features by the GCC graph; a compiler whose flag for a member
    # also enables more (Intel's FMA3 is -march=core-avx2, MSVC's AVX512F is /arch:AVX512) needs
    # those checked too, or the version could run on a CPU without them (SIGILL).
    more = table.closure(members) - table.reference().closure(members) - set(det.baseline)
    return Target(name, tuple(members), tuple(args), (*members, *table.sort(more)))


def guard(det: Detection | None, t: Target) -> tuple[str, ...]:
    """What the run-time tests before it calls the version ``t``: the one answer that the header making the test
    (``emit``), the manifest declaring it and the audit checking the version against it all use.  ccopt's
    run-time tests the target's ``checks`` (``det`` may be None for it); a project protocol's header (numpy's)
    its rows' ``detect``, or the implied closure as far as its run-time knows the names (its ``max``)."""
    if t.name == "BASELINE":
        return ()
    table = det.table if det is not None else None
    if det is None or table is None or macro_style(det.request.macros.style)["header"] != "numpy":
        return t.checks or t.members
    if table.policies.own_detect:
        return tuple(table.detect_of(t.members))
    known = table.project.max_of(table.machine.family) if table.project else None
    return tuple(n for n in table.sort(table.closure(t.checks or t.members)) if known is None or n in known)


def baseline_target(det: Detection, extra: Sequence[str] = ()) -> Target:
    return Target("BASELINE", (), (*det.baseline_args(), *extra, *_target_with(det, "BASELINE"),
                                   det.define(det.spelling("baseline"))))


def _target_with(det: Detection, name: str) -> list[str]:
    """The define that hands a version's target name to the style's headers unexpanded (``target_with`` in
    ``data/macros.json``), for a style that has one."""
    style = macro_style(det.request.macros.style)
    return [det.define(det.spelling("target_with", target=name))] if "target_with" in style else []


def policy_args(det: Detection, policies: frozenset[str]) -> list[str]:
    extra: list[str] = []
    if "MAXOPT" in policies or "AUTOVEC" in policies:
        extra += [] if det.policy.debug else list(det.policy.opt)
    if "WERROR" in policies:
        extra += list(det.policy.werror)
    return extra


def select(st: Statement, det: Detection) -> list[Target]:
    """The targets of one source for one build, highest first, then BASELINE if asked for."""
    return _select(st, det, {})


def select_all(statements: Sequence[Statement], det: Detection) -> list[list[Target]]:
    """``select`` of each source of one call: a target several sources share is made once (numpy's 200
    sources share 10 targets of 356)."""
    made: Made = {}
    return [_select(st, det, made) for st in statements]


def _select(st: Statement, det: Detection, made: Made) -> list[Target]:
    extra = tuple(policy_args(det, st.policies))
    out: list[Target] = []
    if det.table is not None:
        alone = not st.baseline and "KEEP_BASELINE" not in st.policies and det.table.policies.keep_covered
        for members in _choose(st, det, det.table):
            covered = alone and all(n in det.baseline for n in members)
            made_key: tuple[tuple[str, ...] | None, tuple[str, ...], bool] = (members, extra, covered)
            if made_key not in made:
                made[made_key] = make_target(det, members, extra, covered)
            out.append(made[made_key])
    if st.baseline:
        base_key: tuple[tuple[str, ...] | None, tuple[str, ...], bool] = (None, extra, False)
        if base_key not in made:
            made[base_key] = baseline_target(det, extra)
        out.append(made[base_key])
    return out


def dropped(st: Statement, det: Detection) -> list[tuple[tuple[str, ...], str]]:
    """The targets of ``st`` this build does not compile, each with why (the same choice ``select`` makes):
    a name of another machine is not listed, it is not dropped."""
    out: list[tuple[tuple[str, ...], str]] = []
    if det.table is not None:
        _choose(st, det, det.table, out)
    return out


def _not_enabled(det: Detection, table: Table, t: tuple[str, ...]) -> str:
    """Why a listed target whose members are this machine's is not built ('' : it is, or it is another's)."""
    if not all(n in table.features for n in t):
        return ""
    for n in t:
        if det.supported(n) is False:
            what = "it" if len(t) == 1 else n
            return f"the compiler cannot build {what} ({(det.reason(n).splitlines() or ['failed'])[0][:200]})"
    off = [n for n in t if n not in det.baseline and n not in det.dispatch]
    return f"cpu-dispatch does not select {' '.join(off)}" if off else ""


def _choose(st: Statement, det: Detection, table: Table,
            dropped: list[tuple[tuple[str, ...], str]] | None = None) -> list[tuple[str, ...]]:
    """The members of each target ``st`` builds; ``dropped`` (when given) gets the others, each with why."""
    said = dropped if dropped is not None else []
    baseline = set(det.baseline)
    enabled = baseline | set(det.dispatch)
    chosen: list[tuple[str, ...]] = []
    for t in st.targets:
        if not all(n in enabled for n in t):  # another family's names, or not enabled in this build
            why = _not_enabled(det, table, t)
            said += [(t, why)] if why else []
            continue
        # drop members implied by another member ("ahead"); if all imply each other keep the highest
        ahead = [n for n in t if not any(m != n and n in table.closure([m]) for m in t)]
        members = tuple(table.sort(ahead)) if ahead else (table.sort(t)[-1],)
        if members not in chosen:
            chosen.append(members)
    # numpy's protocol: a list without 'baseline' has no fallback, so it keeps what the baseline covers
    keep = "KEEP_BASELINE" in st.policies or (not st.baseline and table.policies.keep_covered)
    if not keep:
        said += [(m, "the baseline covers it: its code runs in the BASELINE version") for m in chosen
                 if all(n in baseline for n in m)]
        chosen = [m for m in chosen if not all(n in baseline for n in m)]
    # mutual implication ties (e.g. MSVC's FMA3 <-> AVX2) keep the higher feature only, unless the project keeps
    # the members of a ring apart (numpy's fork builds NEON and ASIMD, each with its own defines)
    fold = table.policies.rings == "fold"
    tied = [m for m in chosen if fold and len(m) == 1 and any(
        o != m and len(o) == 1 and m[0] in table.closure(o) and o[0] in table.closure(m)
        and table.rank(o) > table.rank(m) for o in chosen)]
    said += [(m, "it and a higher target imply each other with this compiler: the higher one is built")
             for m in tied]
    chosen = [m for m in chosen if m not in tied]
    if "AUTOVEC" in st.policies:
        said += [(m, "$autovec builds only targets with flags of their own") for m in chosen
                 if not all(table.features[n].flags for n in m)]
        chosen = [m for m in chosen if all(table.features[n].flags for n in m)]
    if "KEEP_SORT" not in st.policies:
        chosen.sort(key=lambda m: table.rank(m), reverse=True)
    return chosen
