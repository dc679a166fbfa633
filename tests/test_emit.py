"""Generated headers: ``ccopt_config.h``, ``ccopt_kernel.h`` and ``<source>.h`` (golden files), written only
when they change."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from ccopt_meson import Detection, Request, detect
from ccopt_meson.dispatch import parse_text, select
from ccopt_meson.emit import config_header, dispatch_header, header_name, kernel_header, write_if_changed

from .conftest import NUMPY22, ROOT
from .helpers import cli, configure_args, fakecc, one_error, x86_gcc

GOLDEN = Path(__file__).parent / "data" / "golden"


@pytest.fixture
def gcc12_x86_64(fake: Callable[..., Any]) -> Detection:
    """gcc 12 on x86_64 (recorded), the default baseline, every dispatch target but XOP and FMA4."""
    return detect(Request(command=("fakecc",), baseline="min", dispatch="max -xop -fma4"), runner=fake())


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("CCOPT_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; rerun with CCOPT_UPDATE_GOLDEN=1 if intended"


def test_golden_config_header(gcc12_x86_64: Detection) -> None:
    _golden("ccopt_config.x86_64-gcc.h", config_header(gcc12_x86_64))
    _golden("ccopt_kernel.x86_64-gcc.h", kernel_header(gcc12_x86_64))


def test_the_kernel_header_does_not_depend_on_the_dispatch_list(fake: Callable[..., Any]) -> None:
    """Every kernel version force-includes ccopt_kernel.h: a cpu-dispatch change must leave it as it is
    (else every kernel recompiles), and ccopt_config.h still holds everything."""
    docs = [detect(Request(command=("fakecc",), dispatch=d), runner=fake()) for d in ("max", "avx2 sse41", "none")]
    assert len({kernel_header(d) for d in docs}) == 1 and len({config_header(d) for d in docs}) == 3
    assert '#include "ccopt_kernel.h"' in config_header(docs[0])
    assert "CCOPT_WITH_CPU_DISPATCH" not in kernel_header(docs[0])


def test_golden_dispatch_header(gcc12_x86_64: Detection) -> None:
    targets = select(parse_text("/*@targets $maxopt baseline sse42 (fma3 avx2) avx512_skx asimd */"), gcc12_x86_64)
    assert header_name("src/kern.dispatch.c") == "kern.dispatch.h"
    _golden("kern.dispatch.h", dispatch_header("src/kern.dispatch.c", targets))


def test_unguarded_vendor_headers_get_a_guard(fake: Callable[..., Any]) -> None:
    """clang's <vecintrin.h> has no include guard: a second inclusion by the user's code must not break."""
    doc = detect(Request(command=("fakecc",), baseline="vx"), runner=fake(scenario="gcc12-s390x"))
    assert "(defined(CCOPT_HAVE_VX)) && !defined(__VEC_CLASS_FP_ZERO)" in kernel_header(doc)


def test_headers_are_rewritten_only_when_they_change(gcc12_x86_64: Detection, tmp_path: Path) -> None:
    """A no-change reconfigure must not touch the header's mtime: everything including it would recompile."""
    path = tmp_path / "ccopt_config.h"
    assert write_if_changed(path, config_header(gcc12_x86_64)) is True
    before = path.stat().st_mtime_ns
    os.utime(path, ns=(before - 10**9, before - 10**9))
    assert write_if_changed(path, config_header(gcc12_x86_64)) is False
    assert path.stat().st_mtime_ns == before - 10**9


def test_directory_in_place_of_the_config_header(tmp_path: Path) -> None:
    (tmp_path / "ccopt_config.h").mkdir()
    one_error(cli(*configure_args(tmp_path, x86_gcc(), "--write-config")),
              f"cannot write {tmp_path / 'ccopt_config.h'}: Is a directory")


# --------------------------------------------------------------------------- numpy's macro protocol


@pytest.fixture
def numpy_style(fake: Callable[..., Any]) -> Detection:
    from ccopt_meson import project
    from ccopt_meson.records import Macros

    req = Request(command=("fakecc",), dispatch="max -xop -fma4", project=project.load(NUMPY22),
                  macros=Macros("NPY_", "numpy"))
    return detect(req, runner=fake())


LIMITED = ["SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2"]


def _limited_max(tmp_path: Path, fake: Callable[..., Any], **kw: Any) -> Detection:
    """A build whose features file's 'max' lists only LIMITED: a project run-time that knows those names."""
    from ccopt_meson import project

    path = tmp_path / "ccopt.json"
    path.write_text(json.dumps({"max": {"x86": LIMITED}}))
    return detect(Request(command=("fakecc",), dispatch="max", project=project.load(path), **kw), runner=fake())


