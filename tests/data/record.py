"""Record what real compilers answer, as fixtures ``FakeCompiler`` (tests/conftest.py) replays.

Run once per compiler upgrade, from the repository root::

    python3 tests/data/record.py              # every scenario
    python3 tests/data/record.py gcc12-x86_64-macros

Each scenario runs one real compiler the way the probe stage runs it (the driver
arguments of ``ccopt_meson/data/compilers.json``, ``LC_ALL=C``) and writes
``tests/data/recorded/<scenario>.txt``: ``#| key: value`` header lines (what ran,
the compiler's version line, the exit status), then the output verbatim, with the
scratch source written as ``{unit}`` and the probe directory as ``{probes}``.  A
scenario's name says which compiler answered and what happened; the script refuses
to record it with another major version.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple, Sequence

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "recorded"
sys.path.insert(0, str(ROOT))

from ccopt_meson.tables import PROBES_DIR, compilers_data  # noqa: E402

GNU = compilers_data()["drivers"]["gnu"]
TRIVIAL = "int ccopt_trivial(void) { return 0; }\n"


class Scenario(NamedTuple):
    compiler: str  # the program run
    major: str  # gcc12 -> "12": the version the name promises
    flags: tuple[str, ...] = ()
    probes: tuple[str, ...] = ()  # included as the batch unit includes them; none: a macro dump or a trivial file
    dump: bool = False
    meta: tuple[tuple[str, str], ...] = ()


def _dump(cc: str, major: str, *flags: str) -> Scenario:
    return Scenario(cc, major, flags, dump=True, meta=(("flags", " ".join(flags)),) if flags else ())


SCENARIOS: dict[str, Scenario] = {
    # predefined macros: who the compiler is and what it targets
    "gcc12-x86_64-macros": _dump("gcc", "12"),
    "clang14-x86_64-macros": _dump("clang", "14"),
    "gcc12-aarch64-macros": _dump("aarch64-linux-gnu-gcc", "12"),
    "gcc12-riscv64-macros": _dump("riscv64-linux-gnu-gcc", "12"),
    "gcc12-s390x-macros": _dump("s390x-linux-gnu-gcc", "12"),
    # the s390x levels conflict (one -march wins), so the probe stage checks the lower levels' own macros
    "gcc12-s390x-arch11-macros": _dump("s390x-linux-gnu-gcc", "12", "-march=arch11", "-mzvector"),
    "gcc12-s390x-arch12-macros": _dump("s390x-linux-gnu-gcc", "12", "-march=arch12", "-mzvector"),
    "gcc12-s390x-arch13-macros": _dump("s390x-linux-gnu-gcc", "12", "-march=arch13", "-mzvector"),
    # what each -march extension of the aarch64 table adds to the armv8.2-a macros
    "gcc12-aarch64-armv8.2-a-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a"),
    "gcc12-aarch64-armv8.2-a+fp16-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+fp16"),
    "gcc12-aarch64-armv8.2-a+dotprod-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+dotprod"),
    "gcc12-aarch64-armv8.2-a+fp16fml-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+fp16fml"),
    "gcc12-aarch64-armv8.2-a+sve-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+sve"),
    "gcc12-aarch64-armv8-a-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8-a"),
    "gcc12-aarch64-armv8-a+crc-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8-a+crc"),
    "gcc12-aarch64-armv8-a+crypto-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8-a+crypto"),
    "gcc12-aarch64-armv8.2-a+crc-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+crc"),
    "gcc12-aarch64-armv8.2-a+crypto-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+crypto"),
    "gcc12-aarch64-armv8.2-a+sha3-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+sha3"),
    "gcc12-aarch64-armv8.2-a+i8mm-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+i8mm"),
    "gcc12-aarch64-armv8.2-a+bf16-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+bf16"),
    "gcc12-aarch64-armv8.2-a+sve2-macros": _dump("aarch64-linux-gnu-gcc", "12", "-march=armv8.2-a+sve2"),
    # a probe that fails: AVX512F's intrinsics without its flag, RVV without the header gcc 12 lacks
    "gcc12-x86_64-avx512f-unsupported": Scenario("gcc", "12", probes=("x86/avx512f.c",)),
    "gcc12-riscv64-rvv-unsupported": Scenario("riscv64-linux-gnu-gcc", "12", ("-march=rv64gcv",),
                                              probes=("riscv64/rvv.c",)),
    # a warning inside gcc's own header (GCC bug 105593, -Wuninitialized in avx512erintrin.h)
    "gcc12-x86_64-avx512_knl-header-warning": Scenario("gcc", "12", ("-mavx512er", "-mavx512pf", "-O2",
                                                                     "-Wuninitialized"),
                                                       probes=("x86/avx512_knl.c",)),
    # the driver refuses a flag it does not know; it accepts one with a warning
    "gcc12-unknown-flag": Scenario("gcc", "12", ("-mavx10.1",), meta=(("flag", "-mavx10.1"),)),
    "clang14-unknown-flag": Scenario("clang", "14", ("-mavx5124fmaps",), meta=(("flag", "-mavx5124fmaps"),)),
    "gcc12-flag-warning": Scenario("gcc", "12", ("-fno-rtti",), meta=(("flag", "-fno-rtti"),)),
    "clang14-flag-warning": Scenario("clang", "14", ("-mfpu=neon",), meta=(("flag", "-mfpu=neon"),)),
}


def _version_line(cc: str) -> str:
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=True).stdout
    return out.splitlines()[0]


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LC_ALL="C", LANG="C", LANGUAGE="C")  # as the probe stage runs compilers
    return subprocess.run(argv, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)


def record(name: str, sc: Scenario) -> str:
    version = _version_line(sc.compiler)
    if not re.search(rf"\b{sc.major}\.\d+\.\d+", version):
        raise SystemExit(f"{name}: {sc.compiler} is '{version}', not version {sc.major}")
    with tempfile.TemporaryDirectory(prefix="ccopt-record-") as tmp:
        unit = Path(tmp) / "p1.c"
        if sc.dump:
            unit.write_text("\n")
            argv = [sc.compiler, *sc.flags, *GNU["macro_dump"], *GNU["lang"]["c"], str(unit)]
        else:
            unit.write_text("".join(f'#include "{p}"\n' for p in sc.probes) or TRIVIAL)
            include = [str(GNU["include"]).format(PROBES_DIR)] if sc.probes else []
            out = [a.replace("{out}", str(Path(tmp) / "p1.o")) for a in GNU["output"]]
            argv = [sc.compiler, *sc.flags, *include, *GNU["compile"], *GNU["lang"]["c"], str(unit), *out]
        res = _run(argv)
    output = res.stdout + res.stderr

    def placeholders(text: str) -> str:
        return text.replace(str(unit), "{unit}").replace(str(PROBES_DIR), "{probes}").replace(tmp, "{scratch}")

    head = [("argv", placeholders(" ".join(argv))), ("version", version), ("exit", str(res.returncode)), *sc.meta]
    return "".join(f"#| {k}: {v}\n" for k, v in head) + placeholders(output)


def main(argv: Sequence[str]) -> int:
    names = list(argv) or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    OUT.mkdir(exist_ok=True)
    for name in names:
        (OUT / f"{name}.txt").write_text(record(name, SCENARIOS[name]))
        print(f"recorded {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
