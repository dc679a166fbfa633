"""Detection, end to end: lookup -> identify -> select -> probe -> document.

This is the Python API behind the CLI and the Meson glue (and the one a
setuptools or scikit-build user calls).  ``detect`` returns a ``Detection``;
``document`` is the one pure function that turns a request and a compiler's
verdicts into it, on a cache miss after probing and on a hit from the cache
file alike, so both give exactly the same result.
"""

from __future__ import annotations

import os
import re

from . import cache, fsio, hwcaps
from ._record import TYPE_CHECKING
from .errors import CcoptError, CompilerError, InputError
from .flags import mentions
from .records import (
    BASELINE_DETECT,
    DEFAULT_BASELINE,
    DEFAULT_DISPATCH,
    CompilerInfo,
    Detection,
    Expressions,
    Outcome,
    Policy,
    Probed,
    Request,
)
from .resolve import Token, evaluate, explain_names, render_tokens, resolve, tokenize, uses
from .tables import (
    Table,
    check_macros,
    compiler_spec,
    families_of,
    machines,
    native_flags_anywhere,
    picks_cpu,
    reference_compiler,
)

if TYPE_CHECKING:  # the probe stage (subprocess, threads, tempfiles) is imported on a cache miss only
    from pathlib import Path
    from typing import Mapping, Sequence

    from .compiler import Compiler
    from .probe import Runner, Session
    from .tables import Project

__all__ = ["Request", "Detection", "detect", "document", "flush", "read", "DEFAULT_BASELINE", "DEFAULT_DISPATCH"]


# --------------------------------------------------------------------------- request


def _resolved(req: Request) -> Request:
    """``req`` with its macro prefix named (``Macros.resolved``): one spelling of the default prefix in the
    cache key, the cache file and the detection, whether it was given or left to the data."""
    return req if req.macros.prefix is not None else req._replace(macros=req.macros.resolved())


def _check(req: Request) -> None:
    if not req.command or not all(isinstance(c, str) and c for c in req.command):
        raise InputError("the compiler command is empty; pass --cc or set CC")
    if req.baseline_detect not in BASELINE_DETECT:
        raise InputError(f"baseline-detect: '{str(req.baseline_detect)[:40]}' is not one of "
                         f"{', '.join(BASELINE_DETECT)}")
    if req.lang not in ("c", "cpp"):
        raise InputError(f"unknown language '{req.lang}'; use 'c' or 'cpp'")
    check_macros(req.macros.prefix, req.macros.style)
    _one_architecture([*req.command, *req.args])


def _one_architecture(words: Sequence[str]) -> None:
    """A command naming two target architectures (Apple's universal2, ``-arch x86_64 -arch arm64``) has no
    one set of CPU features: refused with the way out, rather than the macro dump's own error."""
    from .tables import compilers_data

    options = compilers_data()["one_arch_per_build"]["options"]
    archs = list(dict.fromkeys(b for a, b in zip(words, words[1:]) if a in options))
    if len(archs) > 1:
        shown = " ".join(f"{a} {b}" for a, b in zip(words, words[1:]) if a in options)
        raise InputError(
            f"compile args '{shown}' build for {len(archs)} architectures at once (universal2), which have no "
            "CPU features in common to detect: configure one build per architecture (-arch x86_64, -arch arm64) "
            "and fuse the results (lipo, or delocate-fuse for wheels), as numpy's universal2 wheels were made")


def expressions(req: Request) -> Expressions:
    """The two expressions, parsed; the user's own ``-march`` adds DETECT to the baseline (``baseline_detect``
    'auto'; 'enabled': always, 'disabled': never)."""
    notes: list[str] = []
    base = tokenize(req.baseline, "cpu-baseline", req.project, notes)
    disp = tokenize(req.dispatch, "cpu-dispatch", req.project, notes)
    explain_names(req.explain, req.project)  # each a feature name: the same one-line errors as the CLI's
    args = req.compile_args()  # CC="gcc -march=haswell" picks the CPU as c_args' -march does
    if req.disable_optimization:
        for opt, toks, default in (("cpu-baseline", base, DEFAULT_BASELINE), ("cpu-dispatch", disp, DEFAULT_DISPATCH)):
            if render_tokens(toks) not in (default.upper(), "NONE"):
                raise InputError(
                    f"{opt}: '{render_tokens(toks).lower()}' conflicts with disable-optimization=true, "
                    f"which turns every CPU feature off; unset one of the two"
                )
        return Expressions((), (), any(a in native_flags_anywhere() for a in args), tuple(notes))
    detect = {"auto": any(picks_cpu(a) for a in args), "enabled": True, "disabled": False}[req.baseline_detect]
    if detect and not uses(base, "DETECT"):
        base = [*base, Token("+", "DETECT")]
    native = uses(base + disp, "NATIVE") or any(a in native_flags_anywhere() for a in args)
    return Expressions(tuple(base), tuple(disp), native, tuple(notes))



