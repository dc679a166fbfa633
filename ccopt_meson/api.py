"""Detection, end to end: request -> cache -> probe -> resolve -> document.

This is the Python API behind the CLI and the Meson glue (and the one a
setuptools or scikit-build user calls).  The result is a plain JSON-able dict,
the same document the cache file holds and ``detect --json`` prints.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

from . import cache
from .compiler import Compiler, binary_identity, identify_id, machine_from_macros, macro_satisfied, version_from_macros
from .errors import CompilerError, InputError
from .resolve import SPECIAL, Token, evaluate, render, resolve, tokenize, uses
from .tables import Table, compiler_spec, compilers_data, data_digest, families_of, machines, table_for

if TYPE_CHECKING:  # the probe stage (subprocess, threads, tempfiles) is imported on a cache miss only
    from .probe import Outcome, Runner, Session

__all__ = ["Request", "detect", "flush", "read", "DEFAULT_BASELINE", "DEFAULT_DISPATCH", "host_machine_name"]

DEFAULT_BASELINE = "min"
DEFAULT_DISPATCH = "max"


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


def host_machine_name() -> str:
    """The machine running this helper, only used to refuse ``native`` for cross builds."""
    if hasattr(os, "uname"):
        m = os.uname().machine.lower()
    else:  # Windows; platform costs ~10 ms to import, so only there
        import platform

        m = platform.machine().lower()
    aliases = {"amd64": "x86_64", "x64": "x86_64", "i386": "x86", "i686": "x86", "arm64": "aarch64",
               "armv7l": "armhf", "armv8l": "armhf", "ppc64el": "ppc64le"}
    return aliases.get(m, m)


def _tokens(req: Request) -> tuple[list[Token], list[Token]]:
    base = tokenize(req.baseline, "cpu-baseline")
    disp = tokenize(req.dispatch, "cpu-dispatch")
    for name in req.explain:
        if any(t.word in SPECIAL or t.op == "-" for t in tokenize(name, "explain")):
            raise InputError(f"explain: '{name}' is not a feature name; 'ccopt-meson features' lists them")
    if req.disable_optimization:
        for opt, toks, default in (("cpu-baseline", base, DEFAULT_BASELINE), ("cpu-dispatch", disp, DEFAULT_DISPATCH)):
            if render(toks) not in (default.upper(), "NONE"):
                raise InputError(
                    f"{opt}: '{render(toks).lower()}' conflicts with disable-optimization=true, "
                    f"which turns every CPU feature off; unset one of the two"
                )
        return [], []
    # the user's own -march/-mcpu/... already picked a CPU: its features join the baseline
    picked = compilers_data()["arch_selecting_args"]["patterns"]
    if any(re.search(p, a) for p in picked for a in req.args) and not uses(base, "DETECT"):
        base = [*base, Token("+", "DETECT")]
    return base, disp


def _compiler_factors(req: Request) -> dict[str, Any]:
    """What probe outcomes depend on: the compiler, its args and the tables, not the request."""
    from . import __version__

    return {
        "helper": __version__, "data": data_digest(), "command": list(req.command),
        "binaries": binary_identity(req.command), "args": list(req.args), "lang": req.lang,
        "id": req.compiler_id, "version": req.compiler_version, "cpu_family": req.cpu_family,
    }


def _key(req: Request, base: list[Token], disp: list[Token], compiler: dict[str, Any]) -> str:
    return cache.make_key({
        **compiler,
        "cross": req.cross, "baseline": render(base), "dispatch": render(disp),
        "disable_optimization": req.disable_optimization, "debug_build": req.debug_build,
        "explain": sorted(n.upper() for n in req.explain),
        # 'native' (or -march=native in the args) answers for this CPU: a build dir taken to
        # another machine must not reuse it
        "host_cpu": host_cpu_identity() if uses(base + disp, "NATIVE") or _native_arg(req.args) else None,
    })


# /proc/cpuinfo fields that say which CPU this is (not its clock or the core number)
_CPU_FIELDS = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags", "features", "cpu implementer",
               "cpu architecture", "cpu variant", "cpu part", "cpu", "revision", "isa", "uarch", "facilities")


def host_cpu_identity() -> str:
    """The running CPU's identity, for the cache key of native builds."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            block = fh.read().split("\n\n")[0]
    except OSError:
        import platform

        return f"{platform.machine()} {platform.processor()}"
    fields = (line.partition(":") for line in block.splitlines())
    return "\n".join(f"{k.strip()}:{v.strip()}" for k, _, v in fields if k.strip().lower() in _CPU_FIELDS)


def _native_arg(args: Sequence[str]) -> bool:
    return any(a.endswith("=native") or a in ("-xHost", "/QxHost") for a in args)


