"""Install rules never write outside the package tree: the destination check before an
install and the manifest check after it (buildkit/builder/install/destinations.py), on
scripts written here and, end to end, on tests/packages/hostile_install through
`buildkit develop` and `pip wheel`, with a canary folder outside the project that the
hostile rule aims at."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from buildkit.builder.install.destinations import DestinationCheck, check_written
from buildkit.builder.install.script import read_units
from buildkit.errors import BuildkitError
from buildkit_testing.processes import hermetic, run, squashed, unboxed
from buildkit_testing.projects import add_settings
from buildkit_testing.venvs import overlay_venv

PREAMBLE = """\
# Install script for directory: {source}

if(NOT DEFINED CMAKE_INSTALL_PREFIX)
  set(CMAKE_INSTALL_PREFIX "{configured}")
endif()
"""
RULE = """
if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  {body}
endif()
"""


def write_script(tmp_path: Path, *bodies: str) -> tuple[Path, Path, Path]:
    """A build folder whose cmake_install.cmake holds one rule per body; returns the build
    folder, the source folder and the configured prefix (a staging prefix is elsewhere)."""
    source, build, configured = tmp_path / "project", tmp_path / "project" / "build", tmp_path / "project" / "pkg"
    build.mkdir(parents=True)
    text = PREAMBLE.format(source=source, configured=configured) + "".join(RULE.format(body=b) for b in bodies)
    (build / "cmake_install.cmake").write_text(text)
    return build, source, configured


def refusal(tmp_path: Path, body: str, prefix: Path | None = None) -> str | None:
    """The destination check's message for a script with one rule, None when it passes."""
    build, _, configured = write_script(tmp_path, body)
    scripts = read_units(build / "cmake_install.cmake")
    try:
        DestinationCheck(prefix or configured, build).check_units(scripts.units)
    except BuildkitError as error:
        return str(error)
    return None


@pytest.mark.parametrize(("body", "named"), [
    ('file(INSTALL DESTINATION "/elsewhere/docs" TYPE FILE FILES "/src/notes.txt")',
     ["install(FILES) of notes.txt", "/elsewhere/docs is absolute", "DESTINATION share/<name>",
      "project/CMakeLists.txt"]),
    ('file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/../../x" TYPE FILE FILES "/src/notes.txt")',
     ["${CMAKE_INSTALL_PREFIX}/../../x climbs out of the prefix", "use `DESTINATION x`"]),
    ('file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/../../up/x" TYPE DIRECTORY FILES "/src/data/")',
     ["install(DIRECTORY) of data", "climbs out", "DESTINATION up/x"]),
    ('file(INSTALL DESTINATION "{configured}/docs" TYPE FILE FILES "/src/notes.txt")',
     ["{configured}/docs is absolute", "expanded when CMake configures", "use `DESTINATION docs`"]),
    ('file(INSTALL DESTINATION "/elsewhere/lib" TYPE SHARED_LIBRARY FILES "/build/libx.so")',
     ["install(TARGETS) of libx.so", "/elsewhere/lib is absolute"]),
    ('file(WRITE "/elsewhere/code.txt" "x")', ["install(CODE)", "/elsewhere/code.txt", "file(WRITE ...)",
                                               "\\${CMAKE_INSTALL_PREFIX}"]),
    ('file(COPY "/src/notes.txt" DESTINATION "/elsewhere")', ["install(CODE)", "file(COPY ...)"]),
    ('file(MAKE_DIRECTORY "${CMAKE_INSTALL_PREFIX}/../../elsewhere")', ["install(CODE)", "file(MAKE_DIRECTORY"]),
    ('configure_file("/src/in.txt" "/elsewhere/out.txt")', ["install(CODE)", "/elsewhere/out.txt"]),
    ('file(INSTALL DESTINATION "{build}/wheel-dirs/../../../elsewhere" TYPE FILE FILES "/src/notes.txt")',
     ["wheel-dirs/../../../elsewhere is absolute: no install prefix moves it"]),
])
def test_a_rule_that_writes_outside_is_refused_by_name(tmp_path, body, named):
    configured = tmp_path / "project" / "pkg"
    body = body.replace("{configured}", str(configured)).replace("{build}", str(tmp_path / "project" / "build"))
    message = refusal(tmp_path, body, prefix=tmp_path / "staging" / "pkg")
    assert message is not None and "buildkit installed nothing" in message
    for fragment in named:
        assert fragment.replace("{configured}", str(configured)) in message, message