# --------------------------------------------------------------------------- document (pure)


def _table(req: Request, probed: Probed) -> Table | None:
    from .tables import table_for

    if probed.arch is None:
        return None
    table = table_for(probed.arch, probed.compiler_id, req.project, probed.compiler_version)
    return table.with_context(req.compile_args(), probed.lines)


def _policy(req: Request, compiler_id: str) -> Policy:
    spec = compiler_spec(compiler_id)
    debug = req.debug_build or any(re.search(p, a) for p in spec.debug_patterns for a in req.compile_args())
    return Policy(spec.opt, spec.werror, debug)


def _selection(expr: Expressions, table: Table, probed: Probed, notes: list[str]) -> tuple[set[str], set[str]]:
    base = evaluate(expr.baseline, table, probed.native, probed.detected, notes, "cpu-baseline")
    disp = evaluate(expr.dispatch, table, probed.native, probed.detected, notes, "cpu-dispatch")
    if table.policies.dispatch_implied:  # numpy 2 closes its dispatch option (implicit_c)
        limit = table.project.max_of(table.machine.family) if table.project else None
        disp = {n for n in table.closure(disp) if limit is None or n in limit}
    return base, disp


def dropped_names(expr: Expressions, table: Table, outcomes: Mapping[str, Outcome]) -> list[str]:
    """One note per name written in cpu-baseline or cpu-dispatch that the compiler cannot build, with its
    reason: a listed target is never dropped without a word (``max`` lists nothing: ``explain`` says)."""
    notes: list[str] = []
    for option, tokens in (("cpu-baseline", expr.baseline), ("cpu-dispatch", expr.dispatch)):
        for tok in dict.fromkeys(t for t in tokens if t.op == "+" and t.word in table.features):
            feat, out = table.features[tok.word], outcomes.get(tok.word)
            reason = feat.disabled or (out.reason if out is not None and not out.supported else None)
            if reason:
                first = (reason.splitlines() or ["failed"])[0]
                notes.append(f"{option}: {tok.word} dropped: the compiler cannot build it "
                             f"({first if len(first) <= 200 else first[:197] + '...'})")
    return notes


def unbuilt_rows(table: Table, outcomes: Mapping[str, Outcome]) -> list[str]:
    """A warning for each row whose flags the compiler was asked about (``rules.reads_flags``) and that is not
    built on its own account (not for a feature it implies): never dropped without a word, listed or not."""
    from .rules import reads_flags

    out = []
    for n, o in outcomes.items():
        if n in table.features and not o.supported and reads_flags(table, n) \
                and all(outcomes.get(d, o).supported for d in table.closure([n]) - {n}):
            first = (o.reason.splitlines() or ["failed"])[0]
            out.append(f"warning: {n} is not built: {first if len(first) <= 400 else first[:397] + '...'}")
    return out


def unbuilt_under_args(table: Table, outcomes: Mapping[str, Outcome]) -> list[str]:
    """A warning for each feature that fails on its own account with flags the user's CPU-selecting args changed
    (``-mcpu=cortex-a53`` takes ASIMDHP's ``+fp16`` and gcc 12 refuses its intrinsics on that armv8.0 CPU): the
    user's -march/-mcpu, not the compiler, is why it is not built, and no target drops without a word."""
    if not table.context:
        return []
    bare = table._replace(context=())
    out = []
    for n, o in outcomes.items():
        if n in table.features and not o.supported and not table.features[n].disabled \
                and table.flags_for([n]) != bare.flags_for([n]) \
                and all(outcomes.get(d, o).supported for d in table.closure([n]) - {n}):
            first = (o.reason.splitlines() or ["failed"])[0]
            out.append(f"warning: {n} cannot be built under the compile args' {' '.join(table.context)}: its flags "
                       f"become {' '.join(table.flags_for([n]))} "
                       f"({first if len(first) <= 200 else first[:197] + '...'}); compile args naming a later CPU or "
                       "architecture build it")
    return out


