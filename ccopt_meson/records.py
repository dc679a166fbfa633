"""The typed records the stages hand each other.

``Request`` is what a caller asks; ``Probed`` is what a compiler answered (the
only thing the cache stores besides the request); ``Detection`` is the resolved
result that ``dispatch``, ``emit``, the Meson glue and the CLI read.  A
``Detection`` is always rebuilt from a request, a ``Probed`` and the tables, so
every flag, define and header in it comes from the tables, never from a file in
the build directory.  It becomes JSON only in ``to_json`` (``--json`` output).
"""

from __future__ import annotations

import re

from ._record import TYPE_CHECKING, NamedTuple
from .compiler import program_prefix
from .tables import compiler_spec, default_macro_prefix, macro_style, picks_cpu

if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping

    from .resolve import Token
    from .tables import Project, Table


__all__ = ["DEFAULT_BASELINE", "DEFAULT_DISPATCH", "BASELINE_DETECT", "JSON_SCHEMA_VERSION", "Macros", "Request",
           "REQUEST_OPTIONS",
           "Expressions", "Outcome", "Probed", "CompilerInfo", "Policy", "Detection"]

DEFAULT_BASELINE = "detect"
DEFAULT_DISPATCH = "max"
BASELINE_DETECT = ("auto", "enabled", "disabled")
JSON_SCHEMA_VERSION = 1  # of the ``--json`` document users script against; the cache file has its own


class Macros(NamedTuple):
    """How compile args and per-source headers spell the build's facts (``data/macros.json``).

    A prefix of None is the data's ``default_prefix``; ``resolved`` names it, and the pipeline resolves every
    request it is given, so a ``Detection``, the cache key and the cache file hold the name itself."""

    prefix: str | None = None  # every macro's prefix: ``CCOPT_HAVE_AVX2``, ``NPY_HAVE_AVX2``
    style: str = "ccopt"  # ccopt-meson's own protocol, or 'numpy' (a project with its own run-time)

    def resolved(self) -> Macros:
        """This protocol with its prefix named (None becomes ``data/macros.json``'s ``default_prefix``)."""
        return self if self.prefix is not None else self._replace(prefix=default_macro_prefix())


class Request(NamedTuple):
    """Everything a detection depends on, as given by the caller."""

    command: tuple[str, ...]
    args: tuple[str, ...] = ()
    baseline: str = DEFAULT_BASELINE
    dispatch: str = DEFAULT_DISPATCH
    lang: str = "c"
    compiler_id: str | None = None
    compiler_version: str | None = None
    cpu_family: str | None = None
    cross: bool | None = None
    disable_optimization: bool = False
    debug_build: bool = False  # Meson's optimization=0/g: $maxopt adds no -O3
    explain: tuple[str, ...] = ()
    project: Project | None = None  # a project's features file (``project.load``), None for the tables alone
    macros: Macros = Macros()
    # when the baseline gains DETECT (what the user's own args enable): 'auto' when they pick a CPU
    # (-march=, -mcpu=, ...), 'enabled' always, 'disabled' never (numpy's cpu-baseline-detect)
    baseline_detect: str = "auto"

    def compile_args(self) -> tuple[str, ...]:
        """Every argument the compiler gets: those written into the command itself, past its programs
        (``CC="gcc -march=haswell"``: Meson's ``cc.cmd_array()`` holds them), then ``args``.  What picks a
        CPU, asks for 'native' or marks a debug build counts wherever it was written: every object is
        compiled with both."""
        return (*self.command[len(program_prefix(self.command)):], *self.args)

    def baseline_cause(self) -> tuple[str, str]:
        """What set the baseline, and a change of the build that lowers it, as the run-time's line for a CPU below
        it says them (``CCOPT_CPU_BASELINE_CAUSE`` / ``_CURE``): an option naming features, the user's own CPU
        choice (and whether it is in ``c_args`` or the compiler command), or what the compiler targets alone.
        Only words a C string literal and Meson's argument quoting carry unchanged."""
        option = " ".join(self.baseline.split())
        raised = option.lower() not in ("detect", "none", "")
        picked = [a for a in self.compile_args() if picks_cpu(a)] if self.baseline_detect != "disabled" else []
        where = f"{self.lang}_args" if all(a in self.args for a in picked) else "the compiler command"
        causes, cures = [], []
        if raised:
            shown = option if " " not in option else f"({option})"
            causes.append(f"cpu-baseline={shown}" if _sayable(option) else "cpu-baseline")
            cures.append("-Dccopt-meson:cpu-baseline=detect")
        if picked:
            causes.append(" ".join(a if _sayable(a) and " " not in a else "a CPU choice" for a in picked)
                          + f" in {where}")
            cures.append(f"a lower CPU (or none) in {where}")
        elif not raised:
            causes.append("what the compiler targets by default")
            cures.append(f"a lower CPU in {self.lang}_args (-march= or the compiler's spelling)")
        return "set by " + " and ".join(causes), "build it with " + " and ".join(cures)


