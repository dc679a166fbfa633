"""Versions and defaults stated in several places agree; the package's import graph stays a tree of stages."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ccopt_meson import DEFAULT_BASELINE, DEFAULT_DISPATCH, __version__
from ccopt_meson.cli import build_parser

from .conftest import ROOT


def test_versions_agree() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    meson_build = (ROOT / "meson.build").read_text()
    py_version = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    meson_version = re.search(r"project\('ccopt-meson', version: '([^']+)'", meson_build)
    assert py_version and meson_version
    assert py_version.group(1) == meson_version.group(1) == __version__


def test_the_changelog_has_a_dated_section_for_this_version() -> None:
    """A release's version has its section, dated, below 'Unreleased', with its migration list."""
    changelog = (ROOT / "CHANGELOG.md").read_text()
    heads = re.findall(r"^## (.+)$", changelog, re.M)
    assert heads[:2] == ["Unreleased", heads[1]] and re.fullmatch(rf"{re.escape(__version__)} \(\d{{4}}-\d\d-\d\d\)",
                                                                  heads[1])
    section = changelog.split(f"## {heads[1]}", 1)[1].split("\n## ", 1)[0]
    assert "**Migrating from" in section and "### Breaking" in section


def test_runtime_header_version_macros_are_the_package_version(tmp_path: Path) -> None:
    """#if CCOPT_VERSION_MAJOR ... in a consumer's C sees the release its headers came from."""
    import subprocess

    from ccopt_meson import emit_runtime

    from .conftest import need

    emit_runtime.write_table(tmp_path)
    main = tmp_path / "v.c"
    main.write_text('#include "ccopt_cpu.h"\n'
                    "int v[] = {CCOPT_VERSION_MAJOR, CCOPT_VERSION_MINOR, CCOPT_VERSION_PATCH};\n"
                    "const char *s = CCOPT_VERSION;\n")
    r = subprocess.run([need("gcc"), "-E", "-P", f"-I{tmp_path}", f"-I{ROOT / 'ccopt_meson' / 'runtime'}", str(main)],
                       capture_output=True, text=True, check=True)
    major, minor, patch = __version__.split(".")
    assert f"int v[] = {{{int(major)}, {int(minor)}, {int(patch)}}};" in r.stdout
    assert f'const char *s = "{__version__}";' in r.stdout


def test_helper_prints_its_version() -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(ROOT / "tools" / "ccopt-meson-helper.py"), "--version"],
                       capture_output=True, text=True, check=True)
    assert r.stdout == f"ccopt-meson {__version__}\n"


def test_meson_option_defaults_match_the_cli() -> None:
    options = (ROOT / "meson_options.txt").read_text()
    default = dict(re.findall(r"option\('([\w-]+)', type: 'string', value: '([^']*)'", options))
    assert default["cpu-baseline"] == DEFAULT_BASELINE
    assert default["cpu-dispatch"] == DEFAULT_DISPATCH
    from ccopt_meson.records import Macros
    from ccopt_meson.tables import macros_data

    styles = re.search(r"option\('header-style', type: 'combo', choices: \[([^]]*)\], value: '(\w+)'", options)
    assert styles is not None and styles.group(2) == Macros().style
    assert sorted(re.findall(r"'(\w+)'", styles.group(1))) == sorted(macros_data()["styles"])
    ns = build_parser().parse_args(["detect"])
    assert (ns.baseline, ns.dispatch) == (DEFAULT_BASELINE, DEFAULT_DISPATCH)


def test_the_default_macro_prefix_is_the_one_of_macros_json() -> None:
    """macros.json's default_prefix is the one home of the default; meson_options.txt cannot read JSON, so
    it states the value again, and this test holds it (and the pages quoting it) to the data."""
    from ccopt_meson.records import Macros
    from ccopt_meson.tables import macros_data

    prefix = macros_data()["default_prefix"]
    options = (ROOT / "meson_options.txt").read_text()
    default = dict(re.findall(r"option\('([\w-]+)', type: 'string', value: '([^']*)'", options))
    assert default["macro-prefix"] == prefix
    assert build_parser().parse_args(["detect"]).macro_prefix == prefix
    assert Macros().prefix is None and Macros().resolved() == Macros(prefix, "ccopt")
    page = (ROOT / "docs" / "reference" / "options.md").read_text()
    documented = re.search(r"^\| `macro-prefix` \| `([^`]*)` \|", page, re.M)
    assert documented is not None and documented.group(1) == prefix
    written = [p.name for p in (ROOT / "ccopt_meson").glob("*.py") if {f"'{prefix}'", f'"{prefix}"'} & set(
        re.findall(r"""(?:'[^'\n]*'|"[^"\n]*")""", p.read_text()))]
    assert written == [], "the default prefix is read from macros.json, never written in the code"


