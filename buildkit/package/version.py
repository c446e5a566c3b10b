"""The project's version, and the ``version.py`` module generated into its package.

Sources, first that applies wins:

1. an explicit release version (``BUILDKIT_RELEASE_VERSION``, passed in by the
   options module) plus ``.post<N>`` when the build number N is above 1, as release
   pipelines rebuild the same version;
2. ``PKG-INFO`` in the project root: an sdist has no ``.git``, so it carries the
   version it was made with, and building from it reproduces that version;
3. ``version.txt`` in the project root, with ``+git<sha7>`` appended inside a git
   checkout: a local version, for development builds only (the package index refuses
   it, and :func:`check_publishable` stops ``buildkit wheels`` from making one).

CMake gets the public version (no local label) and its release parts from
:func:`cmake_version_defines`.  Nothing here reads the environment.
"""

from __future__ import annotations

import ast
import keyword
import string
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from buildkit._util.resources import templates_dir
from buildkit.config.release import RELEASE_VERSION_VARIABLE
from buildkit.errors import BuildkitError, ConfigError
from buildkit.package.generated import is_generated_file, with_marker, write_generated_file

VERSION_FILE = "version.txt"
VERSION_MODULE = "version.py"
# How to keep a hand-written version module: the hint of the error that refuses to overwrite it.
VERSION_MODULE_ELSEWHERE = ("set `[tool.buildkit] version-module` to another file in the package "
                            "(e.g. \"_version.py\"), or to \"\" for no generated version module")
SDIST_METADATA = "PKG-INFO"
TEMPLATE_NAME = "version.py.in"
_RESERVED_FIELDS = {"__version__", "__all__", "git_version", "Optional"}


@dataclass(frozen=True)
class ResolvedVersion:
    version: str
    git_sha: str | None
    source: str


def git_sha(project_root: Path, git: str = "git") -> str | None:
    """The full commit hash of HEAD, or None outside a checkout or without git."""
    try:
        done = subprocess.run([git, "rev-parse", "--verify", "--quiet", "HEAD"], cwd=project_root,
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and sha else None


def _checked(version: str, where: str) -> str:
    try:
        Version(version)
    except InvalidVersion:
        raise ConfigError(f"The version {version!r} from {where} is not a valid PEP 440 version.",
                          f"Fix {where} so it holds a version such as '1.2.0' or '1.2.0a0'.") from None
    return version


def _with_post_release(version: str, build_number: int | None, where: str) -> str:
    if build_number is not None and build_number < 0:
        raise ConfigError(f"The build number {build_number} for {where} is negative.",
                          "Use 1 for the first build of a version and count up for rebuilds.")
    if build_number is None or build_number <= 1:
        return version
    if Version(version).is_postrelease:
        raise ConfigError(f"{where} is {version!r}, already a post-release, so build number {build_number} "
                          "cannot add another .post segment.",
                          f"Drop the .post part from {where} or leave the build number at 1.")
    # The post-release segment belongs before a local label: 2.1.0.post2+cu121.
    public, plus, local = version.partition("+")
    return f"{public}.post{build_number}{plus}{local}"


def _with_git_label(version: str, sha: str | None) -> str:
    if not sha:
        return version
    # A version may already carry a local label (1.0+cu121); local segments join with '.'.
    return f"{version}{'.' if '+' in version else '+'}git{sha[:7]}"


def _sdist_version(path: Path) -> str:
    from email.parser import HeaderParser  # only sdists have a PKG-INFO: keep it off the no-op path

    headers = HeaderParser().parsestr(path.read_text(encoding="utf-8", errors="replace"))
    version = (headers.get("Version") or "").strip()
    if not version:
        raise ConfigError(f"{path} has no Version header.",
                          "Rebuild the sdist, or delete that stray PKG-INFO so version.txt is used.")
    return version


# A version file holds one version: reading more than this means it is some other file.
_VERSION_FILE_LIMIT = 1024


def _read_version_txt(path: Path, build_version_var: str) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_VERSION_FILE_LIMIT + 1)
    except FileNotFoundError:
        raise ConfigError(f"Cannot determine the project version: {path} does not exist and no build "
                          "version was given.",
                          f"Create {path.name} in the project root holding the version (e.g. 1.0.0a0), "
                          f"or set {build_version_var}.") from None
    except OSError as error:  # a folder, unreadable
        raise ConfigError(f"Cannot read the project version from {path}: {error.strerror}.",
                          f"{path.name} must be a file holding the version (e.g. 1.0.0a0); point "
                          f"[tool.buildkit] version-file at one, or set {build_version_var}.") from None
    if len(data) > _VERSION_FILE_LIMIT:
        raise ConfigError(f"{path} is over {_VERSION_FILE_LIMIT} bytes long: it is no version file.",
                          f"A version file holds one version (e.g. 1.0.0a0); point [tool.buildkit] version-file "
                          f"at one, or set {build_version_var}.")
    try:
        version = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text.", "Write the version into it, e.g. 1.0.0a0.") from None
    if not version:
        raise ConfigError(f"{path} is empty.", "Write the version into it, e.g. 1.0.0a0.")
    return version


