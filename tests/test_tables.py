"""Invariants over every record of every feature table (the data is the spec)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from ccopt_meson import tables
from ccopt_meson.errors import TableError
from ccopt_meson.flags import normalize_flags
from ccopt_meson.schema import read_json, validate_schema

from .conftest import need

STYLES = tables.compilers_data()["styles"]
IDS = list(tables.compilers_data()["compilers"])
MACHINES = [m.name for m in tables.machines()]
RECORDS = [(m, f["name"]) for m in tables.machines() for f in tables.raw_family(m.family)["features"]]


@pytest.mark.parametrize("family", tables.families())
def test_table_validates_against_schema(family: str) -> None:
    tables.validate_family(family)
    assert tables.raw_family(family)["family"] == family


@pytest.mark.parametrize("machine,name", [(m.name, n) for m, n in RECORDS])
def test_every_feature_has_a_probe_and_sane_links(machine: str, name: str) -> None:
    t = tables.table_for(machine, "gcc")
    f = t.get(name)
    assert f.probe.is_file(), f"missing probe {f.probe}"
    assert f"ccopt_probe_{name.lower()}" in f.probe.read_text()
    for dep in f.implies:
        assert dep in t.features, f"{name} implies unknown {dep}"
    for extra in f.extra_checks:
        assert t.extra_checks[extra].probe.is_file()
        assert t.extra_checks[extra].feature == name


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("compiler_id", IDS)
def test_implication_respects_interest(machine: str, compiler_id: str) -> None:
    """A feature implies only lower features, except explicit mutual ties (SSE<->SSE2)."""
    t = tables.table_for(machine, compiler_id)
    for name, f in t.features.items():
        if f.disabled:
            continue
        for dep in t.closure([name]) - {name}:
            mutual = name in t.closure([dep])
            assert mutual or t.get(dep).interest < f.interest, f"{name} implies higher {dep}"


@pytest.mark.parametrize("family", tables.families())
def test_interest_is_a_total_order(family: str) -> None:
    interests = [f["interest"] for f in tables.raw_family(family)["features"]]
    assert len(set(interests)) == len(interests)


@pytest.mark.parametrize("family", tables.families())
def test_names_are_unique_in_a_family_and_found_in_each_of_theirs(family: str) -> None:
    """A name may belong to several families (AES on x86 and arm): lookups return all of them."""
    names = [f["name"] for f in tables.raw_family(family)["features"]]
    assert len(names) == len(set(names))
    for name in names:
        assert family in tables.families_of(name)
    assert tables.families_of("NOT_A_FEATURE") == ()


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("compiler_id", IDS)
def test_every_style_has_flags_or_a_reason(machine: str, compiler_id: str) -> None:
    t = tables.table_for(machine, compiler_id)
    for f in t.features.values():
        assert f.disabled or f.flags is not None
        if f.disabled:
            assert len(f.disabled) > 10


@pytest.mark.parametrize("machine", MACHINES)
def test_min_features_exist(machine: str) -> None:
    t = tables.table_for(machine, "gcc")
    assert set(t.machine.min) <= set(t.features)


def test_numpy_implication_closures_for_legacy_names() -> None:
    t = tables.table_for("x86_64", "gcc")
    fine = {"SSE42_ISA", "AVX2_ISA"}  # the bare ISA features AVX2 executes
    assert t.sort(t.closure(["AVX2"]) - fine) == "SSE SSE2 SSE3 SSSE3 SSE41 POPCNT SSE42 AVX F16C AVX2".split()
    assert t.closure(["SSE"]) == {"SSE", "SSE2"}
    levels = [n for n in t.sort(t.closure(["AVX512_ICL"]) - {"AVX512_ICL"}) if n.startswith("AVX512_")]
    assert levels[-3:] == ["AVX512_SKX", "AVX512_CLX", "AVX512_CNL"]
    assert t.flags_for(["AVX2"]) == "-msse -msse2 -msse3 -mssse3 -msse4.1 -mpopcnt -msse4.2 -mavx -mf16c -mavx2".split()


def test_aarch64_never_uses_mfpu_and_merges_march() -> None:
    t = tables.table_for("aarch64", "gcc")
    for name in t.features:
        assert not any(f.startswith("-mfpu") for f in t.flags_for([name]))
    assert t.flags_for(["ASIMDFHM"]) == ["-march=armv8.2-a+fp16+fp16fml"]
    assert t.closure(["NEON"]) == {"NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"}


def test_msvc_never_maps_sse4_to_avx() -> None:
    t = tables.table_for("x86_64", "msvc")
    for name in ("SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42"):
        assert "/arch:AVX" not in t.flags_for([name])
    assert t.flags_for(["SSE42"]) == ["/arch:SSE4.2"]
    assert t.flags_for(["AVX512_SKX"]) == ["/arch:AVX512"]
    assert t.get("AVX512_KNL").disabled


def test_normalize_keeps_last_and_merges_plus_parts() -> None:
    conflicts = tables.compilers_data()["flag_conflicts"]["gnu"]
    got = normalize_flags(["-mfpu=neon", "-march=armv8-a+simd", "-mfpu=neon-fp-armv8", "-march=armv8.2-a+fp16"],
                                 conflicts)
    assert got == ["-mfpu=neon-fp-armv8", "-march=armv8.2-a+simd+fp16"]
    assert normalize_flags(["-msse", "-msse"], conflicts) == ["-msse"]


def test_schema_rejects_an_unknown_key() -> None:
    schema = json.loads((tables.DATA_DIR / "schema.json").read_text())
    raw = json.loads((tables.FEATURES_DIR / "s390x.json").read_text())
    raw["features"][0]["flagz"] = []
    with pytest.raises(tables.TableError, match="unknown key 'flagz'"):
        validate_schema(raw, schema, schema["definitions"], "s390x.json")


def test_a_malformed_table_is_a_table_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "raw_family", lambda family: {"family": family, "machines": [{"name": "x"}]})
    tables.machines.cache_clear()
    try:
        with pytest.raises(tables.TableError, match="missing required key 'unsupported_styles'"):
            tables.machines()
    finally:
        tables.machines.cache_clear()


def test_flags_build_on_the_users_own_cpu_choice() -> None:
    arm = tables.table_for("aarch64", "gcc")
    # an additive -march keeps the user's base and extensions
    assert arm.with_context(["-march=armv8.4-a+crypto"]).flags_for(["SVE"]) == ["-march=armv8.4-a+crypto+fp16+sve"]
    # a user -mcpu takes our extensions instead of a conflicting -march
    assert arm.with_context(["-mcpu=neoverse-v1"]).flags_for(["ASIMDDP"]) == ["-mcpu=neoverse-v1+dotprod"]
    # a level flag is the feature itself: it still wins over the user's lower one
    z = tables.table_for("s390x", "gcc").with_context(["-march=z14"])
    assert z.flags_for(["VXE2"])[-1] == "-march=arch13"
    assert tables.table_for("x86_64", "gcc").with_context(["-march=haswell"]).flags_for(["AVX2"])[-1] == "-mavx2"
    # a flag equal to the user's own is still given: c_args never reach a C++ line, these flags serve both
    assert arm.with_context(["-march=armv8.2-a+fp16"]).flags_for(["ASIMDHP"]) == ["-march=armv8.2-a+fp16"]


@pytest.mark.parametrize(("user", "lines", "feature", "line"), [
    ("-march=armv8-a", ["-march=armv8.2-a"], "ASIMDHP", "-march=armv8.2-a+fp16"),  # not armv8-a+fp16 (gcc 12 refuses)
    ("-march=armv8-a+crc", ["-march=armv8.2-a"], "ASIMDDP", "-march=armv8.2-a+dotprod"),  # the fork's line
    ("-mcpu=neoverse-n1", ["-march=armv8.2-a"], "ASIMDHP", "-march=armv8.2-a+fp16"),  # not -mcpu=neoverse-n1+fp16
    ("-mcpu=neoverse-v1", [], "SVE", "-mcpu=neoverse-v1+fp16+sve"),  # -march=armv8.2-a would lower that CPU
    ("-march=armv8.4-a+crypto", [], "ASIMDDP", "-march=armv8.4-a+crypto+dotprod"),
    ("-march=native", [], "ASIMDHP", "-march=native+fp16"),
])
def test_a_merged_flag_is_our_line_whole_where_the_compiler_says_it_keeps_the_users(
        user: str, lines: list[str], feature: str, line: str) -> None:
    """numpy's fork writes ASIMDHP's -march=armv8.2-a+fp16 after the user's -march=armv8-a or -mcpu=neoverse-n1, so
    the feature's line wins.  Where the compiler says that base keeps all the user's flag enables
    (``probe.architecture_lines``, the table's ``lines``), ours is the line whole; elsewhere our +ext parts go onto
    the user's flag."""
    arm = tables.table_for("aarch64", "gcc").with_context([user], lines)
    assert arm.flags_for([feature]) == [line]


def test_lines_without_a_cpu_choice_of_the_user_are_dropped() -> None:
    arm = tables.table_for("aarch64", "gcc")
    assert arm.with_context([], ["-march=armv8.2-a"]) is arm


def test_compilers_json_matches_its_schema() -> None:
    from ccopt_meson.tables import DATA_DIR, compilers_data

    schema = read_json(DATA_DIR / "compilers.schema.json")
    validate_schema(compilers_data(), schema, schema["definitions"], "compilers.json")
    data = compilers_data()
    for cid, entry in data["compilers"].items():  # every id names a known driver and style
        assert entry["driver"] in data["drivers"] and entry["style"] in data["styles"], cid
    assert data["reference"] in data["compilers"]


# --------------------------------------------------------------------------- every table message


def test_table_errors(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=r"^cannot read feature table nope\.json: "):
        read_json(tmp_path / "nope.json")
    schema = json.loads((tables.DATA_DIR / "schema.json").read_text())
    defs = schema["definitions"]

    def fails(edit: Callable[[dict[str, Any]], None], message: str) -> None:
        raw = json.loads((tables.FEATURES_DIR / "s390x.json").read_text())
        edit(raw)
        with pytest.raises(TableError) as exc:
            validate_schema(raw, schema, defs, "s390x.json")
        assert str(exc.value) == message

    fails(lambda r: r["features"][0].update(interest="10"),
          's390x.json.features[0].interest: expected integer, got "10"')
    fails(lambda r: r["features"][0].update(interest=0), "s390x.json.features[0].interest: 0 is below 1")
    fails(lambda r: r["features"][0].update(name="vx"),
          "s390x.json.features[0].name: 'vx' is not a feature name (upper-case letters and digits, words joined by "
          "single '_')")
    fails(lambda r: r["features"][0].pop("macros"), "s390x.json.features[0]: missing required key 'macros'")
NUMPY_LEVELS = json.loads((Path(__file__).parent / "data" / "numpy_levels.json").read_text())


@pytest.mark.parametrize("key", sorted(k for k in NUMPY_LEVELS if not k.startswith("_")))
def test_numpy_levels_keep_their_meaning(key: str) -> None:
    """A fine-grained feature never changes a numpy level: same flags (in order), same closure over
    numpy's names, same run-time recipe, on every machine and compiler (recorded before the fine
    features existed; a level now also implies the fine features whose instructions it executes)."""
    machine, compiler_id, name = key.split()
    t = tables.table_for(machine, compiler_id)
    f = t.get(name)
    numpy_names = {k.split()[2] for k in NUMPY_LEVELS if k.split()[:2] == [machine, compiler_id]}
    got = {"flags": t.flags_for([name]), "closure": t.sort(t.closure([name]) & numpy_names),
           "runtime": {k: v for k, v in f.runtime.items() if k != "cpuinfo"},
           "disabled": f.disabled, "macros": list(f.macros), "group": list(f.group)}
    assert got == NUMPY_LEVELS[key]


# Pairs where a feature's flags enable another's macros without implying it, each with the reason.
NOT_IMPLIED = {
    ("XOP", "FMA4"): "gcc and clang turn on FMA4 with -mxop, but numpy's graph keeps its two names apart "
                     "(a numpy name's closure never changes); every XOP CPU (AMD family 15h) has FMA4",
    ("AVX512_KNM", "AVX512VPOPCNTDQ"): "implying it would rank it below AVX512_KNM and move numpy's last "
                                       "KNM flag; Knights Mill, the one AVX512_KNM CPU, has VPOPCNTDQ",
}


def _defined_macros(cc: str, flags: list[str]) -> set[str] | None:
    import subprocess

    r = subprocess.run([cc, "-dM", "-E", "-x", "c", os.devnull, *flags], capture_output=True, text=True)
    if r.returncode != 0:
        return None  # a flag this compiler does not know (clang 14 dropped -mavx5124fmaps)
    return {line.split()[1] for line in r.stdout.splitlines() if line.startswith("#define ")}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_implication_is_what_the_flags_enable(cc: str) -> None:
    """For every pair of x86_64 features: A implies B exactly when A's flags make the compiler define
    the macros of B and of everything B implies (its instructions), so masks and CCOPT_HAVE_* follow
    the hardware. Macros every x86_64 build defines (SSE2) say nothing and are left out."""
    path = need(cc)
    t = tables.table_for("x86_64", "clang" if cc == "clang" else "gcc")
    default = _defined_macros(path, []) or set()
    names = [n for n, f in t.features.items() if f.disabled is None]
    instructions = {n: set().union(*(t.get(m).macros for m in t.closure([n]))) for n in names}
    enabled = {n: _defined_macros(path, t.flags_for([n])) for n in names}
    wrong = []
    for a in names:
        for b in names:
            if a == b or enabled[a] is None or instructions[b] <= default or (a, b) in NOT_IMPLIED:
                continue
            if (instructions[b] <= enabled[a]) != (b in t.closure([a])):
                wrong.append(f"{a} {'enables' if b not in t.closure([a]) else 'implies but does not enable'} {b}")
    assert not wrong, wrong
    for a, b in NOT_IMPLIED:  # each exception is still needed
        assert enabled[a] is None or instructions[b] <= enabled[a] and b not in t.closure([a]), (a, b)


def test_msvc_on_arm64_has_neon_to_asimd_without_a_flag() -> None:
    """MSVC documents /arch:armv8.0 as its ARM64 default (Advanced SIMD is part of Armv8.0-A) and _M_ARM64 as
    its ARM64 macro; it needs no flag for NEON..ASIMD, which every ARM row used to disable ("no MSVC flag
    spellings"). The rows above, whose /arch:armv8.x+feature spellings the table does not know, say so."""
    t = tables.table_for("aarch64", "msvc")
    base = ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    for name in base:
        f = t.get(name)
        assert f.disabled is None and f.flags == () and f.macros == ("_M_ARM64",), name
    others = [f for n, f in t.features.items() if n not in base]
    assert others and all(f.disabled == f"no msvc-style flags are known for {f.name}" for f in others)
    assert all(f.disabled for f in tables.table_for("armhf", "msvc").features.values())


def test_macros_json_fits_its_schema() -> None:
    from ccopt_meson.schema import check
    from ccopt_meson.tables import macros_data

    check(macros_data(), "macros.schema.json", where="macros.json")
