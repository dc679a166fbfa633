"""The documentation: every snippet a user would copy is built or run by a test named here, the site
builds strictly, every page is in its navigation, and the top-level documents' links resolve.

When a snippet changes, the test that exercises it must change with it: update that test, then the
digest below (the failure message prints the new one).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import platform
import re
import shlex
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from ccopt_meson import emit_runtime, host, project, tables
from ccopt_meson.version import __version__

from .conftest import IN_CI, ROOT, need
from .snippets import blocks, digest, pages, snippet

AUDIT_SNIPPETS = "tests/test_audit.py::test_the_audit_snippets_are_the_pins_and_the_fixtures_test"
FRESH = "tests/test_consumer_meson.py::test_readme_snippets_build_verbatim_in_a_fresh_project_through_the_wrap"
HERE = "tests/test_docs.py::"
TRAPS = "tests/test_traps.py::test_the_library_maintainers_snippets_are_the_fixture_s_code"
WHEEL = "tests/test_meson_python.py::test_the_wheel_and_the_sdist_of_the_how_to"
WINDOWS = HERE + "test_the_windows_snippets_are_the_repository_s_cross_file_and_example"
MIXED = "tests/test_shared_lib.py::test_c_and_cxx_kernels_in_one_shared_library_export_only_its_api"
RELEASE = "tests/test_release.py::test_the_release_command_makes_the_archive_checksum_wrap_and_dists"
# id -> (digest of its text, the test that builds or runs it)
SNIPPETS: dict[str, tuple[str, str]] = {
    "consumer/wrap": ("09be913549f3", FRESH),
    "consumer/wrap-file": ("f89ddb1ecb89", "tests/test_release.py::test_the_readme_s_wrap_file_is_the_released_one"),
    "release/command": ("d983bedc83b6", RELEASE),
    "consumer/meson.build": ("b6945c0d724c", FRESH),
    "consumer/dot.dispatch.c": ("42406de69bb1", FRESH),
    "consumer/main.c": ("40072a55b075", FRESH),
    "consumer/run": ("faf2ab2173b6", FRESH),
    "consumer/test-loop": ("9a8e0b378f38", HERE + "test_excerpts_are_part_of_the_snippet_they_quote"),
    "kernel/targets-in-source": ("a5841d242667", FRESH),
    "kernel/targets-files": ("916c36dd566f", FRESH),
    "library/mixed-meson": ("3448c021df84", MIXED),
    "library/mixed-api": ("88b68e8e5f17", MIXED),
    "windows/cross-file": ("2ecb586778bc", WINDOWS),
    "windows/test-loop": ("d0fb8ea76654", WINDOWS),
    "library/rename": ("5edeec8cdb17", TRAPS),
    "library/extern-c": ("044a637d8abe", TRAPS),
    "contributing/setup": ("4d135e0c4513", "tests/test_consistency.py::test_readme_test_command_is_what_ci_runs"),
    "contributing/site": ("aaac260eb77f", HERE + "test_site_builds_strictly"),
    "cross/aarch64.ini": ("5222ed656f6e", HERE + "test_cross_snippets_are_what_the_cross_tests_run"),
    "cross/build": ("00b80054ade4", HERE + "test_cross_snippets_are_what_the_cross_tests_run"),
    "cross/models": ("850295dd4967", HERE + "test_cross_snippets_are_what_the_cross_tests_run"),
    "meson-python/pyproject.toml": ("055e0cb0489c", WHEEL),
    "meson-python/meson.build": ("bc89d32730a7", WHEEL),
    "meson-python/fastdot.c": ("13c65e60468e", WHEEL),
    "meson-python/build": ("95f12ba31e16", WHEEL),
    "meson-python/dist": ("6c689f8aa451", WHEEL),
    "parent-options": ("a9a64e014dc6", HERE + "test_parent_options_snippet_is_the_fixture_s_code"),
    "project-features/file": ("9d3f3cee7857", HERE + "test_project_features_snippets_load"),
    "project-features/override": ("cc0bd3f9583b", HERE + "test_project_features_snippets_load"),
    "project-features/feature-set": ("171b02281eaf", "tests/test_feature_set.py::test_the_docs_snippet_loads"),
    "audit/install": ("25e8d6f74b62", AUDIT_SNIPPETS),
    "audit/meson-test": ("ed84fddd40c8", AUDIT_SNIPPETS),
    "audit/shipped": ("b00f3fe8064a",
                      "tests/test_audit_artifacts.py::test_a_clean_build_passes_in_the_build_the_tree_and_the_wheel"),
    "features-file/version": ("cfbac5fb66f7", "tests/test_versions.py::test_the_docs_snippet_says_what_the_page_says"),
    "python-api": ("aedd7db8c841", HERE + "test_python_api_snippet_runs_top_to_bottom"),
    "runtime/program": ("6d542964cc62", HERE + "test_runtime_snippet_compiles_and_runs"),
    "hwcaps/meson.build": ("831d8ba2185b", "tests/test_hwcaps.py::test_the_how_to_snippets_are_the_fixture_s_code"),
    "hwcaps/option": ("55b7c9a53f28", "tests/test_hwcaps.py::test_the_how_to_snippets_are_the_fixture_s_code"),
}


def _defined_tests() -> set[str]:
    return {f"tests/{path.name}::{node.name}" for path in (ROOT / "tests").glob("test_*.py")
            for node in ast.parse(path.read_text()).body if isinstance(node, ast.FunctionDef)}


# --------------------------------------------------------------------------- the registry


def test_every_block_a_user_would_copy_has_a_snippet_id() -> None:
    missing = [f"{b.page}: {b.text.splitlines()[0] if b.text else ''}" for b in blocks()
               if b.id is None and b.lang != "text"]
    assert missing == [], "give each block a '<!-- snippet: ID -->' line and a test, or fence output as text"


def test_every_fence_is_seen() -> None:
    """A fence the parser would miss (indented, in a list) would escape the checks below."""
    for path in pages():
        fences = sum(1 for line in path.read_text().splitlines() if line.lstrip().startswith("```"))
        assert fences == 2 * sum(1 for b in blocks() if Path(ROOT / b.page).resolve() == path.resolve()), path


def test_every_snippet_is_registered_with_its_digest_and_an_existing_test() -> None:
    found = {b.id: snippet(b.id) for b in blocks() if b.id is not None}
    assert sorted(found) == sorted(SNIPPETS), "snippet ids in the pages and in SNIPPETS differ"
    changed = {name: digest(text) for name, text in found.items() if digest(text) != SNIPPETS[name][0]}
    assert changed == {}, f"snippets changed: update the test named in SNIPPETS, then these digests: {changed}"
    tests = _defined_tests()
    assert sorted({t for _, t in SNIPPETS.values()} - tests) == []


def test_excerpts_are_part_of_the_snippet_they_quote() -> None:
    assert snippet("consumer/test-loop") in snippet("consumer/meson.build")


# --------------------------------------------------------------------------- the site


def _nav_pages() -> list[str]:
    return re.findall(r":\s+(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)


def test_every_page_is_in_the_navigation_once() -> None:
    nav = _nav_pages()
    on_disk = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(nav) == on_disk and len(set(nav)) == len(nav)


def test_site_builds_strictly(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        message = "mkdocs is not installed (pip install '.[dev]')"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    command = snippet("contributing/site")
    assert "python3 -m mkdocs build --strict" in command and "'.[dev]'" in command
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    page = (tmp_path / "site" / "tutorial" / "use-from-meson.html").read_text()
    assert 'href="write-a-kernel.html"' in page  # links work from disk (file://), as the README opens it


def test_links_of_the_top_level_documents_resolve() -> None:
    """README.md and CONTRIBUTING.md are read on their own (the site checks the pages under docs/)."""
    for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md"):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", (ROOT / name).read_text()):
            if not re.match(r"\w+:", target):
                assert (ROOT / target).exists(), f"{name}: {target}"


def test_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150


def test_every_documented_subproject_variable_is_set_by_the_glue() -> None:
    page = (ROOT / "docs" / "reference" / "options.md").read_text()
    table = page.split("## Subproject variables", 1)[1].split("\n## ", 1)[0]
    names = {n for row in re.findall(r"^\| (`\w+`(?: / `\w+`)*) \|", table, re.M) for n in re.findall(r"`(\w+)`", row)}
    glue = (ROOT / "meson.build").read_text()
    assert len(names) > 10 and sorted(n for n in names if not re.search(rf"^{n} [+]?= ", glue, re.M)) == []


def test_features_file_reference_lists_every_key_of_the_schema() -> None:
    schema = json.loads((ROOT / "ccopt_meson" / "data" / "schema.json").read_text())["definitions"]
    page = (ROOT / "docs" / "reference" / "features-file.md").read_text()
    top, row = page.split("## A feature row", 1)
    assert set(re.findall(r"^\| `(\w+)` \|", top, re.M)) == set(schema["project"]["properties"])
    documented = set(re.findall(r"^\| `(\w+)` \|", row, re.M))
    documented |= set(re.findall(r"`(\w+)`", row.split("Other optional")[1]))
    assert set(schema["feature"]["properties"]) <= documented


def test_options_reference_lists_every_option() -> None:
    options = re.findall(r"option\('([\w-]+)'", (ROOT / "meson_options.txt").read_text())
    table = re.findall(r"^\| `([\w-]+)` \| .* \| (0\.1\.0|0\.2\.0) \|$",
                       (ROOT / "docs" / "reference" / "options.md").read_text(), re.M)
    assert sorted(set(options) - {name for name, _ in table}) == []


def test_what_the_options_reference_dates_0_2_0_is_in_the_changelog_s_0_2_0() -> None:
    page = (ROOT / "docs" / "reference" / "options.md").read_text()
    rows = re.findall(r"^\| ((?:`[\w-]+`(?: / )?)+) \| .* \| 0\.2\.0 \|$", page, re.M)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    release = changelog.split(f"## {__version__} (", 1)[1].split("\n## ", 1)[0]
    assert rows and [r for r in rows if not any(n in release for n in re.findall(r"`[\w-]+`", r))] == []
    assert f"version {__version__}" in page.replace("\n", " ")


# --------------------------------------------------------------------------- the snippets


def test_cross_snippets_are_what_the_cross_tests_run() -> None:
    from .test_cross import CROSS

    assert snippet("cross/aarch64.ini") == (ROOT / "tests" / "cross" / "aarch64.ini").read_text()
    assert snippet("cross/build") == "meson setup build-aarch64 --cross-file aarch64.ini\nmeson test -C build-aarch64\n"
    triple, models = CROSS["aarch64"]
    for line in snippet("cross/models").splitlines():
        argv = shlex.split(line)
        assert argv[:3] == ["qemu-aarch64-static", "-L", f"/usr/{triple}"] and argv[3] == "-cpu"
        assert argv[4] in {model for model, _ in models} and argv[5] == "build-aarch64/test_dot"


def test_cross_models_table_is_what_the_cross_tests_check() -> None:
    from .test_cross import CROSS, X86_MODELS

    page = (ROOT / "docs" / "how-to" / "cross-compilation.md").read_text()
    rows = dict(re.findall(r"^\| (\w+)(?: \(native build\))? \| (`.*`) \|$", page, re.M))
    expected = {arch: models for arch, (_, models) in CROSS.items()} | {"x86_64": X86_MODELS}
    assert {arch: re.findall(r"`([^`]+)`: `(\w+)`", row) for arch, row in rows.items()} == {
        arch: [tuple(m) for m in models] for arch, models in expected.items()}


def test_line_formats_reference_names_every_configure_key(tmp_path: Path) -> None:
    from .helpers import cli, configure_args, fakecc

    r = cli(*configure_args(tmp_path, fakecc("instant")))
    assert r.returncode == 0, r.stderr
    first = (line.split("\t")[0] for line in r.stdout.splitlines())
    keys = {"target:NAME" if k.startswith("target:") else k for k in first}
    page = (ROOT / "docs" / "reference" / "line-formats.md").read_text()
    table = page.split("## `configure` lines", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `([\w:]+)` \|", table, re.M))
    assert keys <= documented and documented - keys <= {"warning"}  # a warning line only when there is one


def test_detect_sample_output_is_what_detect_prints() -> None:
    """The `text` block of docs/reference/cli.md, line by line (shortened lines end in '...'), from the
    instant fake gcc 12 on x86_64 named as `cc`."""
    from .helpers import cli, fakecc

    sample = next(b.text for b in blocks() if b.page.endswith("cli.md") and b.text.startswith("$ ccopt-meson detect"))
    r = cli("detect", "--cc-arg", fakecc("instant"))
    assert r.returncode == 0, r.stderr
    out = r.stdout.replace(f"({fakecc('instant')})", "(cc)").splitlines()
    for line in sample.splitlines()[1:]:
        if line.strip() == "...":
            continue
        if line.endswith(" ..."):
            assert any(o.startswith(line[:-4]) for o in out), line
        else:
            assert line in out, line


def test_parent_options_snippet_is_the_fixture_s_code() -> None:
    """Its lines, in order, are lines of tests/projects/parent_options (which tests/test_meson.py builds)."""
    fixture = iter((ROOT / "tests" / "projects" / "parent_options" / "meson.build").read_text().splitlines())
    for line in snippet("parent-options").splitlines():
        assert line in fixture, line


def test_project_features_snippets_load(tmp_path: Path) -> None:
    fixture = ROOT / "tests" / "projects" / "project_features" / "features"
    doc = json.loads(snippet("project-features/file"))
    assert doc["features"] == json.loads((fixture / "ccopt.json").read_text())["features"]
    (tmp_path / "adx.c").write_text((fixture / "adx.c").read_text())
    (tmp_path / "ccopt.json").write_text(snippet("project-features/file"))
    loaded = project.load(tmp_path / "ccopt.json")
    assert loaded is not None
    (tmp_path / "override.json").write_text(snippet("project-features/override"))
    overridden = project.load(tmp_path / "override.json")
    avx2 = tables.table_for("x86_64", "gcc", overridden).get("AVX2")
    assert "FMA3" in avx2.implies and [7, 0, "ebx", 8] in avx2.runtime["cpuid"]  # BMI2's bit, as the page says


def test_python_api_snippet_runs_top_to_bottom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if host.machine_name() != "x86_64":
        pytest.skip("the snippet names x86_64 features")
    need("ccache")
    need("gcc")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "ccache"))
    exec(compile(snippet("python-api"), "python-api", "exec"), {})
    assert not (tmp_path / "build" / "ccopt-features.json").exists()  # its last line flushed


def test_runtime_snippet_compiles_and_runs(tmp_path: Path) -> None:
    gcc = need("gcc")
    emit_runtime.write_table(tmp_path)
    (tmp_path / "cpu.c").write_text(snippet("runtime/program"))
    runtime = ROOT / "ccopt_meson" / "runtime"
    exe = tmp_path / "cpu"
    subprocess.run([gcc, "-std=c99", "-Wall", "-Werror", f"-I{tmp_path}", f"-I{runtime}", str(tmp_path / "cpu.c"),
                    str(runtime / "ccopt_cpu.c"), "-o", str(exe)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert out.splitlines()[-1].startswith(f"{platform.machine()}: ")


def _numpy_case_row(version: str, platform_name: str, options: tuple[str, ...]) -> tuple[str, str, str]:
    """A case of tests/test_example_numpy.py as examples/numpy/README.md's table spells it."""
    shown = {"x86_64-gcc": "x86_64 gcc", "x86_64-clang": "x86_64 clang"}.get(platform_name, f"{platform_name} (cross)")
    return version, shown, ", ".join(f"`{o.removeprefix('-D')}`" for o in options) or "defaults"