def guaranteed_failure(table: Table | None, outcomes: Mapping[str, Outcome], command: Sequence[str],
                       baseline: Sequence[str] = ()) -> str | None:
    """A warning when a feature every CPU of the target has (the machine's ``min``) is unsupported, naming
    why and the baseline the build then uses (``baseline``): nothing is wrong with the CPU.

    Three causes: the feature is disabled (a features file's override, a compiler without its flags); the
    compiler rejects its flag (the diagnostic names it); or its probe fails, which for a feature every CPU
    has mostly means no C library headers (clang-cl without a Windows SDK, an Apple target without the
    macOS SDK).  Each would otherwise pass as a lower baseline without a word."""
    failed = [n for n in table.machine.min if n in outcomes and not outcomes[n].supported] if table else []
    if table is None or not failed:
        return None
    root = next((n for n in failed if not outcomes[n].reason.startswith("requires ")), failed[0])
    feat, machine = table.features[root], table.machine.name
    reason = (feat.disabled or outcomes[root].reason).splitlines() or ["failed"]
    shown = reason[0] if len(reason[0]) <= 200 else reason[0][:197] + "..."
    flags = table.flags_for(baseline)
    used = f"{' '.join(baseline)} ({' '.join(flags) or 'no flags'})" if baseline else "none (no SIMD is used)"
    if feat.disabled:
        return f"warning: {root}, which every {machine} CPU has, is disabled ({shown}), so the baseline is {used}"
    who = f"compiler '{' '.join(command)}'"
    rejected = [f for f in feat.flags if mentions(shown, f)] if not shown.startswith("flags ") else []
    if rejected:
        return (f"warning: {who} rejects {' '.join(rejected)}, the flag of {root}, which every {machine} CPU has "
                f"({shown}), so the baseline is {used}: give {root} flags this compiler accepts (an override "
                "in the features file), or use another compiler")
    return (f"warning: {who} cannot compile {root}, which every {machine} CPU has ({shown}), so the baseline is "
            f"{used}: give the compiler the headers it needs (the Windows SDK, the macOS SDK, a sysroot), or where "
            "the target has none pass -ffreestanding (clang-cl: /clang:-ffreestanding)")


def document(req: Request, probed: Probed, hit: bool = False, key: str = "", probes: int = 0,
             expr: Expressions | None = None) -> Detection:
    """The detection a request and a compiler's verdicts give: every flag comes from the tables.
    ``expr``: the request's ``expressions`` when the caller has them already."""
    req = _resolved(req)
    expr = expressions(req) if expr is None else expr
    table = _table(req, probed)
    notes: list[str] = list(expr.notes)
    baseline: tuple[str, ...] = ()
    dispatch: tuple[str, ...] = ()
    if table is None:
        notes.append("unsupported architecture: no CPU features are known for this compiler's target")
    else:
        base_sel, disp_sel = _selection(expr, table, probed, notes)
        supported = {n: o.supported and not table.features[n].disabled
                     for n, o in probed.outcomes.items() if n in table.features}
        baseline, dispatch = resolve(table, base_sel, disp_sel, supported)
        notes += dropped_names(expr, table, probed.outcomes)
        notes += unbuilt_rows(table, probed.outcomes) + unbuilt_under_args(table, probed.outcomes)
        warning = guaranteed_failure(table, probed.outcomes, req.command, baseline)
        if warning:
            notes.append(warning)
    return Detection(
        request=req, expressions=expr,
        compiler=CompilerInfo(probed.compiler_id, probed.compiler_version, req.command, req.lang, req.args),
        arch=probed.arch or "unknown", table=table, policy=_policy(req, probed.compiler_id),
        baseline=baseline, dispatch=dispatch, outcomes=dict(probed.outcomes), notes=tuple(notes),
        cache_hit=hit, cache_key=key, probes=probes,
    )


# --------------------------------------------------------------------------- identify, select, probe