def test_the_caps_the_pages_quote_are_fsio_limits() -> None:
    """Every read cap is a field of fsio.LIMITS; a page that quotes one, in bytes or in MiB, says its value."""
    from ccopt_meson.fsio import LIMITS

    pages = "\n".join(p.read_text() for p in sorted((ROOT / "docs").rglob("*.md")))
    quoted = {int(n) for n in re.findall(r"more than the (\d+) this tool reads", pages)}
    assert {LIMITS.cache, LIMITS.dispatch_source, LIMITS.features_file} <= quoted <= set(LIMITS)
    mib = {name: f"{size >> 20} MiB" for name, size in LIMITS._asdict().items()}
    robustness = (ROOT / "docs" / "explanation" / "robustness.md").read_text()
    for phrase in (f"sha256 (up to {mib['compiler_wrapper']})", f"a directory or over {mib['features_file']}",
                   f"read once, bounded ({mib['features_file']})", f"the cache file | bounded ({mib['cache']})"):
        assert phrase in robustness
    assert ("the first MiB is kept" in robustness) == (LIMITS.compiler_output == 1 << 20)
    features_page = (ROOT / "docs" / "reference" / "features-file.md").read_text()
    assert f"read bounded (regular files, {mib['features_file']})" in features_page.replace("\n", " ")


def test_readme_test_command_is_what_ci_runs() -> None:
    """The contributors' set-up (README and CONTRIBUTING.md): a venv and `detect`, then the fast tests; the whole
    suite, what CI runs, is named beside it."""
    from .snippets import snippet

    setup = snippet("contributing/setup")
    ci = (ROOT / ".ci" / "run").read_text()
    whole, fast = 'python3 -m pytest -m "slow or not slow" -n 2', 'python3 -m pytest -m "not slow" -n 2'
    assert whole in ci and whole not in setup
    for page in ("README.md", "CONTRIBUTING.md"):  # the copyable command is the fast one; the whole one is named
        assert f"`{whole}`" in (ROOT / page).read_text().replace("\n", " "), page
    first, second = setup.splitlines()
    assert "python3 -m venv" in first and first.endswith("&& ccopt-meson detect") and ".ci/run" not in setup
    assert second.endswith(fast) and "ruff check" in ci and "mypy --strict" in ci


def test_ci_installs_the_meson_releases_the_tests_use() -> None:
    from .test_meson import OLD_MESONS

    ci = (ROOT / ".ci" / "run").read_text()
    listed = re.search(r"^for v in ([\d. ]+); do", ci, re.M)
    assert listed and tuple(listed.group(1).split()) == OLD_MESONS
    minimum = re.search(r"meson_version: '>=([\d.]+)'", (ROOT / "meson.build").read_text())
    assert minimum and OLD_MESONS[0] == minimum.group(1), "the stated minimum is the oldest release tested"


def _package_imports() -> dict[str, list[tuple[str, str | None, ast.AST]]]:
    """Per module of the package: (imported module, imported name or None, node), lazy imports included."""
    out: dict[str, list[tuple[str, str | None, ast.AST]]] = {}
    for path in sorted((ROOT / "ccopt_meson").glob("*.py")):
        found: list[tuple[str, str | None, ast.AST]] = []
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level == 1 or (node.module or "").startswith("ccopt_meson")):
                module = (node.module or "").removeprefix("ccopt_meson").lstrip(".")
                for alias in node.names:
                    if module:  # from .x import name
                        found.append((module.split(".")[0], alias.name, node))
                    else:  # from . import x
                        found.append((alias.name, None, node))
            elif isinstance(node, ast.Import):
                found += [(a.name.split(".")[1], None, node) for a in node.names if a.name.startswith("ccopt_meson.")]
        out[path.stem] = found
    return out


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_import_graph_has_no_cycle() -> None:
    """Stages import downwards only (lazy imports inside functions count too): no module needs its importer."""
    graph = {mod: {target for target, _, _ in imports} for mod, imports in _package_imports().items()}
    state: dict[str, str] = {}

    def visit(mod: str, path: list[str]) -> None:
        state[mod] = "open"
        for dep in sorted(graph.get(mod, ())):
            assert state.get(dep) != "open", "import cycle: " + " -> ".join([*path[path.index(dep):], dep])
            if dep in graph and dep not in state:
                visit(dep, [*path, dep])
        state[mod] = "done"

    for mod in sorted(graph):
        if mod not in state:
            visit(mod, [mod])
    assert graph["tables"] <= {"errors", "schema", "flags", "versions", "_record"}, "the tables are the bottom stage"
    for leaf in ("errors", "flags", "tokens", "versions"):  # below the tables: they need nothing of the package's
        assert graph.get(leaf, set()) <= {"errors", "_record"}, leaf
    # the one reader of every JSON input: the bounded read of fsio, which needs only the errors and the mark
    assert graph["schema"] <= {"errors", "fsio", "_record"} and graph["fsio"] <= {"errors", "version", "_record"}
    assert graph["_record"] == set(), "the record base is below everything"


