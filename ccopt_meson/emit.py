"""Generated headers: ``ccopt_config.h``, ``ccopt_kernel.h`` and one ``<source>.h`` per dispatch source.

Output is a pure function of the ``Detection`` (no timestamps, no
absolute paths, stable order); files are rewritten only when their content
changes, so a no-change reconfigure recompiles nothing.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from . import fsio, manifest
from ._record import TYPE_CHECKING
from .dispatch import Target, guard
from .errors import InputError
from .records import Detection
from .tables import macro_name
from .version import __version__

if TYPE_CHECKING:
    import os
    from typing import Sequence

__all__ = ["config_header", "kernel_header", "KERNEL_HEADER", "dispatch_header", "numpy_dispatch_header",
           "source_header", "manifest_block", "write_if_changed", "header_name", "source_id"]

_BANNER = "/* " + fsio.MARK + " {version} from {what}; do not edit. */\n"


def write_if_changed(path: str | os.PathLike[str], text: str) -> bool:
    return fsio.atomic_write(path, text)


def _xmacro(name: str, cb_line: str, items: Sequence[str]) -> list[str]:
    if not items:
        return [name]
    body = [f"\t{cb_line.format(item=i)}" for i in items]
    return [f"{name} \\"] + [line + " \\" for line in body[:-1]] + [body[-1]]


KERNEL_HEADER = "ccopt_kernel.h"


def kernel_header(det: Detection) -> str:
    """What every version of a kernel is compiled with (force-included): the arch, the baseline and
    the intrinsics headers.  Nothing here depends on the dispatch list, so a ``cpu-dispatch``
    change rewrites only ``ccopt_config.h`` and recompiles only the kernels whose targets changed."""
    base = list(det.baseline)
    arch = det.arch
    lines = [_BANNER.format(version=__version__, what="the feature detection of this build").rstrip(),
             "#ifndef CCOPT_KERNEL_H_", "#define CCOPT_KERNEL_H_", "",
             f'#define CCOPT_ARCH "{arch}"',
             f"#define CCOPT_ARCH_{arch.upper()} 1" if arch != "unknown" else "#define CCOPT_ARCH_UNKNOWN 1"]
    if det.request.disable_optimization:
        lines.append("#define CCOPT_DISABLE_OPTIMIZATION 1")
    lines += [f'#define CCOPT_WITH_CPU_BASELINE "{" ".join(base)}"', f"#define CCOPT_WITH_CPU_BASELINE_N {len(base)}",
              "#ifndef CCOPT__EXPAND", "#define CCOPT__EXPAND(X) X", "#endif"]
    lines += _xmacro("#define CCOPT_WITH_CPU_BASELINE_CALL(CB, ...)", "CCOPT__EXPAND(CB({item}, __VA_ARGS__))", base)
    # ccopt's run-time defines CCOPT_CPU_MANIFEST before including this header: one note in what links it
    lines += ["", "/* The run-time's dispatch manifest note: the baseline (docs/explanation/isa-audit.md) */",
              "#ifdef CCOPT_CPU_MANIFEST", *manifest.note_c("ccopt__manifest_runtime", manifest.note_text(base)),
              "#endif"]
    lines += ["", "/* baseline features (target builds also get CCOPT_HAVE_* of their own features as -D) */"]
    for n in det.have_names(base) if det.table else ():
        have = det.macro_name("have", name=n)
        lines += [f"#ifndef {have}", f"#define {have} 1", "#endif"]
    headers: dict[str, list[str]] = {}
    for n, f in sorted(det.table.features.items() if det.table else (), key=lambda kv: (kv[1].interest, kv[0])):
        for h in f.headers:
            headers.setdefault(h, []).append(n)
    if headers:
        lines += ["", "/* intrinsics headers of the features this translation unit is built for */",
                  "#ifndef CCOPT_NO_INTRIN_HEADERS"]
        guards = det.table.header_guards if det.table else {}
        for h, owners in headers.items():
            cond = " || ".join(f"defined({det.macro_name('have', name=n)})" for n in owners)
            cond = f"({cond}) && !defined({guards[h]})" if h in guards else cond
            lines += [f"#if {cond}", f"#include <{h}>", "#endif"]
        lines += ["#endif"]
    lines += ["", "#endif /* CCOPT_KERNEL_H_ */", ""]
    return "\n".join(lines)


def config_header(det: Detection) -> str:
    """The main config header: ``ccopt_kernel.h`` and the build-wide dispatch list."""
    disp = list(det.dispatch)
    lines = [_BANNER.format(version=__version__, what="the feature detection of this build").rstrip(),
             "#ifndef CCOPT_CONFIG_H_", "#define CCOPT_CONFIG_H_", "", f'#include "{KERNEL_HEADER}"', "",
             f'#define CCOPT_WITH_CPU_DISPATCH "{" ".join(disp)}"', f"#define CCOPT_WITH_CPU_DISPATCH_N {len(disp)}"]
    lines += _xmacro("#define CCOPT_WITH_CPU_DISPATCH_CALL(CB, ...)", "CCOPT__EXPAND(CB({item}, __VA_ARGS__))", disp)
    lines += ["", "#endif /* CCOPT_CONFIG_H_ */", ""]
    return "\n".join(lines)


def header_name(source: str) -> str:
    """``dot.dispatch.c`` -> ``dot.dispatch.h``."""
    stem = PurePath(source).name
    return (stem.rsplit(".", 1)[0] if "." in stem else stem) + ".h"


def source_id(source: str) -> str:
    """The name callers give the macros for ``source``: ``dot.dispatch.c`` -> ``dot_dispatch``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", header_name(source)[:-2])