def _identify(session: Session, req: Request, named: str | None) -> Compiler:
    """Who the compiler is and what it targets, from one predefined-macro dump (``named``: the id its
    program name implies, for a driver that prints no macros)."""
    from .compiler import Compiler, describe_unknown_target, identify_id, machine_from_macros, version_from_macros
    from .probe import describe_status

    macros, res = session.dump_macros([])
    if macros is None:
        if session.driver.get("macro_dump"):
            what = "failed on" if res.returncode else "printed a diagnostic for"  # exit 0 and a warning
            raise CompilerError(f"compiler '{' '.join(req.command)}' {what} an empty file "
                                f"({describe_status(res.returncode)}): {res.first_line('no output')}")
        macros = {}
    cid = req.compiler_id or (identify_id(macros) if macros or not named else named)
    machine = machine_from_macros(macros)
    if machine is None and req.cpu_family:
        machine = next((m for m in machines() if m.meson_cpu_family == req.cpu_family), None)
    if not session.driver.get("macro_dump") and not req.cpu_family:
        raise InputError(f"compiler '{' '.join(req.command)}' ({cid}) prints no predefined macros, so the "
                         "architecture it targets is unknown: pass --cpu-family (x86_64, x86 or aarch64), "
                         "as Meson does")
    # No macros at all is never a compiler; macros of an unknown target are one only where Meson vouches
    # for it (a project must still configure, without SIMD, on a machine the tables do not cover).
    if session.driver.get("macro_dump") and (not macros or (machine is None and not req.cpu_family)):
        raise CompilerError(describe_unknown_target(req.command, macros))
    version = req.compiler_version or version_from_macros(cid, macros)
    return Compiler(command=req.command, id=cid, version=version, machine=machine, macros=macros, lang=req.lang)


def _native(session: Session, table: Table, req: Request, option: str) -> set[str]:
    """Features the native flag enables; ``option`` is the one that asked for 'native'."""
    from .host import machine_name

    cross = req.cross if req.cross is not None else table.machine.name != machine_name()
    if cross:
        raise InputError(
            f"{option}: 'native' cannot be used when cross-compiling (the build machine's CPU "
            f"is not the {table.machine.name} target's); name the target's features instead"
        )
    if not table.native_flags:
        raise InputError(f"{option}: 'native' is not supported by {table.spec.id} on {table.machine.name}; "
                         "name the features instead")
    macros, res = session.dump_macros(table.native_flags)
    if macros is None:
        raise InputError(f"{option}: 'native' ({' '.join(table.native_flags)}) was refused by {table.spec.id}: "
                         f"{res.first_line('')}")
    return _enabled_by(table, macros)


def _enabled_by(table: Table, macros: dict[str, str]) -> set[str]:
    from .compiler import macro_satisfied

    return {n for n, f in table.features.items()
            if f.macros and not f.disabled and all(macro_satisfied(m, macros) for m in f.macros)}


class _Ahead:
    """The batched probe, started on the machine Meson named while the macro dump still runs.

    Meson tells the helper the compiler id, the host CPU family and that the build is native; when
    that names one machine of the tables, what the request selects there is what the dump will
    almost always confirm.  Probing it at once, in a scratch of its own, overlaps the two compiler
    processes.  It gets one process: the batch.  Its verdicts are used only when that batch
    passed, and the dump names the same machine and compiler and the request selects exactly
    the same features; otherwise its compiler is killed and the plan runs as without it.  Where a
    row's flags must be read (``rules.reads_flags``) it gets two: the batch, then the compile that reads them.
    """

    def __init__(self, req: Request, runner: Runner | None, table: Table, names: set[str], limit: int = 1) -> None:
        import threading

        from .probe import Scratch, Session, probe_features

        self.arch, self.cid, self.names = table.machine.name, str(req.compiler_id), names
        self.scratch = Scratch(runner, limit=limit)
        session = Session(self.scratch, req.command, req.args, req.lang, compiler_spec(self.cid).driver)
        self.result: dict[str, Outcome] | BaseException | None = None

        def work() -> None:
            try:
                self.result = probe_features(session, table, self.names, {})
            except BaseException as exc:  # handed to the caller, which decides whether it matters
                self.result = exc

        self.thread = threading.Thread(target=work, daemon=True)
        self.thread.start()

    @staticmethod
    def applies(req: Request, expr: Expressions, seed: Probed | None) -> bool:
        if seed is not None or req.cross is not False or not req.compiler_id or not req.cpu_family:
            return False
        if expr.native:
            return False  # 'native' needs a macro dump with the native flag first
        return sum(m.meson_cpu_family == req.cpu_family for m in machines()) == 1

    @classmethod
    def start(cls, req: Request, expr: Expressions, seed: Probed | None, runner: Runner | None) -> _Ahead | None:
        """The batch begun on Meson's machine, or None where there is no single guess to make or the
        batch would not be all the plan compiles."""
        if not cls.applies(req, expr, seed):
            return None
        machine = next(m for m in machines() if m.meson_cpu_family == req.cpu_family)
        guess = Probed(machine.name, str(req.compiler_id), "", {})
        try:
            table = _table(req, guess)
            names = _selected(req, expr, table, guess) if table is not None else set()
        except CcoptError:  # whatever the guess trips over, the plan itself will say (or not)
            return None
        if table is None or _merges_flags(table, names):  # targets with flag checks of their own (ARM)
            return None
        if not _reads_flags(table, names):
            return cls(req, runner, table, names)
        # rows whose flags the compiler explains: one compile more where it reads every flag set at once (GCC)
        return cls(req, runner, table, names, 2) if table.spec.driver.get("target_pragma") else None

    def take(self, arch: str | None, cid: str, names: set[str]) -> dict[str, Outcome] | None:
        """Its verdicts if they answer this plan; None (and its compiler stopped) if not."""
        if (arch, cid, names) != (self.arch, self.cid, self.names):
            self.close()
            return None
        self.thread.join()
        if isinstance(self.result, BaseException):  # more than the one batch needed, or a failure the
            return None  # plan will meet (and report) itself
        return self.result

    def close(self) -> None:
        self.scratch.stop()
        self.thread.join()
        self.scratch.close()