@pytest.mark.parametrize("body", [
    'file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib" TYPE SHARED_LIBRARY FILES "/build/libx.so")',
    'file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}" TYPE FILE FILES "/src/top.py")',
    'file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/a/../b" TYPE FILE FILES "/src/notes.txt")',
    'file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/${SUBDIR}" TYPE FILE FILES "/src/notes.txt")',
    'file(WRITE "${CMAKE_INSTALL_PREFIX}/code.txt" "ran")',
    'file(WRITE "generated/in-the-build-folder.txt" "ran")',
    'file(WRITE "{source}/in-the-source-folder.txt" "ran")',
    'file(WRITE "${SOMEWHERE}/only-cmake-knows.txt" "ran")',
    'file(READ "/etc/hostname" content)',
    'execute_process(COMMAND "/usr/bin/true")',
    # scikit-build-core's SKBUILD_SCRIPTS_DIR and its siblings: absolute, in the build folder (package/wheel_root.py)
    'file(INSTALL DESTINATION "{build}/wheel-dirs/scripts" TYPE EXECUTABLE FILES "/build/tool")',
])
def test_a_rule_that_stays_inside_passes(tmp_path, body):
    body = body.replace("{source}", str(tmp_path / "project")).replace("{build}", str(tmp_path / "project" / "build"))
    assert refusal(tmp_path, body) is None


def test_skbuild_platlib_dir_is_the_prefix_this_install_writes_to(tmp_path):
    """Wheel-root mode defines SKBUILD_PLATLIB_DIR as the install's prefix: the staging tree
    for a wheel, the package root for develop (package/wheel_root.py), so an absolute
    `DESTINATION ${SKBUILD_PLATLIB_DIR}` lands in the right tree (scikit-build-core's
    filepath_pure sample); it was refused as an escape.  The configured prefix stays one."""
    configured = tmp_path / "project" / "pkg"
    staging = tmp_path / "project" / "build" / "wheel-staging"

    def check(platlib: Path, destination: Path) -> str | None:
        build, _, _ = write_script(tmp_path, f'file(INSTALL DESTINATION "{destination}" TYPE FILE FILES "/src/x.py")')
        (build / "CMakeCache.txt").write_text(f"SKBUILD_PLATLIB_DIR:UNINITIALIZED={platlib}\n")
        try:
            DestinationCheck(staging, build).check_units(read_units(build / "cmake_install.cmake").units)
        except BuildkitError as error:
            return str(error)
        finally:
            (tmp_path / "project").rename(tmp_path / f"checked-{len(list(tmp_path.iterdir()))}")
        return None

    assert check(staging, staging) is None
    assert check(staging, staging / "pkg") is None
    # Only where it names the prefix being installed to: a develop's value, met by a wheel's install.
    message = check(configured, configured)
    assert message is not None and "expanded when CMake configures" in message


def test_an_install_dir_prefix_may_write_anywhere_in_the_wheel_root(tmp_path):
    """install-dir moves the prefix below the wheel's root: `..` out of the prefix and
    `${SKBUILD_PLATLIB_DIR}` (the root) stay in the wheel and pass; climbing out of the root,
    or a root that SKBUILD_PLATLIB_DIR does not name, is refused, naming the root."""
    root = tmp_path / "project" / "build" / "wheel-staging"
    prefix = root / "cmake_dirs"

    def check(destination: str, platlib: Path = root) -> str | None:
        build, _, _ = write_script(tmp_path, f'file(INSTALL DESTINATION "{destination}" TYPE FILE FILES "/src/x.py")')
        (build / "CMakeCache.txt").write_text(f"SKBUILD_PLATLIB_DIR:PATH={platlib}\n")
        try:
            DestinationCheck(prefix, build, root).check_units(read_units(build / "cmake_install.cmake").units)
        except BuildkitError as error:
            return str(error)
        finally:
            (tmp_path / "project").rename(tmp_path / f"checked-{len(list(tmp_path.iterdir()))}")
        return None

    assert check("${CMAKE_INSTALL_PREFIX}/sub") is None
    assert check("${CMAKE_INSTALL_PREFIX}/..") is None
    assert check("${CMAKE_INSTALL_PREFIX}/../other/pkg") is None
    assert check(str(root)) is None and check(str(root / "top")) is None
    message = check("${CMAKE_INSTALL_PREFIX}/../../up")
    assert message is not None and f"climbs out of the wheel's root {root} with '..'" in message
    assert f"and the wheel root {root} that holds it" in message
    message = check(str(root), platlib=tmp_path / "elsewhere")
    assert message is not None and f"{root} is absolute" in message
    # The manifest check after the install: the root bounds it, not the prefix.
    check_written([str(prefix / "main.py"), str(root / "random_file.py")], root, tmp_path)
    with pytest.raises(BuildkitError, match="outside the install prefix"):
        check_written([str(root.parent / "escaped.py")], root, tmp_path)


