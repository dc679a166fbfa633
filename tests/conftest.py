"""Shared fixtures: tool lookup that skips locally but fails in CI, and a scripted fake compiler."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccopt_meson.probe import ProcResult  # noqa: E402

IN_CI = os.environ.get("CI", "").lower() == "true"


def need(tool: str) -> str:
    """Path of ``tool``; skip with a reason locally, fail under CI=true (CI installs every tool)."""
    path = shutil.which(tool)
    if path is None:
        message = f"{tool} is not installed (CI installs it from Debian packages)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def gcc() -> str:
    return need("gcc")


@pytest.fixture
def clang() -> str:
    return need("clang")


X86_MACROS = ("#define __x86_64__ 1\n#define __GNUC__ 12\n#define __GNUC_MINOR__ 2\n#define __GNUC_PATCHLEVEL__ 0\n"
              "#define __SSE__ 1\n#define __SSE2__ 1\n")


class FakeCompiler:
    """A runner that answers like gcc: macro dumps, and compiles that fail for chosen flags/probes.

    ``reject_flags``: flags the driver refuses (error naming the flag);
    ``warn_flags``: flags accepted with a driver warning (must count as unsupported);
    ``broken_probes``: probe file names whose compile fails with an error located in them;
    ``header_warning``: a warning located in a system header (must not cost anything).
    """

    def __init__(self, macros: str = X86_MACROS, reject_flags: Sequence[str] = (), warn_flags: Sequence[str] = (),
                 broken_probes: Sequence[str] = (), header_warning: bool = False) -> None:
        self.macros = macros
        self.reject_flags = set(reject_flags)
        self.warn_flags = set(warn_flags)
        self.broken_probes = set(broken_probes)
        self.header_warning = header_warning
        self.calls: list[list[str]] = []

    @staticmethod
    def _arm_macros(argv: Sequence[str]) -> list[str]:
        names = {"fp16": "FP16_VECTOR_ARITHMETIC", "dotprod": "DOTPROD", "fp16fml": "FP16_FML", "sve": "SVE"}
        exts = [e for a in argv if a.startswith("-march=") for e in a.split("+")[1:]]
        return [f"#define __ARM_FEATURE_{names[e]} 1\n" for e in exts if e in names]

    def __call__(self, argv: Sequence[str], timeout: float) -> ProcResult:
        argv = list(argv)
        self.calls.append(argv)
        bad = [f for f in argv if f in self.reject_flags]
        if bad:
            return ProcResult(1, f"gcc: error: unrecognized command-line option '{bad[0]}'\n")
        out = ""
        warned = [f for f in argv if f in self.warn_flags]
        if warned:
            out += f"cc1: warning: command-line option '{warned[0]}' is ignored\n"
        if "-dM" in argv:
            return ProcResult(0, out + self.macros + "".join(self._arm_macros(argv)))
        src = Path(argv[argv.index("-c") + 3])
        text = src.read_text()
        for name in self.broken_probes:
            for line in text.splitlines():
                if line.endswith(f'/{name}"'):
                    path = line.split('"')[1]
                    return ProcResult(1, out + f"{path}:5:3: error: '__m512' undeclared\n")
            if src.name == name:
                return ProcResult(1, out + f"{src}:5:3: error: '__m512' undeclared\n")
        if self.header_warning:
            out += ("In file included from /usr/lib/gcc/x86_64-linux-gnu/12/include/immintrin.h:5,\n"
                    "/usr/lib/gcc/x86_64-linux-gnu/12/include/avx512erintrin.h:55:3: warning: "
                    "'__W' is used uninitialized\n")
        Path(argv[argv.index("-o") + 1]).write_bytes(b"")  # the object file a real compiler writes
        return ProcResult(0, out)


@pytest.fixture
def fake() -> Callable[..., FakeCompiler]:
    return FakeCompiler


def detect_doc(req: object, **kw: object) -> dict:  # type: ignore[type-arg]
    """``detect`` as its JSON document (what ``--json`` prints): the contract users script against."""
    from ccopt_meson import detect

    return detect(req, **kw).to_json()  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def gcc12_x86_64_feature_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real feature file, written by an in-process detection with FakeCompiler (gcc 12 on x86_64)."""
    from ccopt_meson import Request

    build = tmp_path_factory.mktemp("features")
    detect_doc(Request(command=("fakecc",), dispatch="max -xop -fma4"), build_dir=build, runner=FakeCompiler())
    return build / "ccopt-features.json"


@pytest.fixture(scope="session")
def host_gcc_default() -> dict[str, Any]:
    """``detect --json`` with the host's gcc and the default request (what the fake compilers are compared to)."""
    import json

    from .helpers import cli, x86_gcc

    r = cli("detect", "--cc", x86_gcc(), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]
