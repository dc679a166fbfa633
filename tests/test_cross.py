"""The example's dispatcher on CPUs this machine does not have: qemu-user models and Meson cross builds.

Every case checks the target the dispatcher picks ("dispatch picked: X" from test_dot), which
proves detection at configure time (from the cross compiler) and at run time (on the model) agree.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, need
from .helpers import clean_env
from .test_meson import Build, project

pytestmark = pytest.mark.slow


def picked(cmd: list[str], env: dict[str, str] | None = None) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, f"{cmd}: rc={r.returncode} (a negative rc is a signal: SIGILL=-4)\n{r.stdout}{r.stderr}"
    assert "WRONG" not in r.stdout
    return r.stdout.strip().splitlines()[-1].removeprefix("dispatch picked: ")


@pytest.fixture(scope="module")
def native_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("native")
    b = Build(tmp, project(tmp, "dot"))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    return b.dir


X86_MODELS = [("Nehalem", "X86_V2"), ("SandyBridge", "X86_V2"), ("Haswell", "X86_V3")]


@pytest.mark.parametrize("model,expected", X86_MODELS)
def test_x86_models(native_build: Path, model: str, expected: str) -> None:
    qemu = need("qemu-x86_64-static")
    assert picked([qemu, "-cpu", model, str(native_build / "test_dot")]) == expected


def test_env_mask_picks_the_next_lower_target(native_build: Path) -> None:

    qemu = need("qemu-x86_64-static")
    env = clean_env(CCOPT_DISABLE_CPU_FEATURES="AVX2")
    assert picked([qemu, "-cpu", "Haswell", str(native_build / "test_dot")], env) == "X86_V2"


def test_the_default_baseline_runs_on_the_oldest_x86_64(native_build: Path) -> None:
    qemu = need("qemu-x86_64-static")
    info = native_build / "subprojects" / "ccopt-meson" / "ccopt-cpu-info"
    # qemu64 without "pni" is an x86-64 CPU without SSE3: the default baseline, detect, is what the compiler
    # targets (x86-64's SSE2), so nothing is missing there ('min' would need SSE3)
    r = subprocess.run([qemu, "-cpu", "qemu64,-pni", str(info), "--json"], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout)["baseline_missing"] == []
    assert picked([qemu, "-cpu", "qemu64,-pni", str(native_build / "test_dot")]) == "BASELINE"


def test_native_cpu_top_tier(native_build: Path) -> None:
    flags = Path("/proc/cpuinfo").read_text()
    if not all(f in flags for f in (" avx512f", " avx512bw", " avx512vl", " avx512dq", " avx512cd")):
        pytest.skip("this CPU has no AVX-512 (x86-64-v4); QEMU 7.2 cannot emulate it")
    assert picked([str(native_build / "test_dot")]) == "X86_V4"


CROSS = {
    "aarch64": ("aarch64-linux-gnu", [("cortex-a53", "BASELINE"), ("neoverse-n1", "ASIMDDP"), ("a64fx", "BASELINE")]),
    "ppc64le": ("powerpc64le-linux-gnu", [("power8", "BASELINE"), ("power9", "VSX3"), ("power10", "VSX3")]),
    # QEMU 7.2 has no usable z13/z14/z15 models: its "qemu" model with vector facilities switched
    # off stands in for them, and "max" reports VX+VXE but never VXE2.
    "s390x": ("s390x-linux-gnu", [("qemu,vx=off", "BASELINE"), ("qemu,vxeh=off", "VX"), ("max", "VXE")]),
    "riscv64": ("riscv64-linux-gnu", [("rv64,v=true,vlen=128", "BASELINE"), ("rv64,v=false", "BASELINE")]),
}


@pytest.mark.parametrize("arch", list(CROSS))
def test_cross_build_dispatches_per_model(tmp_path: Path, arch: str) -> None:
    triple, models = CROSS[arch]
    need(f"{triple}-gcc")
    qemu = need(f"qemu-{arch}-static")
    b = Build(tmp_path, project(tmp_path, "dot"))
    b.env.pop("CC")
    out = b.meson_cmd("setup", "--cross-file", str(ROOT / "tests" / "cross" / f"{arch}.ini"), str(b.dir))
    assert f"Architecture: {arch}" in out  # from the cross compiler, not this x86_64 machine
    # one probe, as on x86_64: the dump, the batch, one compile reading every merged -march= (aarch64 ran 14)
    m = re.search(r"From cache\s*: no \((\d+) compiler processes\)", out)
    assert m and int(m.group(1)) <= 3, out
    b.ninja()
    assert "1/1 dot:dot" in b.meson_cmd("test", "-C", str(b.dir))
    for model, expected in models:
        cmd = [qemu, "-L", f"/usr/{triple}", "-cpu", model, str(b.dir / "test_dot")]
        assert picked(cmd) == expected, model


def test_native_is_refused_for_cross_builds(tmp_path: Path) -> None:
    need("aarch64-linux-gnu-gcc")
    b = Build(tmp_path, project(tmp_path, "dot"))
    b.env.pop("CC")
    r = subprocess.run([*b.meson, "setup", "--cross-file", str(ROOT / "tests" / "cross" / "aarch64.ini"),
                        "-Dccopt-meson:cpu-baseline=native", str(b.dir)], cwd=b.src, env=b.env,
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "ccopt-meson: error: cpu-baseline: 'native' cannot be used when cross-compiling" in r.stdout + r.stderr