def test_install_script_writes_are_read_from_the_script(tmp_path):
    hostile = tmp_path / "hostile.cmake"
    hostile.write_text('file(APPEND "/elsewhere/log.txt" "x")\n')
    message = refusal(tmp_path, f'include("{hostile}")')
    assert message is not None and f"install(SCRIPT {hostile})" in message and "/elsewhere/log.txt" in message


def test_every_escape_is_named_in_one_error_and_a_whole_script_is_checked_too(tmp_path):
    build, _, configured = write_script(
        tmp_path, *(f'file(INSTALL DESTINATION "/elsewhere/{n}" TYPE FILE FILES "/src/{n}.txt")' for n in range(10)))
    with pytest.raises(BuildkitError, match="10 install rule") as info:
        DestinationCheck(configured, build).check_scripts()  # the reader of a script it cannot split
    assert "/elsewhere/7 " in str(info.value) and "and 2 more" in str(info.value)


def test_manifest_check_names_files_written_outside_also_through_links(tmp_path):
    prefix = tmp_path / "pkg"
    (prefix / "lib").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (prefix / "linked").symlink_to(outside)
    build = tmp_path / "build"
    scripts = build / "wheel-dirs" / "scripts"  # SKBUILD_SCRIPTS_DIR: the wheel ships it as its scripts
    scripts.mkdir(parents=True)
    check_written([str(prefix / "lib" / "libx.so"), str(prefix / "lib" / ".." / "notes.txt"), str(scripts / "tool")],
                  prefix, build)
    with pytest.raises(BuildkitError) as info:
        check_written([str(prefix / "lib" / "libx.so"), str(prefix / ".." / "escaped.txt"),
                       str(prefix / "linked" / "through-a-link.txt"), str(scripts / ".." / ".." / "beside.txt")],
                      prefix, build)
    message = str(info.value)
    assert "3 file(s) outside the install prefix" in message and "escaped.txt" in message
    assert "through-a-link.txt" in message and "beside.txt" in message and "libx.so" not in message


# ------------------------------------------------------------------ end to end

@dataclass(frozen=True)
class Row:
    rule: str  # HOSTILE_RULE
    named: tuple[str, ...]  # what the message must say: the rule, its destination, the fix
    beside_project: bool = False  # the rule aims beside the project (``..``), not at the test's own canary


ROWS = [
    Row("absolute", ("install(FILES) of notes.txt", "{canary} is absolute", "DESTINATION share/<name>",
                     "hostile_install/CMakeLists.txt")),
    Row("climbing", ("install(FILES) of notes.txt", "../../canary-climbing climbs out of the prefix",
                     "use `DESTINATION canary-climbing`"), beside_project=True),
    Row("prefix-docs", ("install(FILES) of notes.txt", "hostile_install/docs is absolute",
                        "use `DESTINATION docs`")),
    Row("code", ("install(CODE)", "{canary}/code.txt", "file(WRITE ...)")),
    Row("script", ("install(SCRIPT", "hostile_script.cmake", "{canary}/script.txt")),
]


@pytest.fixture(scope="module")
def hostile(test_package, tmp_path_factory) -> Path:
    """One copy of the package for every row: a row reconfigures with its own rule and
    rebuilds nothing else."""
    return test_package("hostile_install", tmp_path_factory.mktemp("hostile") / "project" / "hostile_install")