# What a message calls a request field: the option (or the input) it came from.
REQUEST_OPTIONS = {"command": "the compiler command", "args": "a compile argument", "baseline": "cpu-baseline",
                   "dispatch": "cpu-dispatch", "compiler_id": "--compiler-id", "compiler_version": "--compiler-version",
                   "cpu_family": "--cpu-family", "explain": "explain", "project": "--features-file",
                   "macros": "macro-prefix", "baseline_detect": "baseline-detect"}


class Expressions(NamedTuple):
    """A request's two expressions, tokenised once per run (``pipeline.expressions``)."""

    baseline: tuple[Token, ...]  # with DETECT added when the user's own args pick a CPU
    dispatch: tuple[Token, ...]
    native: bool  # the answer depends on the build machine's CPU ('native', ``-march=native``)
    notes: tuple[str, ...] = ()  # what reading them said (a retired name's warning)


class Outcome(NamedTuple):
    """A probe's verdict on one feature (or extra check)."""

    supported: bool
    reason: str = ""


class Probed(NamedTuple):
    """What the compiler said about itself and about each probed feature: names and verdicts only."""

    arch: str | None  # a machine name of the tables, None when the target is unknown
    compiler_id: str
    compiler_version: str
    outcomes: Mapping[str, Outcome]
    detected: tuple[str, ...] = ()  # features the user's own flags already enable
    native: tuple[str, ...] = ()  # features the native flag enables (when 'native' was asked for)
    # the bases of the rows' +ext flags (-march=armv8.2-a) whose line, after the user's CPU-selecting args, keeps
    # all they enable (probe.architecture_lines): those are written whole, as numpy's fork writes them
    lines: tuple[str, ...] = ()


class CompilerInfo(NamedTuple):
    id: str
    version: str
    command: tuple[str, ...]
    lang: str
    args: tuple[str, ...]


class Policy(NamedTuple):
    """The ``@targets`` policy flags of this compiler and build."""

    opt: tuple[str, ...]
    werror: tuple[str, ...]
    debug: bool