def _merges_flags(table: Table, names: set[str]) -> bool:
    """Does a flag of these features fall under a conflict rule (``-march=...+ext`` merged, one
    ``-mtune=`` winning)?  Then a target's own flags may not be a subset of the batch's, and the
    plan checks them with processes of their own (ARM); without such a flag the batch is all."""
    patterns = [re.compile(rule["match"]) for rule in table.conflicts]
    flags = {f for n in table.closure(names) for f in table.features[n].flags}
    return any(p.search(f) for p in patterns for f in flags)


def _reads_flags(table: Table, names: set[str]) -> bool:
    """Does a row's flags need the compiler's word on what they enable (``rules.reads_flags``)?  Then the plan
    asks it after the batch, in a process of its own."""
    from .rules import reads_flags

    return any(reads_flags(table, n) for n in table.closure(names))


def _selected(req: Request, expr: Expressions, table: Table, probed: Probed) -> set[str]:
    """Every feature the request asks the compiler about on this machine, and the machine's glibc-hwcaps
    levels: a variant of any of them is then made from this one probe (``hwcaps.variant``)."""
    base_sel, disp_sel = _selection(expr, table, probed, [])
    explain = {n.upper() for n in req.explain if table.machine.family in families_of(n.upper(), req.project)}
    return base_sel | disp_sel | explain | (hwcaps.probed(table) if not req.disable_optimization else set())


def _probe(req: Request, expr: Expressions, seed: Probed | None, runner: Runner | None) -> tuple[Probed, int]:
    """Run the compiler: identify it (unless seeded), then probe what the request selects."""
    ahead = _Ahead.start(req, expr, seed, runner)
    try:
        return _plan(req, expr, seed, runner, ahead)
    finally:
        if ahead is not None:
            ahead.close()


def _plan(req: Request, expr: Expressions, seed: Probed | None, runner: Runner | None,
          ahead: _Ahead | None) -> tuple[Probed, int]:
    from .compiler import id_from_program
    from .probe import Scratch, Session, architecture_lines, built_alone, probe_features

    with Scratch(runner) as scratch:
        # Meson's id (or the one the program's name implies, or the reference's) drives the macro dump that
        # identifies the compiler; the probes then use the identified compiler's driver, the same session
        # when it agrees.
        named = None if req.compiler_id else id_from_program(req.command)
        seeded = seed.compiler_id if seed else None
        guess = compiler_spec(seeded or req.compiler_id or named or reference_compiler()).driver
        session = Session(scratch, req.command, req.args, req.lang, guess)
        cc = None if seed else _identify(session, req, named)
        cid = seed.compiler_id if seed else cc.id  # type: ignore[union-attr]
        version = seed.compiler_version if seed else cc.version  # type: ignore[union-attr]
        arch = seed.arch if seed else (cc.machine.name if cc and cc.machine else None)
        if arch is None:
            return Probed(None, cid, version, {}), scratch.processes
        driver = compiler_spec(cid).driver
        if driver != guess:
            session = Session(scratch, req.command, req.args, req.lang, driver)
        table = _table(req, Probed(arch, cid, version, {}))
        assert table is not None
        native: set[str] = set(seed.native) if seed else set()
        if uses(expr.baseline + expr.dispatch, "NATIVE") and not native:
            option = "cpu-baseline" if uses(expr.baseline, "NATIVE") else "cpu-dispatch"
            native = _native(session, table, req, option)
        if seed:
            detected, lines = tuple(seed.detected), tuple(seed.lines)
        else:
            macros = dict(cc.macros)  # type: ignore[union-attr]
            lines = architecture_lines(session, table, macros)
            detected = built_alone(session, table, sorted(_enabled_by(table, macros))) if table.context else \
                tuple(sorted(_enabled_by(table, macros)))
        partial = Probed(arch, cid, version, {}, detected, tuple(sorted(native)), lines)
        table = _table(req, partial)
        assert table is not None
        names = _selected(req, expr, table, partial)
        outcomes = ahead.take(arch, cid, names) if ahead is not None else None
        spent = ahead.scratch.processes if ahead is not None else 0
        if outcomes is None:
            outcomes = probe_features(session, table, names, seed.outcomes if seed else {},
                                      dict(cc.macros) if cc is not None and cc.macros else None)
        return partial._replace(outcomes=outcomes), scratch.processes + spent