@pytest.fixture(scope="module")
def python(tmp_path_factory) -> Path:
    return overlay_venv(tmp_path_factory.mktemp("hostile-venv") / "venv")


def develop(python: Path, project: Path, env: dict[str, str]):
    return run([python, "-m", "buildkit", "develop", project], env=env, check=False, timeout=300)


@pytest.mark.slow
def test_the_package_builds_without_a_hostile_rule(hostile, python, tmp_path):
    """The rows below fail for their rule alone."""
    result = develop(python, hostile, hermetic(tmp_path, HOSTILE_RULE="none"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (hostile / "hostile_install" / "lib" / "libhostile.so").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=[row.rule for row in ROWS])
def test_develop_refuses_a_rule_that_writes_outside(hostile, python, tmp_path, row):
    canary = hostile.parent / f"canary-{row.rule}" if row.beside_project else tmp_path / "canary"
    canary.mkdir(exist_ok=True)
    result = develop(python, hostile, hermetic(tmp_path, HOSTILE_RULE=row.rule, HOSTILE_CANARY=str(canary)))
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "Traceback" not in output
    message = squashed(unboxed(output))  # squashed: the box wraps a long path anywhere
    assert squashed("buildkit installed nothing") in message
    for fragment in row.named:
        assert squashed(fragment.replace("{canary}", str(canary))) in message, unboxed(output)
    assert list(canary.iterdir()) == []
    assert not (hostile / "hostile_install" / "docs").exists()


@pytest.mark.slow
def test_a_destination_only_the_install_computes_is_caught_by_the_manifest(hostile, python, tmp_path):
    """No static look sees where `DESTINATION "\\${var}"` goes; the manifest does, after the
    fact, and every rerun says so again until the rule is fixed."""
    canary = hostile.parent / "canary-computed"
    env = hermetic(tmp_path, HOSTILE_RULE="computed")
    for _ in range(2):
        result = develop(python, hostile, env)
        output = result.stdout + result.stderr
        assert result.returncode != 0 and "Traceback" not in output, output
        message = squashed(unboxed(output))
        assert squashed("outside the install prefix") in message and squashed(str(canary / "notes.txt")) in message
    (canary / "notes.txt").unlink()
    canary.rmdir()


@pytest.mark.slow
def test_pip_wheel_refuses_a_prefix_made_absolute_and_writes_nothing_into_the_project(hostile, tmp_path):
    dist = tmp_path / "dist"
    result = run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", dist, hostile],
                 env=hermetic(tmp_path, HOSTILE_RULE="prefix-docs", PIP_NO_INDEX="1"), check=False, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    message = squashed(unboxed(output))
    assert "hostile_install/docsisabsolute" in message and squashed("use `DESTINATION docs`") in message, output
    assert not (hostile / "hostile_install" / "docs").exists()
    assert not dist.exists() or not list(dist.glob("*.whl"))


@pytest.mark.slow
@pytest.mark.parametrize(("where", "named"), [
    ("cmake-defines", "CMAKE_INSTALL_PREFIX:PATH is set in [tool.buildkit] cmake-defines"),
    ("environment", "CMAKE_INSTALL_PREFIX:PATH is set in the environment"),
    ("CMAKE_ARGS", "-D CMAKE_INSTALL_PREFIX={canary} is set in CMAKE_ARGS"),
])
def test_an_install_prefix_of_ones_own_stops_before_configure(test_package, python, tmp_path, where, named):
    project = test_package("hostile_install", tmp_path / "project" / "hostile_install")
    canary = tmp_path / "canary"
    canary.mkdir()
    env = hermetic(tmp_path, HOSTILE_RULE="prefix-docs")
    if where == "cmake-defines":
        add_settings(project, f'cmake-defines = {{ "CMAKE_INSTALL_PREFIX:PATH" = "{canary}" }}')
    elif where == "environment":
        env["CMAKE_INSTALL_PREFIX:PATH"] = str(canary)
    else:
        env["CMAKE_ARGS"] = f"-G Ninja -D CMAKE_INSTALL_PREFIX={canary}"
    result = develop(python, project, env)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in output, output
    message = squashed(unboxed(output))
    assert squashed(named.replace("{canary}", str(canary))) in message
    assert squashed("buildkit sets the install prefix") in message
    assert list(canary.iterdir()) == [] and not (project / "build").exists()