def dispatch_header(source: str, targets: Sequence[Target], origin: str = "the @targets statement") -> str:
    """Per-source header: macros named after the source (``CCOPT_SRC_<id>_*``), so headers compose.

    ``ccopt_dispatch.h`` walks them: every function a caller binds to ``<id>`` gets this
    source's target list, whatever other dispatch headers the translation unit includes.
    """
    sid = source_id(source)
    real = [t for t in targets if t.name != "BASELINE"]
    has_base = any(t.name == "BASELINE" for t in targets)
    checks = [("&&".join(f"CHK({m})" for m in guard(None, t)), t.name) for t in real]
    pre = macro_name("source", id=sid)
    lines = [_BANNER.format(version=__version__, what=f"{origin} of {PurePath(source).name}").rstrip(),
             f"#ifndef {pre}", f"#define {pre} 1", '#include "ccopt_dispatch.h"', "",
             f'#define {pre}_TARGETS "{" ".join(t.name for t in targets)}"']
    lines += [f"#define {macro_name('source_has', id=sid, target=t.name)} 1" for t in targets]
    # a C source's versions have C linkage: a C++ caller declares them extern "C" (a C++ source's keep C++'s)
    link = ("CCOPT__C_BEGIN", "CCOPT__C_END") if PurePath(source).suffix == ".c" else ("", "")
    lines += [f"#define {pre}_LINK_BEGIN {link[0]}".rstrip(), f"#define {pre}_LINK_END {link[1]}".rstrip()]
    lines += [f"#define {pre}_CHECK_{name}(CHK) ({c})" for c, name in checks]
    lines += [f"#define {pre}_CHECK_BASELINE(CHK) 1"] if has_base else []
    lines += _xmacro(f"#define {pre}_CALL(CHK, CB, ...)", "{item}", [
        f"CCOPT__EXPAND(CB(({c}), {name}, __VA_ARGS__))" for c, name in checks])
    if has_base:
        lines += [f"#define {pre}_BASE(CB, ...) CCOPT__EXPAND(CB(1, BASELINE, __VA_ARGS__))",
                  f"#define {pre}_FALLBACK(NAME) NAME##_BASELINE",
                  f'#define {pre}_FALLBACK_NAME "BASELINE"']
    else:
        lines += [f"#define {pre}_BASE(CB, ...)", f"#define {pre}_FALLBACK(NAME) 0",
                  f'#define {pre}_FALLBACK_NAME "none"']
    lines += ["", f"#endif /* {pre} */"]
    return "\n".join(lines) + "\n"