def test_no_module_reaches_into_another_modules_private_names() -> None:
    """``from .x import _name`` and ``x._name`` are how stages grow hidden contracts; public names or nothing."""
    offences = []
    for mod, imports in _package_imports().items():
        offences += [f"{mod}: from .{target} import {name}" for target, name, _ in imports
                     if name is not None and _is_private(name)]
        modules = {target for target, name, _ in imports if name is None}
        tree = ast.parse((ROOT / "ccopt_meson" / f"{mod}.py").read_text())
        offences += [f"{mod}: {node.value.id}.{node.attr}" for node in ast.walk(tree)
                     if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                     and node.value.id in modules and _is_private(node.attr)]
    assert offences == []


def test_robustness_doc_points_at_existing_tests() -> None:
    """Every ``tests/FILE.py::test_name`` in docs/explanation/robustness.md names a test function of that file."""
    doc = (ROOT / "docs" / "explanation" / "robustness.md").read_text()
    refs = set(re.findall(r"`(tests/test_\w+\.py)::(test_\w+)", doc))
    assert len(refs) > 50
    defined = {
        (f"tests/{path.name}", node.name)
        for path in (ROOT / "tests").glob("test_*.py")
        for node in ast.parse(path.read_text()).body if isinstance(node, ast.FunctionDef)
    }
    assert sorted(refs - defined) == []


def test_the_meson_commands_load_no_typing() -> None:
    """``typing`` costs about as much as a cached helper run's own work: the records are made without it."""
    code = ("import sys; import ccopt_meson.cli, ccopt_meson.meson_glue, ccopt_meson.pipeline; "
            "print(sorted(m for m in ('typing', 'dataclasses', 'inspect') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


def test_records_are_the_namedtuples_typing_would_make() -> None:
    import collections
    import pickle
    import typing

    from ccopt_meson._record import NamedTuple
    from ccopt_meson.tables import Feature, Project

    class Ours(NamedTuple):
        """A doc."""

        a: int
        b: str = "x"

        def twice(self) -> int:
            return 2 * self.a

        @property
        def upper(self) -> str:
            return self.b.upper()

    class Theirs(typing.NamedTuple):
        a: int
        b: str = "x"

    assert Ours._fields == Theirs._fields and Ours._field_defaults == Theirs._field_defaults
    assert issubclass(Ours, tuple) and Ours(1) == Theirs(1) == (1, "x") and Ours(1, b="y")._replace(a=3) == (3, "y")
    assert Ours(2).twice() == 4 and Ours(2, "q").upper == "Q" and Ours.__doc__ == "A doc."
    assert Ours.__module__ == __name__ and Ours.__qualname__.endswith("Ours") and not hasattr(Ours(1), "__dict__")
    assert repr(Ours(1)) == "Ours(a=1, b='x')" and Ours(1)._asdict() == collections.OrderedDict(a=1, b="x")
    assert Feature._fields[0] == "name" and pickle.loads(pickle.dumps(Feature._field_defaults)) == {
        "runtime": {}, "probe_file": "", "detect": (), "flags_replace": "", "audit": (), "where": "", "runtime_of": "",
        "widened_by": ()}
    assert "__eq__" in vars(Project) and "__hash__" in vars(Project)  # a record's own methods are kept
    assert Ours._make([4, "z"]) == (4, "z") and Ours.__match_args__ == ("a", "b") and Ours(a=5) == (5, "x")
    for bad in ((), (1, "y", 2)):  # a call namedtuple refuses is refused
        with pytest.raises(TypeError):
            Ours(*bad)
    with pytest.raises(TypeError):
        Ours(1, a=2)
    with pytest.raises(TypeError):
        Ours(1, c=2)
    with pytest.raises(ValueError):
        Ours(1)._replace(c=2)
    import copy

    from ccopt_meson.tables import table_for

    feature = table_for("x86_64", "gcc").features["AVX2"]  # a module-level record: pickled, copied, compared
    assert pickle.loads(pickle.dumps(feature)) == feature == copy.deepcopy(feature) == copy.copy(feature)
    assert type(pickle.loads(pickle.dumps(feature))) is Feature and hash(Ours(1)) == hash(Theirs(1))

    class Equal(NamedTuple):  # its own __eq__ without __hash__: typing.NamedTuple keeps tuple's hash
        a: int

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Equal) and self.a == other.a

    assert hash(Equal(1)) == hash((1,))
    with pytest.raises(ValueError, match="underscore"):
        class Hidden(NamedTuple):
            _fields: int  # type: ignore[misc]
    with pytest.raises(TypeError, match="without a default follows"):
        class Bad(NamedTuple):
            a: int = 1
            b: int
    with pytest.raises(AttributeError, match="cannot overwrite"):
        class Worse(NamedTuple):
            a: int

            def _replace(self) -> None:
                pass