def _identify(session: Session, req: Request) -> Compiler:
    from .probe import describe_status

    macros, res = session.dump_macros([])
    if macros is None:
        if session.driver.get("macro_dump"):
            first = next((ln for ln in res.output.splitlines() if ln.strip()), "no output")
            raise CompilerError(
                f"compiler '{' '.join(req.command)}' failed on an empty file "
                f"({describe_status(res.returncode)}): {first}"
            )
        macros = {}
    cid = req.compiler_id or identify_id(macros)
    machine = machine_from_macros(macros)
    if machine is None and req.cpu_family:
        machine = next((m for m in machines() if m.meson_cpu_family == req.cpu_family), None)
    return Compiler(
        command=req.command, id=cid, version=req.compiler_version or version_from_macros(cid, macros),
        machine=machine, macros=macros, lang=req.lang,
    )


def _seeded_compiler(seed: dict[str, Any], req: Request) -> Compiler:
    """The compiler as an earlier run with the same command and args identified it (no process)."""
    machine = next((m for m in machines() if m.name == seed["arch"]), None)
    comp = seed["compiler"]
    return Compiler(command=req.command, id=comp["id"], version=comp["version"], machine=machine, macros={},
                    lang=req.lang)


def _known(seed: dict[str, Any] | None, table: Table) -> dict[str, Outcome]:
    """Outcomes an earlier run with the same compiler and args already probed."""
    from .probe import Outcome

    known: dict[str, Outcome] = {}
    for name, feat in (seed or {}).get("features", {}).items():
        if name in table.features and feat["supported"] is not None:
            known[name] = Outcome(bool(feat["supported"]), str(feat["reason"]))
            for extra, ok in feat["extra_checks"].items():
                known[extra] = Outcome(bool(ok), "" if ok else "its probe failed")
    return known


def _native(session: Session, table: Table, cc: Compiler, cross: bool, option: str) -> set[str]:
    """Features ``-march=native`` (or the like) enables; ``option`` is the one that asked for 'native'."""
    if cross:
        raise InputError(
            f"{option}: 'native' cannot be used when cross-compiling (the build machine's CPU "
            f"is not the {cc.arch} target's); name the target's features instead"
        )
    if not table.native_flags:
        raise InputError(f"{option}: 'native' is not supported by {cc.id} on {cc.arch}; name the features instead")
    macros, res = session.dump_macros(table.native_flags)
    if macros is None:
        first = next((ln for ln in res.output.splitlines() if ln.strip()), "")
        raise InputError(f"{option}: 'native' ({' '.join(table.native_flags)}) was refused by {cc.id}: {first}")
    return _enabled_by(table, macros)


def _enabled_by(table: Table, macros: dict[str, str]) -> set[str]:
    return {n for n, f in table.features.items()
            if f.macros and not f.disabled and all(macro_satisfied(m, macros) for m in f.macros)}


def _feature_doc(table: Table, outcomes: dict[str, Outcome], name: str) -> dict[str, Any]:
    f = table.features[name]
    out = outcomes.get(name)
    if f.disabled:
        supported: bool | None = False
        reason = f.disabled
    elif out is None:
        supported, reason = None, "not probed: not part of the request"
    else:
        supported, reason = out.supported, out.reason
    return {
        "supported": supported, "reason": reason, "interest": f.interest,
        "implies": table.sort(table.closure([name]) - {name}),
        "args": table.flags_for([name]), "group": list(f.group), "headers": list(f.headers),
        "autovec": bool(f.flags), "detect": [name],
        "extra_checks": {e: outcomes[e].supported for e in f.extra_checks if e in outcomes},
    }


def _document(req: Request, cc: Compiler, table: Table | None, outcomes: dict[str, Outcome],
              base_sel: set[str], disp_sel: set[str], notes: list[str]) -> dict[str, Any]:
    from . import __version__

    spec = compiler_spec(cc.id)
    doc: dict[str, Any] = {
        "schema_version": cache.SCHEMA_VERSION, "helper_version": __version__,
        "arch": cc.arch, "family": cc.machine.family if cc.machine else None,
        "compiler": {"id": cc.id, "version": cc.version, "command": list(cc.command), "lang": cc.lang,
                     "args": list(req.args)},
        "request": {"baseline": req.baseline, "dispatch": req.dispatch,
                    "disable_optimization": req.disable_optimization},
        "policy": {"opt": list(spec.opt), "werror": list(spec.werror),
                   "debug": req.debug_build or any(re.search(p, a) for p in spec.debug_patterns for a in req.args)},
        "baseline": {"names": [], "args": []}, "dispatch": {"names": [], "args": {}},
        "features": {}, "notes": notes,
    }
    if table is None:
        return doc
    supported = {n: o.supported for n, o in outcomes.items()}
    res = resolve(table, base_sel, disp_sel, supported)
    doc["baseline"] = {"names": list(res.baseline), "args": table.flags_for(res.baseline)}
    doc["dispatch"] = {"names": list(res.dispatch),
                       "args": {n: table.flags_for([*res.baseline, n]) for n in res.dispatch}}
    doc["features"] = {n: _feature_doc(table, outcomes, n) for n in table.features}
    return doc