def numpy_dispatch_header(det: Detection, source: str, targets: Sequence[Target],
                          origin: str = "the @targets statement") -> str:
    """Per-source header in numpy's protocol: ``<P>MTARGETS_CONF_BASELINE`` / ``<P>MTARGETS_CONF_DISPATCH``
    (``#undef`` first: numpy's headers redefine them per source), read by numpy's ``npy_cpu_dispatch.h``.

    numpy's run-time does not enforce implication, so each target tests its whole implied closure,
    as far as the run-time knows the names (a project's ``max`` list names them), not its members alone;
    a project's own feature set says what to test itself (each row's ``detect``, as numpy's rows do).
    """
    p = det.request.macros.prefix
    table = det.table
    known = table.project.max_of(table.machine.family) if table is not None and table.project else None
    lines = [_BANNER.format(version=__version__, what=f"{origin} of {PurePath(source).name}").rstrip()]
    base = any(t.name == "BASELINE" for t in targets)
    # numpy's npy_cpu_dispatch.h does not define the expander: each generated header does (as the fork's)
    lines += [f"#undef {p}_MTARGETS_EXPAND", f"#define {p}_MTARGETS_EXPAND(X) X",
              f"#undef {p}MTARGETS_CONF_BASELINE",
              f"#define {p}MTARGETS_CONF_BASELINE(EXEC_CB, ...)"
              + (f" {p}_MTARGETS_EXPAND(EXEC_CB(__VA_ARGS__))" if base else ""),
              f"#undef {p}MTARGETS_CONF_DISPATCH"]
    rows = []
    for t in targets:
        if t.name == "BASELINE" or table is None:
            continue
        untestable = [n for n in t.members if known is not None and n not in known]
        if untestable:  # a weaker test would pick this version on a CPU without it
            raise InputError(f"dispatch source '{PurePath(source).name}': target {t.name} needs "
                             f"{', '.join(untestable)}, which the project's run-time cannot test (its features "
                             "file's 'max' does not list it); remove it from the target list or add it to 'max'")
        cond = "&&".join(f"TEST_CB({n})" for n in guard(det, t)) or "1"
        rows.append(f"{p}_MTARGETS_EXPAND(EXEC_CB(({cond}), {t.name}, __VA_ARGS__))")
    lines += _xmacro(f"#define {p}MTARGETS_CONF_DISPATCH(TEST_CB, EXEC_CB, ...)", "{item}", rows)
    return "\n".join(lines) + "\n"


def source_header(det: Detection, source: str, targets: Sequence[Target],
                  origin: str = "the @targets statement") -> str:
    """``<source>.h`` in the build's macro style (its ``header`` in ``data/macros.json``)."""
    from .tables import macro_style

    if macro_style(det.request.macros.style)["header"] == "numpy":
        text = numpy_dispatch_header(det, source, targets, origin)
    else:
        text = dispatch_header(source, targets, origin)
    return text + manifest_block(det, source, targets)


def manifest_block(det: Detection, source: str, targets: Sequence[Target]) -> str:
    """The source's dispatch manifest note (``manifest``): the baseline and each version's run-time test, once
    per translation unit that includes the header (its own guard: numpy's headers have none)."""
    sid = source_id(source)
    note = manifest.note_text(det.baseline, sid, {t.name: guard(det, t) for t in targets})
    guard_macro = f"CCOPT__MANIFEST_{sid}"
    lines = ["", "/* The dispatch manifest (docs/explanation/isa-audit.md): read by ccopt-meson audit. */",
             f"#ifndef {guard_macro}", f"#define {guard_macro} 1",
             *manifest.note_c(f"ccopt__manifest_{sid}", note), "#endif"]
    return "\n".join(lines) + "\n"
