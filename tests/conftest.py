"""Shared fixtures: tool lookup that skips locally but fails in CI, and a fake compiler replaying real ones."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccopt_meson.probe import ProcResult  # noqa: E402

IN_CI = os.environ.get("CI", "").lower() == "true"

# No test fails on time: hypothesis' deadline and its too_slow health check measure the machine's load.
settings.register_profile("no-timing", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("no-timing")

# numpy 2.2's feature set, stated once: the example's port (a feature_set), which tests use as numpy's
NUMPY22 = ROOT / "examples" / "numpy" / "2.2.6" / "ccopt-numpy.json"


def need(tool: str) -> str:
    """Path of ``tool``; skip with a reason locally, fail under CI=true (CI installs every tool)."""
    path = shutil.which(tool)
    if path is None:
        message = f"{tool} is not installed (CI installs it from Debian packages)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


def need_module(name: str, install: str) -> Any:
    """The Python module ``name``; skip with a reason locally, fail under CI=true (CI installs ``install``)."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"the Python module {name} is not installed (CI installs {install})"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def gcc() -> str:
    return need("gcc")


@pytest.fixture
def clang() -> str:
    return need("clang")


RECORDED = Path(__file__).resolve().parent / "data" / "recorded"


class Recording(NamedTuple):
    """One real compiler run, recorded by ``tests/data/record.py`` into ``tests/data/recorded/<name>.txt``."""

    name: str
    meta: dict[str, str]  # argv, version, exit, and what the scenario needs (the refused flag, ...)
    output: str  # verbatim, with {unit}, {probes} and {scratch} for the paths of the run

    def replay(self, unit: Path | None = None) -> str:
        """The output as this run would print it: the placeholders become this run's paths."""
        from ccopt_meson.tables import PROBES_DIR

        text = self.output.replace("{probes}", str(PROBES_DIR))
        if unit is not None:
            text = text.replace("{unit}", str(unit)).replace("{scratch}", str(unit.parent))
        return text

    def lines(self) -> set[str]:
        return set(self.output.splitlines())


@functools.cache
def recorded(name: str) -> Recording:
    path = RECORDED / f"{name}.txt"
    if not path.is_file():
        raise LookupError(f"no recording {path.name}: add the scenario to tests/data/record.py and run it")
    meta: dict[str, str] = {}
    lines = path.read_text().splitlines(keepends=True)
    while lines and lines[0].startswith("#| "):
        key, _, value = lines.pop(0)[3:].rstrip("\n").partition(": ")
        meta[key] = value
    return Recording(name, meta, "".join(lines))


X86_MACROS = recorded("gcc12-x86_64-macros").output  # what `gcc -dM -E` prints on x86_64 (gcc 12)