# --------------------------------------------------------------------------- the API


def detect(req: Request, build_dir: str | os.PathLike[str] | None = None, flush_first: bool = False,
           runner: Runner | None = None) -> Detection:
    """Detect (or read from the cache in ``build_dir``) what ``req.command`` can build."""
    req = _resolved(req)
    _check(req)
    expr = expressions(req)
    key, probe_key = cache.keys(req, render_tokens(expr.baseline), render_tokens(expr.dispatch), expr.native)
    path = cache.cache_file(build_dir, req.lang) if build_dir is not None else None
    if build_dir is not None:
        cache.remove_legacy(build_dir)
    stored = None
    if path is not None and not flush_first:  # a flush probes everything again (this language's file only)
        stored = cache.lookup(path, req.project)
        if stored is not None and stored.key == key:
            # 'targets' reads the request back from this file: it must hold this very request, not another
            # spelling of it (the key normalises expressions) nor one edited behind a copied key.
            if stored.request != req:
                cache.check_request(req)  # (another spelling of a stored request may still be one it cannot hold)
                cache.store(path, stored._replace(request=req))
            return document(req, stored.probed, hit=True, key=key, expr=expr)
    cache.check_request(req)  # a request the cache cannot hold is refused before it is answered
    # Another request with the same compiler and args: its verdicts stand, only new features are probed.
    seed = stored.probed if stored is not None and stored.probe_key == probe_key and stored.probed.arch else None
    try:
        probed, processes = _probe(req, expr, seed, runner)
    except BaseException:
        if flush_first and path is not None:  # the flush asked for must not be undone by a failed probe
            cache.discard(path)
        raise
    if path is not None:
        # A flush's fresh verdicts usually equal the old ones: the file is then left as it was (atomic
        # writes skip identical content), so what was made from it ('targets') stays valid.
        cache.store(path, cache.Stored(key, probe_key, req, probed))
    return document(req, probed, hit=False, key=key, probes=processes, expr=expr)


def flush(build_dir: str | os.PathLike[str]) -> list[Path]:
    """Delete the feature caches of ``build_dir`` (the successor of ``CCompilerOpt.cache_flush()``)."""
    return cache.flush(build_dir)


def read(build_dir: str | os.PathLike[str], lang: str = "c", project: Project | None = None) -> Detection:
    """The detection a build directory currently uses (no compiler is run); ``project``: its features file."""
    path = cache.cache_path(build_dir, lang)
    return read_file(path, f"'ccopt-meson detect --build-dir {build_dir}' or configure first", project)


def read_file(path: str | os.PathLike[str], how_to_make: str = "configure first",
              project: Project | None = None) -> Detection:
    from .errors import CacheError

    try:
        stored = cache.load(path, project)
    except CacheError as exc:
        parent = os.path.dirname(os.fspath(path)) or "."  # Path(path).parent without pathlib
        raise InputError(f"{exc}; run 'ccopt-meson flush {parent}' and configure again") from exc
    if stored is None:
        raise InputError(f"{fsio.show_path(path)} does not exist; run {how_to_make}")
    return document(stored.request, stored.probed, hit=True, key=stored.key)


__all__ += ["read_file", "expressions", "Expressions", "Outcome"]