def test_numpy_cases_table_is_the_test_s_list() -> None:
    """The claim as evidence: the README's table of configurations compared with numpy's fork lists exactly the
    cases the comparison test runs, and the docs' summary counts them."""
    from .test_example_numpy import BUILT, CASES

    readme = (ROOT / "examples" / "numpy" / "README.md").read_text()
    table = readme.split("### Configuration: the cases compared", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| (\d+\.\d+\.\d+) \| ([^|]+?) \| ([^|]+?) \| [^|]+ \|$", table, re.M)
    assert sorted(rows) == sorted(_numpy_case_row(*c) for c in CASES)
    platforms = {c.platform for c in CASES}
    summary = (ROOT / "docs" / "project" / "examples.md").read_text()
    said = f"{len(CASES)} cases ({len({c.version for c in CASES})} versions, {len(platforms)} platforms)"
    assert said in summary and said in readme
    built = ", ".join(BUILT)
    assert f"built and tested: numpy {built} on x86_64" in readme and f"built and tested: numpy {built}" in summary


def test_numpy_cases_table_figures_are_the_recorded_fork_s() -> None:
    """Each row's figures, ``identical (53 objects, 5 targets)``, are those of the fork's recorded dump of
    its case, a row saying ``differs`` is a case of the comparison test's ``DIFFERS``, and a row where both refuse
    is a case the fork refused (the ``native`` rows, which depend on
    the CPU, have no record)."""
    from .test_example_numpy import CASES, DIFFERS, configure_numpy

    readme = (ROOT / "examples" / "numpy" / "README.md").read_text()
    table = readme.split("### Configuration: the cases compared", 1)[1].split("\n#", 1)[0]
    results = {row[:3]: row[3] for row in re.findall(r"^\| (\d+\.\d+\.\d+) \| ([^|]+?) \| ([^|]+?) \| ([^|]+) \|$",
                                                     table, re.M)}
    for case in CASES:
        if case.on_this_cpu:
            continue
        dump = configure_numpy.read_record(configure_numpy.RECORDED / f"{case.id}.json.gz")["dump"]
        result = results[_numpy_case_row(case.version, case.platform, case.options)]
        figures = re.match(r"(?:identical|differs) \((\d+)(?: objects)?, (\d+)(?: targets)?\b", result)
        assert result.startswith("differs") == (case.id in DIFFERS), f"{case.id}: {result}"
        if not dump["configured"]:
            assert result.startswith("both refuse"), case.id
            continue
        assert figures, f"{case.id}: {result}"
        targets = {key.split(":")[1] for key in dump["objects"]}
        assert (int(figures.group(1)), int(figures.group(2))) == (len(dump["objects"]), len(targets)), case.id


# --------------------------------------------------------------------------- facts that would rot


def test_history_is_in_the_changelog_not_in_the_guides() -> None:
    """A guide or an explanation says what the tool does; what it did before is the changelog's."""
    marks = re.compile(r"\*\*(?:fixed|changed|improved)\*\*|\((?:fixed|before:)[ )]")
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in (ROOT / "docs").rglob("*.md")
             if p.parent.name in ("how-to", "explanation", "tutorial", "reference")
             for m in marks.finditer(p.read_text())]
    assert found == []