class Detection(NamedTuple):
    """The result of a detection: what to build and with which flags."""

    request: Request
    expressions: Expressions
    compiler: CompilerInfo
    arch: str  # "unknown" when the compiler targets no machine of the tables
    table: Table | None  # the tables as this compiler sees them, in the build's own flag context
    policy: Policy
    baseline: tuple[str, ...]  # lowest first
    dispatch: tuple[str, ...]  # highest first
    outcomes: Mapping[str, Outcome]  # what was probed; features absent here were not part of the request
    notes: tuple[str, ...]
    cache_hit: bool
    cache_key: str
    probes: int  # compiler processes this run started

    @property
    def family(self) -> str | None:
        return self.table.machine.family if self.table else None

    def supported(self, name: str) -> bool | None:
        """True/False when probed (or disabled by the tables), None when not asked for."""
        assert self.table is not None
        if self.table.features[name].disabled:
            return False
        out = self.outcomes.get(name)
        return None if out is None else out.supported

    def reason(self, name: str) -> str:
        assert self.table is not None
        feat = self.table.features[name]
        if feat.disabled:
            return feat.disabled
        out = self.outcomes.get(name)
        return "not probed: not part of the request" if out is None else out.reason

    def state(self, name: str) -> str:
        """What this build does with a feature, for a ``meson.build`` asking before it lists a target:
        ``baseline``, ``dispatch``, ``buildable`` (the compiler builds it; not selected), ``unsupported``,
        or ``not-probed`` (not part of the request: ``explain`` probes it)."""
        if name in self.baseline:
            return "baseline"
        if name in self.dispatch:
            return "dispatch"
        ok = self.supported(name)
        return "not-probed" if ok is None else "buildable" if ok else "unsupported"

    def have_names(self, names: Iterable[str]) -> list[str]:
        """``CCOPT_HAVE_*`` names of ``names``: each feature, its group members, its passing extra checks.

        A project whose run-time knows only some names (its features file's ``max``) gets those features'
        names only, as its own build system would spell them; groups and extra checks stay."""
        table = self.table
        assert table is not None
        # ccopt's own protocol (its run-time knows every name of the tables) is never limited
        limited = table.project is not None and not macro_style(self.request.macros.style)["runtime"]
        known = table.project.max_of(table.machine.family) if limited and table.project else None
        out: list[str] = []
        for n in names:
            f = table.features[n]
            own = [n] if known is None or n in known else []
            out += [*own, *f.group, *(e for e in f.extra_checks if self.outcomes.get(e, Outcome(False)).supported)]
        return list(dict.fromkeys(out))

    def spelling(self, what: str, **fields: str) -> str:
        """A macro of this build's protocol (``data/macros.json``): ``have``, ``target`` or ``baseline``."""
        macros = self.request.macros
        return str(macro_style(macros.style)[what]).format(prefix=macros.prefix, **fields)

    def macro_name(self, what: str, **fields: str) -> str:
        """The name of one macro of this build's protocol (``spelling`` without its value)."""
        return self.spelling(what, **fields).split("=", 1)[0]

    def defines(self, names: Iterable[str]) -> list[str]:
        """``-DCCOPT_HAVE_X=1`` (in the compiler's spelling and the build's protocol) for ``names`` and all they
        imply (``Table.defined``)."""
        assert self.table is not None
        closure = self.have_names(self.table.sort(self.table.defined(names)))
        return [self.define(self.spelling("have", name=n)) for n in closure]

    def define(self, text: str) -> str:
        spec = self.table.spec if self.table else compiler_spec(self.compiler.id)
        return str(spec.driver["define"]).format(text)

    def baseline_request(self) -> str:
        """What was asked for the baseline, with the user's own CPU choice that raised it (``-march=native``)."""
        policy = self.request.baseline_detect
        picked = [a for a in self.request.compile_args() if picks_cpu(a)] if policy != "disabled" else []
        asked = repr(self.request.baseline)
        if policy == "enabled" and not picked:
            return f"{asked} + what the compile args enable"
        return f"{asked} + what {' '.join(picked)} enables" if picked else asked

    def baseline_flags(self) -> list[str]:
        return self.table.flags_for(self.baseline) if self.table else []

    def baseline_args(self) -> list[str]:
        """Compile args of the baseline: flags plus ``CCOPT_HAVE_*`` defines."""
        if not self.baseline:
            return self.baseline_flags()
        return [*self.baseline_flags(), *self.defines(self.baseline)]

    def target_flags(self, name: str) -> list[str]:
        """Flags of one dispatch target: the baseline's and its own, merged (``-march=...+ext`` on ARM)."""
        assert self.table is not None
        return self.table.flags_for([*self.baseline, name])

    def to_json(self) -> dict[str, Any]:
        """The ``detect --json`` document (schema ``JSON_SCHEMA_VERSION``)."""
        from .version import __version__

        req, comp = self.request, self.compiler
        doc: dict[str, Any] = {
            "schema_version": JSON_SCHEMA_VERSION, "helper_version": __version__,
            "arch": self.arch, "family": self.family,
            "compiler": {"id": comp.id, "version": comp.version, "command": list(comp.command), "lang": comp.lang,
                         "args": list(comp.args)},
            "request": {"baseline": req.baseline, "dispatch": req.dispatch,
                        "disable_optimization": req.disable_optimization},
            "policy": {"opt": list(self.policy.opt), "werror": list(self.policy.werror), "debug": self.policy.debug},
            "baseline": {"names": list(self.baseline), "args": self.baseline_flags()},
            "dispatch": {"names": list(self.dispatch), "args": {n: self.target_flags(n) for n in self.dispatch}},
            "features": {}, "notes": list(self.notes),
            "cache": {"hit": self.cache_hit, "key": self.cache_key}, "probes": self.probes,
        }
        if self.table is not None:
            doc["features"] = {n: self._feature_json(n) for n in self.table.features}
        return doc

    def _feature_json(self, name: str) -> dict[str, Any]:
        assert self.table is not None
        t, f = self.table, self.table.features[name]
        return {
            "supported": self.supported(name), "reason": self.reason(name), "interest": f.interest,
            "implies": t.sort(t.closure([name]) - {name}), "args": t.flags_for([name]), "group": list(f.group),
            "headers": list(f.headers), "autovec": bool(f.flags), "detect": [name],
            "extra_checks": {e: self.outcomes[e].supported for e in f.extra_checks if e in self.outcomes},
        }


def _sayable(words: str) -> bool:
    """May a message compiled into C (a string literal in a ``-D`` Meson quotes) quote ``words`` as they are?"""
    return re.fullmatch(r"[A-Za-z0-9_.,+=:/ -]{1,60}", words) is not None