def detect(req: Request, build_dir: str | os.PathLike[str] | None = None, flush_first: bool = False,
           runner: Runner | None = None) -> dict[str, Any]:
    """Detect (or read from the cache) what ``req.command`` can build; see the module doc."""
    if not req.command or not all(isinstance(c, str) and c for c in req.command):
        raise InputError("the compiler command is empty; pass --cc or set CC")
    if req.lang not in ("c", "cpp"):
        raise InputError(f"unknown language '{req.lang}'; use 'c' or 'cpp'")
    base_tokens, disp_tokens = _tokens(req)
    factors = _compiler_factors(req)
    key = _key(req, base_tokens, disp_tokens, factors)
    path = cache.cache_path(build_dir, req.lang) if build_dir is not None else None
    prev = None
    if path is not None:
        if flush_first:  # this language's file only: the other one may be fresh from this very run
            cache.discard(path)
        prev = cache.read(path)
        if prev is not None and prev["cache"].get("key") == key:
            prev["cache"] = {"hit": True, "key": key}
            prev["probes"] = 0
            return prev
    # Another request with the same compiler and args: its outcomes stand, only new features are probed.
    probe_key = cache.make_key(factors)
    seed = prev if prev is not None and prev.get("probe_key") == probe_key else None
    spec_driver = compiler_spec(req.compiler_id or "gcc").driver
    from .probe import Session, probe_features

    with Session(req.command, req.args, req.lang, spec_driver, runner) as session:
        cc = _seeded_compiler(seed, req) if seed else _identify(session, req)
        session.driver = compiler_spec(cc.id).driver
        notes: list[str] = []
        table = table_for(cc.machine.name, cc.id).with_context(req.args) if cc.machine else None
        outcomes: dict[str, Outcome] = {}
        base_sel: set[str] = set()
        disp_sel: set[str] = set()
        doc_detected: list[str] = []
        if table is None:
            notes.append("unsupported architecture: no CPU features are known for this compiler's target")
        else:
            cross = req.cross if req.cross is not None else table.machine.name != host_machine_name()
            native: set[str] = set()
            if uses(base_tokens + disp_tokens, "NATIVE"):
                option = "cpu-baseline" if uses(base_tokens, "NATIVE") else "cpu-dispatch"
                native = _native(session, table, cc, cross, option)
            detected = set(seed["detected"]) if seed else _enabled_by(table, dict(cc.macros))
            base_sel = evaluate(base_tokens, table, native, detected, notes, "cpu-baseline")
            disp_sel = evaluate(disp_tokens, table, native, detected, notes, "cpu-dispatch")
            explain = {n.upper() for n in req.explain if table.machine.family in families_of(n.upper())}
            outcomes = probe_features(session, table, base_sel | disp_sel | explain, _known(seed, table))
            doc_detected = sorted(detected)
        doc = _document(req, cc, table, outcomes, base_sel, disp_sel, notes)
        doc["probe_key"] = probe_key
        doc["detected"] = doc_detected
        doc["cache"] = {"hit": False, "key": key}
        doc["probes"] = session.processes
    if path is not None:
        cache.store(path, doc)
    return doc


def flush(build_dir: str | os.PathLike[str]) -> list[Path]:
    """Delete the feature cache of ``build_dir`` (the successor of ``CCompilerOpt.cache_flush()``)."""
    return cache.flush(build_dir)


def read(build_dir: str | os.PathLike[str], lang: str = "c") -> dict[str, Any]:
    """The detection document a build directory currently uses."""
    path = cache.cache_path(build_dir, lang)
    try:
        import json

        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError(
            f"{path} does not exist; run 'ccopt-meson detect --build-dir {build_dir}' or configure first"
        ) from exc
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(f"{path} is unreadable or corrupt ({exc}); run 'ccopt-meson flush {build_dir}'") from exc
    if not isinstance(doc, dict) or doc.get("schema_version") != cache.SCHEMA_VERSION:
        raise InputError(f"{path} was written by another version of ccopt-meson; run 'ccopt-meson flush {build_dir}'")
    if not cache.content_ok(doc):
        raise InputError(f"{path} was modified after it was written; run 'ccopt-meson flush {build_dir}' "
                         "and configure again")
    return doc


