"""Detection end to end (``pipeline.detect``): request checks, 'native', disable-optimization; recorded compilers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccopt_meson import Request
from ccopt_meson.errors import InputError

from .conftest import FakeCompiler, detect_doc, need
from .helpers import cli, configure_args, kv, one_error, x86_gcc


@pytest.mark.parametrize("option,name", [("--baseline", "cpu-baseline"), ("--dispatch", "cpu-dispatch")])
def test_native_when_cross_compiling(tmp_path: Path, option: str, name: str) -> None:
    cc = need("aarch64-linux-gnu-gcc")
    expected = (f"{name}: 'native' cannot be used when cross-compiling", "aarch64 target's",
                "name the target's features instead")
    one_error(cli("detect", "--cc", cc, option, "max native" if name == "cpu-dispatch" else "native"), *expected)
    args = configure_args(tmp_path, cc, option, "native")
    args[args.index("--cpu-family") + 1], args[args.index("--cross") + 1] = "aarch64", "yes"
    one_error(cli(*args), *expected)


@pytest.mark.parametrize("option,value,name", [("--baseline", "avx2", "cpu-baseline"),
                                               ("--dispatch", "avx512f, AVX2", "cpu-dispatch")])
def test_disable_optimization_with_explicit_targets(tmp_path: Path, option: str, value: str, name: str) -> None:
    expected = (f"{name}: '{value.replace(',', '').lower()}' conflicts with disable-optimization=true",
                "unset one of the two")
    one_error(cli("detect", "--cc", "gcc", "--disable-optimization", option, value), *expected)
    one_error(cli(*configure_args(tmp_path, "gcc", option, value, "--disable-optimization")), *expected)


def test_disable_optimization_with_defaults_or_none_is_fine(tmp_path: Path) -> None:
    cc = x86_gcc()
    r = cli(*configure_args(tmp_path, cc, "--baseline", "none", "--dispatch", "max", "--disable-optimization",
                            "--write-config"))
    assert r.returncode == 0, r.stderr
    out = kv(r.stdout)
    assert out["baseline_names"] == [] and out["dispatch_names"] == [] and out["baseline_args"] == []
    assert "#define CCOPT_DISABLE_OPTIMIZATION 1" in (tmp_path / "ccopt_config.h").read_text()


def test_unknown_language_through_the_api() -> None:
    with pytest.raises(InputError, match="^unknown language 'fortran'; use 'c' or 'cpp'$"):
        detect_doc(Request(command=("fakecc",), lang="fortran"), runner=FakeCompiler())


def test_native_unsupported_by_the_compiler() -> None:
    req = Request(command=("fakecc",), compiler_id="msvc", cpu_family="aarch64", baseline="native", cross=False)
    with pytest.raises(InputError, match="^cpu-baseline: 'native' is not supported by msvc on aarch64; "
                                         "name the features instead$"):
        detect_doc(req, runner=FakeCompiler())


def test_native_refused_by_the_compiler() -> None:
    req = Request(command=("fakecc",), dispatch="max native", cross=False)
    with pytest.raises(InputError) as exc:
        detect_doc(req, runner=FakeCompiler(reject_flags=["-march=native"]))
    assert str(exc.value) == ("cpu-dispatch: 'native' (-march=native) was refused by gcc: "
                              "gcc: error: unrecognized command-line option '-march=native'")