def test_the_numpy_port_s_version_is_the_example_s_current_release() -> None:
    current = re.search(r'^CURRENT = "([\d.]+)"', (ROOT / "examples" / "numpy" / "prepare_numpy.py").read_text(), re.M)
    assert current
    claims = {"docs/how-to/own-runtime.md": r"`examples/numpy` builds numpy ([\d.]+)",
              "docs/how-to/port-from-numpy-distutils.md": r"is a complete port of\s+numpy ([\d.]+)'s",
              "CONTRIBUTING.md": r"examples/numpy/\s+numpy ([\d.]+) on stock Meson",
              "docs/project/examples.md": r"`examples/numpy` ports numpy's current release, ([\d.]+),"}
    for page, claim in claims.items():
        m = re.search(claim, (ROOT / page).read_text())
        assert m and m.group(1) == current.group(1), f"{page}: the port is numpy {current.group(1)}"


def test_contributing_counts_the_tests_there_are() -> None:
    """CONTRIBUTING's 'about N tests, M of them fast' against pytest's own count, within 10%."""
    stated = re.search(r"about ([\d,]+) tests, ([\d,]+) of them fast", (ROOT / "CONTRIBUTING.md").read_text())
    assert stated, "CONTRIBUTING.md: the sentence counting the tests moved"
    collect = ["--collect-only", "-q", "-m", "not slow", "-p", "no:cacheprovider", "tests"]
    r = subprocess.run([sys.executable, "-m", "pytest", *collect], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    counted = re.search(r"^(\d+)/(\d+) tests collected", r.stdout, re.M)
    assert counted, r.stdout[-2000:] + r.stderr[-2000:]
    fast, total = int(counted.group(1)), int(counted.group(2))
    for said, real in ((stated.group(1), total), (stated.group(2), fast)):
        assert abs(int(said.replace(",", "")) / real - 1) < 0.10, f"CONTRIBUTING.md: {said} tests; pytest counts {real}"


def test_the_sdist_size_the_meson_python_page_states(tmp_path: Path) -> None:
    """An sdist carries the subproject as a wrap fetches it: every file of this Git tree, gzip-compressed."""
    git = need("git")
    listed = subprocess.run([git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = [n for n in listed.decode().split("\0") if n and (ROOT / n).is_file() and not (ROOT / n).is_symlink()]
    archive = tmp_path / "tree.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in names:
            tar.add(ROOT / name, arcname=name)
    stated = re.search(r"the whole subproject \(about (\d+) files, ([\d.]+) MB compressed\)",
                       (ROOT / "docs" / "how-to" / "meson-python.md").read_text())
    assert stated, "docs/how-to/meson-python.md: the sentence with the sdist's size moved"
    size = archive.stat().st_size / 1e6
    assert abs(len(names) / int(stated.group(1)) - 1) < 0.15, f"the tree has {len(names)} files"
    assert abs(size / float(stated.group(2)) - 1) < 0.25, f"the tree is {size:.2f} MB compressed"


def test_the_windows_snippets_are_the_repository_s_cross_file_and_example() -> None:
    """docs/how-to/windows.md: the cross file the Windows tests use (without its comments), and examples/dot's
    canary and test loop, which tests/test_windows.py runs under wine."""
    ini = (ROOT / "tests" / "cross" / "x86_64-w64-mingw32.ini").read_text()
    kept = [line for line in ini.splitlines() if not line.startswith("#")]
    assert snippet("windows/cross-file").strip() == "\n".join(kept)
    example = (ROOT / "examples" / "dot" / "meson.build").read_text()
    lines = [line for line in example.splitlines() if not line.startswith("#")]  # the top-level comments
    assert snippet("windows/test-loop") in "\n".join(lines)


def test_the_detect_baseline_the_pages_state_is_what_gcc_detects() -> None:
    """gcc on x86_64 with the default cpu-baseline, detect, gets SSE SSE2: the pages that state it (and the audit
    example's 'may use the baseline (...)') say what the helper answers, never the old default's SSE3."""
    from ccopt_meson import Request, detect

    if host.machine_name() != "x86_64":
        pytest.skip("the pages state gcc's x86_64 baseline")
    names = " ".join(detect(Request(command=(need("gcc"),), baseline="detect", dispatch="none")).baseline)
    assert names == "SSE SSE2"
    docs = ROOT / "docs"
    for page in ("how-to/meson-python.md", "how-to/library-maintainers.md", "reference/options.md"):
        assert f"`{names}`" in (docs / page).read_text(), page
    audit = (docs / "how-to" / "isa-audit.md").read_text()
    assert f"may use the baseline ({names})" in audit and "may use the baseline (SSE3)" not in audit
    assert "lacks SSE3" not in (docs / "how-to" / "meson-python.md").read_text()