class FakeCompiler:
    """A runner that replays what a real compiler printed (``tests/data/recorded``) for chosen outcomes.

    ``scenario``: the recorded compiler and target (``gcc12-x86_64``, ``clang14-x86_64``, ``gcc12-aarch64``,
    ``gcc12-riscv64``, ``gcc12-s390x``), whose macro dump answers ``-dM`` unless ``macros`` is given;
    ``reject_flags``: flags the driver refuses (its recorded "unknown flag" error, naming the flag);
    ``warn_flags``: flags accepted with the driver's recorded warning (must count as unsupported);
    ``broken_probes``: probe file names whose compile fails as recorded (``<scenario>-<probe>-unsupported``);
    ``header_warning``: the recorded gcc 12 warning inside its own avx512erintrin.h (must cost nothing).
    Every compile that does not fail writes the object file, as a real compiler does.
    """

    def __init__(self, macros: str | None = None, reject_flags: Sequence[str] = (), warn_flags: Sequence[str] = (),
                 broken_probes: Sequence[str] = (), header_warning: bool = False,
                 scenario: str = "gcc12-x86_64") -> None:
        self.scenario = scenario
        self.compiler = scenario.split("-")[0]
        self.macros = recorded(f"{scenario}-macros").output if macros is None else macros
        self.reject_flags = set(reject_flags)
        self.warn_flags = set(warn_flags)
        self.broken_probes = set(broken_probes)
        self.header_warning = header_warning
        self.calls: list[list[str]] = []

    def _with_flag(self, kind: str, flag: str) -> str:
        rec = recorded(f"{self.compiler}-{kind}")
        return rec.output.replace(rec.meta["flag"], flag)

    def _dump(self, argv: Sequence[str]) -> str:
        """The recorded dump with exactly these flags, else the scenario's own plus recorded -march extensions."""
        flags = set(argv[1:argv.index("-dM")])
        for path in sorted(RECORDED.glob(f"{self.scenario}-*-macros.txt")) if flags else ():
            rec = recorded(path.stem)
            if set(rec.meta.get("flags", "").split()) == flags:
                return rec.output
        return self.macros + "".join(self._march_macros(argv))

    @staticmethod
    def _march_macros(argv: Sequence[str]) -> list[str]:
        """What each ``+ext`` of an aarch64 ``-march=`` adds, as recorded from aarch64-linux-gnu-gcc 12
        (against the same base architecture where it was recorded, else against armv8.2-a)."""
        out: list[str] = []
        for head, *exts in (a[len("-march="):].split("+") for a in argv if a.startswith("-march=")):
            if head not in ("armv8-a", "armv8.2-a"):
                head = "armv8.2-a"
            if head != "armv8-a":  # what the base architecture itself adds to the default's macros
                default = recorded("gcc12-aarch64-macros").lines()
                out += sorted(recorded(f"gcc12-aarch64-{head}-macros").lines() - default)
            for ext in exts:
                try:
                    base = recorded(f"gcc12-aarch64-{head}-macros").lines()
                    out += sorted(recorded(f"gcc12-aarch64-{head}+{ext}-macros").lines() - base)
                except LookupError:
                    try:
                        base = recorded("gcc12-aarch64-armv8.2-a-macros").lines()
                        out += sorted(recorded(f"gcc12-aarch64-armv8.2-a+{ext}-macros").lines() - base)
                    except LookupError:
                        pass
        return [line + "\n" for line in dict.fromkeys(out)]

    @staticmethod
    def _includes(unit: Path, name: str) -> bool:
        return unit.name == name or any(line.endswith(f'/{name}"') for line in unit.read_text().splitlines())

    def _folded(self, argv: Sequence[str], unit: Path) -> str:
        """GCC's answer to a unit of '#pragma GCC target' sections (``probe.read_macros``): a note for each
        '#pragma message' whose '#if' holds under the section's flags, read from this compiler's dumps."""
        from ccopt_meson.compiler import macro_satisfied, parse_macro_dump

        out: list[str] = []
        flags: list[str] = []
        held = False
        for number, line in enumerate(unit.read_text().splitlines(), 1):
            if line == "#pragma GCC push_options":
                flags = list(argv[1:argv.index("-c")])
            elif line.startswith("#pragma GCC target("):
                flags += ["-m" + t.strip().strip('"') for t in line[len("#pragma GCC target("):-1].split(",")]
            elif line.startswith("#define "):
                flags.append("-D" + "=".join(line.split(" ", 2)[1:]))
            elif line.startswith("#if "):
                macros: dict[str, str] = parse_macro_dump(self._dump(["cc", *flags, "-dM"]))
                cond = line[4:].replace("defined(", "").replace("(", "").replace(")", "")
                specs = [part.split(">=") for part in cond.split(" && ")]
                held = macro_satisfied(">=".join(p.strip() for p in specs[-1]), macros)
            elif line.startswith("#pragma message") and held:
                message = line.split('"')[1]
                out.append(f"{unit}:{number}:9: note: '#pragma message: {message}'\n")
        return "".join(out)

    def __call__(self, argv: Sequence[str], timeout: float) -> ProcResult:
        argv = list(argv)
        self.calls.append(argv)
        bad = [f for f in argv if f in self.reject_flags]
        if bad:
            return ProcResult(1, self._with_flag("unknown-flag", bad[0]))
        out = "".join(self._with_flag("flag-warning", f) for f in argv if f in self.warn_flags)
        if "-dM" in argv:
            return ProcResult(0, out + self._dump(argv))
        unit = Path(argv[argv.index("-c") + 3])
        if "#pragma GCC target" in unit.read_text() or "ccopt-fact" in unit.read_text():
            Path(argv[argv.index("-o") + 1]).write_bytes(b"")
            return ProcResult(0, out + self._folded(argv, unit))
        for name in sorted(self.broken_probes):
            if self._includes(unit, name):
                rec = recorded(f"{self.scenario}-{name.rsplit('.', 1)[0]}-unsupported")
                return ProcResult(int(rec.meta["exit"]), out + rec.replay(unit))
        if self.header_warning and self._includes(unit, "avx512_knl.c"):
            out += recorded("gcc12-x86_64-avx512_knl-header-warning").replay(unit)
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
def gcc12_x86_64_cache_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real cache file, written by an in-process detection with FakeCompiler (gcc 12 on x86_64)."""
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


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated run-time table (one header for every machine), as configure writes it beside ccopt_cpu.h."""
    from ccopt_meson.emit_runtime import write_table

    gen = tmp_path_factory.mktemp("gen")
    write_table(gen)
    return gen