def test_numpy_style_args_spell_numpys_macros(numpy_style: Detection) -> None:
    """The fork's compile line of the AVX2 version of _umath_tests: -DNPY_HAVE_* (no =1) of the closure, the
    fork's flags, -DNPY_MTARGETS_CURRENT=AVX2; the baseline library -DNPY_MTARGETS_BASELINE."""
    from ccopt_meson.dispatch import baseline_target, make_target

    args = make_target(numpy_style, ["AVX2"]).args
    defines = {a for a in args if a.startswith("-D")}
    assert defines == {f"-DNPY_HAVE_{n}" for n in ("SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "AVX",
                                                   "F16C", "FMA3", "AVX2")} | {"-DNPY_MTARGETS_CURRENT=AVX2"}
    assert [a for a in args if not a.startswith("-D")][-5:] == ["-mavx2", "-maes", "-mpclmul", "-mbmi", "-mbmi2"]
    assert baseline_target(numpy_style).args[-1] == "-DNPY_MTARGETS_BASELINE"
    assert not any("CCOPT" in a for a in [*args, *numpy_style.baseline_args()])


def test_golden_numpy_dispatch_header(numpy_style: Detection) -> None:
    """numpy's form: #undef then #define of NPY_MTARGETS_CONF_BASELINE/_DISPATCH, each target testing what
    numpy 2.2's rows' 'detect' say (as the fork writes it), no include of ccopt's headers."""
    from ccopt_meson.emit import source_header

    targets = select(parse_text("/*@targets baseline (avx2 fma3) sse41 sse2 */", project=numpy_style.request.project),
                     numpy_style)
    text = source_header(numpy_style, "_umath_tests.dispatch.c", targets)
    assert "#undef NPY_MTARGETS_CONF_DISPATCH" in text and "ccopt_dispatch.h" not in text
    # numpy's npy_cpu_dispatch.h expands the rows through NPY__MTARGETS_EXPAND but never defines it
    assert "#undef NPY__MTARGETS_EXPAND\n#define NPY__MTARGETS_EXPAND(X) X\n" in text
    # numpy 2.2's AVX 'detect' replaces the SSE names: the fork's test of its AVX2
    assert "EXEC_CB((TEST_CB(POPCNT)&&TEST_CB(AVX)&&TEST_CB(F16C)&&TEST_CB(FMA3)&&TEST_CB(AVX2)), AVX2, " in text
    _golden("_umath_tests.numpy.dispatch.h", text)
    nobase = select(parse_text("/*@targets avx2 */", project=numpy_style.request.project), numpy_style)
    assert "#define NPY_MTARGETS_CONF_BASELINE(EXEC_CB, ...)\n" in source_header(numpy_style, "k.dispatch.c", nobase)


def test_numpy_style_tests_a_targets_closure_within_max(tmp_path: Path, fake: Callable[..., Any]) -> None:
    """Without a feature set of its own, a target tests its implied closure (numpy's run-time does not enforce
    implication), limited to the names 'max' lists (SSE42_ISA, FMA3_ISA, AVX2_ISA are not among them)."""
    from ccopt_meson.emit import source_header
    from ccopt_meson.records import Macros

    det = _limited_max(tmp_path, fake, macros=Macros("NPY_", "numpy"))
    targets = select(parse_text("/*@targets baseline (avx2 fma3) */", project=det.request.project), det)
    assert ("EXEC_CB((TEST_CB(SSE)&&TEST_CB(SSE2)&&TEST_CB(SSE3)&&TEST_CB(SSSE3)&&TEST_CB(SSE41)&&TEST_CB(POPCNT)"
            "&&TEST_CB(SSE42)&&TEST_CB(AVX)&&TEST_CB(F16C)&&TEST_CB(FMA3)&&TEST_CB(AVX2)), ") in source_header(
                det, "k.dispatch.c", targets)


def test_numpy_style_forces_no_include(numpy_style: Detection, fake: Callable[..., Any]) -> None:
    from ccopt_meson.meson_glue import TargetsOptions, _target_args

    target = select(parse_text("/*@targets avx2 */", project=numpy_style.request.project), numpy_style)[0]
    assert not any(a.startswith("ccopt_") for a in _target_args(numpy_style, target, TargetsOptions((), "f")))
    plain = detect(Request(command=("fakecc",), dispatch="max -xop -fma4"), runner=fake())
    target = select(parse_text("/*@targets avx2 */"), plain)[0]
    assert "ccopt_kernel.h" in _target_args(plain, target, TargetsOptions((), "f"))


@pytest.mark.parametrize(("prefix", "style", "message"), [
    ("npy_", "numpy", "macro-prefix: 'npy_' must be upper-case letters"),
    ("NPY", "numpy", "macro-prefix: 'NPY' must be upper-case letters, digits and '_', ending in '_'"),
    ("X=1 -fplugin=a.so -D", "ccopt", "macro-prefix: "),
    ("NPY_", "numpi", r"header-style: unknown style 'numpi' \(did you mean 'numpy'\?\)"),
])
def test_bad_macro_protocol_is_one_line(fake: Callable[..., Any], prefix: str, style: str, message: str) -> None:
    from ccopt_meson.errors import InputError
    from ccopt_meson.records import Macros

    with pytest.raises(InputError, match=message):
        detect(Request(command=("fakecc",), macros=Macros(prefix, style)), runner=fake())