def resolve_version(project_root: Path, *, build_version: str | None = None,
                    build_number: int | None = None, build_version_var: str = RELEASE_VERSION_VARIABLE,
                    version_file: str = VERSION_FILE, git: str = "git", git_label: bool = True) -> ResolvedVersion:
    """Resolve the version; ``build_version_var`` names the variable in error messages,
    ``version_file`` is relative to ``project_root``; without ``git_label`` (an sdist) a
    git checkout's version keeps no ``+git<sha>``."""
    root = Path(project_root)
    if build_version is not None and build_version.strip():
        version = _checked(build_version.strip(), build_version_var)
        version = _checked(_with_post_release(version, build_number, build_version_var), build_version_var)
        return ResolvedVersion(version, git_sha(root, git), build_version_var)
    pkg_info = root / SDIST_METADATA
    if pkg_info.is_file():
        return ResolvedVersion(_checked(_sdist_version(pkg_info), str(pkg_info)), None, SDIST_METADATA)
    version_txt = root / version_file
    base = _checked(_read_version_txt(version_txt, build_version_var), str(version_txt))
    sha = git_sha(root, git)
    labelled = _with_git_label(base, sha) if git_label else base
    return ResolvedVersion(_checked(labelled, str(version_txt)), sha, version_file)


# --- version.py --------------------------------------------------------------------

def _default_template() -> str:
    return (templates_dir() / TEMPLATE_NAME).read_text(encoding="utf-8")


def _literal(name: str, value: Any) -> str:
    text = repr(value)
    try:
        same = ast.literal_eval(text) == value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        same = False
    if not same:
        raise ConfigError(f"The version.py field {name!r} has the value {value!r}, which cannot be "
                          "written as a Python literal.",
                          "Pass a str, int, float, bool, None, or a list/tuple/dict of those.")
    return text


def _check_field_name(name: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name) or name in _RESERVED_FIELDS:
        raise ConfigError(f"{name!r} cannot be a field of the generated version.py.",
                          "Use a plain identifier that is not a keyword, __version__ or git_version.")


def render_version_file(resolved: ResolvedVersion, extra: Mapping[str, Any] | None = None,
                        template: str | None = None) -> str:
    """The text of ``version.py``. Placeholders: ``$version``, ``$git_version``,
    ``$extra_fields``, ``$all_names`` and ``$<name>`` for each extra field."""
    extra = dict(extra or {})
    for name in extra:
        _check_field_name(name)
    values = {name: _literal(name, value) for name, value in extra.items()}
    fields = "".join(f"{name} = {text}\n" for name, text in values.items())
    mapping = {**values, "version": repr(resolved.version), "git_version": repr(resolved.git_sha),
               "extra_fields": fields, "all_names": repr(["__version__", "git_version", *extra])}
    try:
        text = string.Template(template if template is not None else _default_template()).substitute(mapping)
    except KeyError as error:
        raise ConfigError(f"The version.py template uses the placeholder ${error.args[0]}, which has no "
                          "value.",
                          "Pass that field in `extra`, or remove it from the template.") from None
    except ValueError as error:
        raise ConfigError(f"The version.py template is malformed: {error}.",
                          "Write a literal '$' as '$$' in the template.") from None
    # An empty $extra_fields must not leave blank lines behind; a custom template without
    # the marker gets it, or the next build would take its own file for a user's.
    return with_marker(text.rstrip("\n") + "\n", "a custom version.py template")


def write_version_file(package_dir: Path, resolved: ResolvedVersion, extra: Mapping[str, Any] | None = None,
                       template: Path | None = None, *, name: str = VERSION_MODULE) -> bool:
    """Write ``<package_dir>/<name>``; True when it changed.

    Leaving an unchanged file alone keeps its mtime, so incremental builds and
    editable installs don't see a spurious change on every run.  A file there that
    buildkit did not write is never overwritten (see :mod:`buildkit.package.generated`).
    """
    text = render_version_file(resolved, extra,
                               None if template is None else Path(template).read_text(encoding="utf-8"))
    return write_generated_file(Path(package_dir) / name, text, elsewhere=VERSION_MODULE_ELSEWHERE)


def is_generated_version_file(path: Path) -> bool:
    """Whether ``path`` carries buildkit's marker line, i.e. a build wrote it."""
    return is_generated_file(path)


# --- what CMake and the publishing checks get --------------------------------------

def cmake_version_defines(version: str) -> dict[str, str]:
    """``BUILDKIT_PROJECT_VERSION`` (the public version: no ``+git<sha>``, so a new commit
    does not reconfigure) and its first three release parts, 0 where the version has fewer."""
    parsed = Version(version)
    major, minor, patch = (*parsed.release, 0, 0)[:3]
    return {"BUILDKIT_PROJECT_VERSION": parsed.public, "BUILDKIT_PROJECT_VERSION_MAJOR": str(major),
            "BUILDKIT_PROJECT_VERSION_MINOR": str(minor), "BUILDKIT_PROJECT_VERSION_PATCH": str(patch)}


def check_publishable(resolved: ResolvedVersion, *, release_variable: str = RELEASE_VERSION_VARIABLE,
                      allow_flag: str = "--allow-local-version") -> None:
    """Refuse a local version (``1.0+git<sha>``): the package index rejects it at upload."""
    version = Version(resolved.version)
    if version.local is None:
        return
    raise BuildkitError(
        f"The version is {resolved.version} (from {resolved.source}), a local version: its '+{version.local}' "
        "label marks a development build, and the package index refuses local versions at upload.",
        f"Set {release_variable}={version.public} to build the release, or pass {allow_flag} if these "
        "wheels are only for local use.")