def test_numpy_style_refuses_a_target_its_runtime_cannot_test(tmp_path: Path, fake: Callable[..., Any]) -> None:
    """AVX_VNNI is not among the names 'max' lists: testing only its closure would pick it on a CPU without it."""
    from ccopt_meson.emit import source_header
    from ccopt_meson.errors import InputError
    from ccopt_meson.pipeline import document
    from ccopt_meson.records import Macros, Outcome, Probed

    limited = _limited_max(tmp_path, fake, macros=Macros("NPY_", "numpy"))
    probed = Probed("x86_64", "gcc", "12.2.0", {n: Outcome(True) for n in limited.table.features})
    det = document(limited.request._replace(dispatch="max avx_vnni"), probed)
    targets = select(parse_text("/*@targets baseline avx_vnni avx2 */", project=det.request.project), det)
    with pytest.raises(InputError, match="target AVX_VNNI needs AVX_VNNI, which the project's run-time cannot test"):
        source_header(det, "k.dispatch.c", targets)


# --------------------------------------------------------------------------- the macro protocol as data only


def test_a_prefix_the_ccopt_headers_cannot_follow_is_one_line(fake: Callable[..., Any]) -> None:
    """macro-prefix=MY_ with the ccopt style compiled every version as *_BASELINE and failed at link
    (ccopt_dispatch.h reads CCOPT_TARGET): the style owns its prefix, the request is refused at once."""
    from ccopt_meson.errors import InputError
    from ccopt_meson.records import Macros

    with pytest.raises(InputError, match="macro-prefix: 'MY_' cannot be used with header-style=ccopt, whose headers "
                       r"\(ccopt_dispatch.h, ccopt_cpu_table.h\) spell CCOPT_; leave macro-prefix at CCOPT_, or use "
                       "header-style=numpy"):
        detect(Request(command=("fakecc",), macros=Macros("MY_", "ccopt")), runner=fake())
    one_error(cli(*configure_args(Path("/nonexistent-out"), fakecc("instant"), "--macro-prefix", "MY_")),
              "macro-prefix: 'MY_' cannot be used with header-style=ccopt")


def test_every_macro_the_headers_read_is_spelled_by_macros_json() -> None:
    """The hand-written headers follow the ccopt style's own prefix; the generated ones spell what macros.json
    says (a prefix the data accepted and the headers did not follow broke the build)."""
    from ccopt_meson.tables import macro_name, macros_data

    ccopt = macros_data()["styles"]["ccopt"]
    dispatch_h = (ROOT / "ccopt_meson" / "runtime" / "ccopt_dispatch.h").read_text()
    assert f"#if defined({macro_name('target_with', target='X')})\n" in dispatch_h
    assert f"#elif defined({macro_name('target', target='X')})\n" in dispatch_h
    callee = ccopt["target_with"].format(prefix=ccopt["prefix"], target="X").split("=", 1)[1]
    assert f"#define {callee.split('(')[0]}(TARGET, CB, NAME) " in dispatch_h and callee.endswith("(X,")
    assert f"{macro_name('source', id='')}##SRC##_##PART" in dispatch_h
    cpu_h = (ROOT / "ccopt_meson" / "runtime" / "ccopt_cpu.h").read_text()
    assert macro_name("have", name="<NAME>") in cpu_h
    assert ccopt["prefix"] == macros_data()["default_prefix"]


def test_max_keeps_every_have_define_in_ccopts_own_protocol(tmp_path: Path, fake: Callable[..., Any]) -> None:
    """A features file's 'max' limits the HAVE names to those a project's own run-time knows; in ccopt's own
    protocol (whose run-time knows every name) it stripped CCOPT_HAVE_* defines of the baseline and targets."""
    from ccopt_meson.records import Macros

    assert "AVX2_ISA" not in LIMITED
    assert "-DCCOPT_HAVE_AVX2_ISA=1" in _limited_max(tmp_path, fake).defines(["AVX2_ISA"])
    numpy = _limited_max(tmp_path, fake, macros=Macros("NPY_", "numpy"))
    assert not any("AVX2_ISA" in d for d in numpy.defines(["AVX2_ISA"]))


def test_the_runtime_table_reads_the_builds_have_macro() -> None:
    from ccopt_meson import emit_runtime

    assert "#ifdef CCOPT_HAVE_AVX2\n" in emit_runtime.runtime_table_header()
    text = emit_runtime.runtime_table_header(macros=("NPY_", "numpy"))
    assert "#ifdef NPY_HAVE_AVX2\n" in text and "CCOPT_HAVE_" not in text
