"""CUDA architecture lists: PyTorch's form in, ``CMAKE_CUDA_ARCHITECTURES`` out.

Users write ``TORCH_CUDA_ARCH_LIST``-style lists (``7.5;8.0;9.0+PTX``, ``8.6 9.0``,
``Ampere``) or CMake's own (``75-real;80-real;90``, ``all``).  PyTorch-style entries
get real code (SASS) each, and the newest one also gets PTX so the wheel still runs,
JIT-compiled, on GPUs newer than the toolkit knows; ``+PTX`` adds PTX to another one.
CMake-style entries keep exactly their CMake meaning.

``TORCH_CUDA_ARCH_LIST`` itself (``pytorch_exact``) keeps PyTorch's meaning instead:
``8.0`` is sm_80 only, PTX comes only with ``+PTX`` or with a family name (PyTorch's
``Ampere`` is ``8.0;8.6+PTX``), and architectures below the build's toolkit are left
for nvcc to refuse, as PyTorch does: the variable is machine-wide, often set for an
older toolkit, and read by projects that compile no CUDA at all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from buildkit.config.options import BuildOptions
from buildkit.errors import ConfigError

DEFAULT_ARCH_LIST = "7.5;8.0;9.0"
# The oldest architecture CUDA 13 compiles for; older toolkits pass their own.
CUDA13_MINIMUM_ARCH = 75
# The oldest architecture PyTorch's own list knows (Kepler): the floor for TORCH_CUDA_ARCH_LIST.
PYTORCH_MINIMUM_ARCH = 35
# Who sets a floor, for the "too old" error.
_FLOOR_OWNERS = {CUDA13_MINIMUM_ARCH: "CUDA 13 compiles for", PYTORCH_MINIMUM_ARCH: "PyTorch builds for"}
SPECIAL_VALUES = ("all", "all-major", "native")
# PyTorch's names (torch.utils.cpp_extension), the pre-Turing ones only to give the
# "too old" error instead of "unknown word".
NAMED_ARCHES = {
    "kepler": "3.5", "maxwell": "5.0;5.2", "pascal": "6.0;6.1", "volta": "7.0", "turing": "7.5",
    "ampere": "8.0;8.6", "ada": "8.9", "hopper": "9.0", "blackwell": "10.0;12.0",
}
_PYTORCH_FORM = re.compile(r"^(\d{1,2})\.(\d)([af]?)(\+ptx)?$", re.I)
_CMAKE_FORM = re.compile(r"^(\d{2,3})([af]?)(?:-(real|virtual))?$", re.I)


@dataclass
class _Arch:
    number: int  # 75, 90, 100
    suffix: str  # "", "a" (sm_90a) or "f"
    real: bool
    ptx: bool
    cmake_form: bool  # written CMake-style: its meaning is exact, no PTX is added

    @property
    def name(self) -> str:
        return f"{self.number}{self.suffix}"

    def render(self) -> str:
        return self.name + ("" if self.real and self.ptx else "-real" if self.real else "-virtual")


def normalize_cuda_architectures(value: str | None, *, gpu_present: bool | None = None,
                                 variable: str = "CUDA_ARCH_LIST", default: str = DEFAULT_ARCH_LIST,
                                 minimum: int = CUDA13_MINIMUM_ARCH, pytorch_exact: bool = False) -> str:
    """The ``CMAKE_CUDA_ARCHITECTURES`` value for a PyTorch- or CMake-style list.

    ``7.5;8.0;9.0`` becomes ``75-real;80-real;90`` (CMake's ``90`` is real code plus
    PTX); with ``pytorch_exact`` (``TORCH_CUDA_ARCH_LIST``) it becomes
    ``75-real;80-real;90-real``.  Raises ConfigError naming ``variable`` for unknown
    words, architectures below ``minimum`` and ``native`` without a GPU
    (``gpu_present=None`` asks nvidia-smi).
    """
    text = (value or "").strip()
    if not text:
        return normalize_cuda_architectures(default, gpu_present=gpu_present, variable=f"{variable} (project default)",
                                            default="", minimum=minimum) if default else ""
    tokens = [t for t in re.split(r"[;,\s]+", text) if t]
    special = [t.lower() for t in tokens if t.lower() in SPECIAL_VALUES]
    if special:
        return _special(special[0], tokens, value, variable, gpu_present)
    arches: dict[str, _Arch] = {}
    for token in _expand_names(tokens, family_ptx=pytorch_exact):
        arch = _parse_token(token, value, variable, PYTORCH_MINIMUM_ARCH if pytorch_exact else minimum)
        seen = arches.setdefault(arch.name, arch)
        if seen is not arch:  # listed twice: keep everything asked for
            seen.real, seen.ptx = seen.real or arch.real, seen.ptx or arch.ptx
            seen.cmake_form = seen.cmake_form or arch.cmake_form
    ordered = sorted(arches.values(), key=lambda a: (a.number, a.suffix))
    newest = ordered[-1]
    if not newest.cmake_form and not pytorch_exact:
        newest.ptx = True
    return ";".join(arch.render() for arch in ordered)


def _special(word: str, tokens: list[str], value: str | None, variable: str, gpu_present: bool | None) -> str:
    if len(tokens) > 1:
        raise ConfigError(f"{variable}={value!r} mixes `{word}` with other architectures.",
                          f"Use `{word}` on its own, or list the architectures, e.g. {variable}='7.5;8.0;9.0'.")
    if word == "native" and not (gpu_detected() if gpu_present is None else gpu_present):
        raise ConfigError(f"{variable}=native asks for the GPUs of this machine, but it has none.",
                          f"List the architectures to build for instead, e.g. {variable}='7.5;8.0;9.0' "
                          f"(7.5 Turing, 8.0/8.6 Ampere, 8.9 Ada, 9.0 Hopper).")
    return word


def _expand_names(tokens: list[str], *, family_ptx: bool) -> list[str]:
    """Family names replaced by their members; ``family_ptx``: PyTorch's table, where the
    newest member of a family always carries PTX."""
    expanded: list[str] = []
    for token in tokens:
        base, plus, _ = token.lower().partition("+")
        if base in NAMED_ARCHES:
            # "Ampere+PTX" puts PTX on the newest member of the family.
            members = NAMED_ARCHES[base].split(";")
            expanded += [*members[:-1], members[-1] + ("+PTX" if plus or family_ptx else "")]
        else:
            expanded.append(token)
    return expanded


def _parse_token(token: str, value: str | None, variable: str, minimum: int) -> _Arch:
    pytorch, cmake = _PYTORCH_FORM.match(token), _CMAKE_FORM.match(token)
    if pytorch:
        arch = _Arch(int(pytorch[1]) * 10 + int(pytorch[2]), pytorch[3].lower(), True, bool(pytorch[4]), False)
    elif cmake:
        kind = (cmake[3] or "").lower()
        arch = _Arch(int(cmake[1]), cmake[2].lower(), kind != "virtual", kind != "real", True)
    else:
        names = ", ".join(name.capitalize() for name in NAMED_ARCHES)
        raise ConfigError(
            f"{variable}={value!r}: `{token}` is not a CUDA architecture.",
            f"Write architectures as compute capabilities separated by `;` or spaces: PyTorch style "
            f"`7.5;8.0;9.0+PTX`, CMake style `75-real;80-real;90`, a name ({names}), or one of "
            f"{', '.join(SPECIAL_VALUES)}.")
    if arch.number < minimum:
        raise ConfigError(
            f"{variable}={value!r} asks for sm_{arch.number} (`{token}`), but "
            f"{_FLOOR_OWNERS.get(minimum, 'this CUDA toolkit compiles for')} "
            f"sm_{minimum} ({minimum // 10}.{minimum % 10}) and newer only.",
            f"Remove the older architectures from {variable}, e.g. {variable}='7.5;8.0;9.0', "
            "or build with an older CUDA toolkit that still supports them.")
    return arch


def minimum_arch_for_cuda(cuda_version: str | None) -> int:
    """The oldest sm_XX a CUDA toolkit version compiles for (CUDA 13 dropped Maxwell to Volta)."""
    major = int(cuda_version.split(".")[0]) if cuda_version and cuda_version.split(".")[0].isdigit() else 13
    return 75 if major >= 13 else 50 if major == 12 else 35


def gpu_detected() -> bool:
    """Whether nvidia-smi lists a GPU; no driver or no nvidia-smi means no."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and "GPU " in proc.stdout


def architecture_numbers(normalized: str) -> list[str]:
    """The sm_XX names ("75", "90a") in a normalized value; empty for all/all-major/native."""
    return [part.split("-")[0] for part in normalized.split(";") if part and part not in SPECIAL_VALUES]


def gpu_architectures(visible: str | None = None) -> list[str]:
    """The sm_XX of each GPU this machine shows CUDA (``nvidia-smi``'s compute capabilities;
    ``visible``: CUDA_VISIBLE_DEVICES, when it lists device indices), oldest first; empty
    without a GPU or a driver."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        proc = subprocess.run([smi, "--query-gpu=index,compute_cap", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    wanted = {v.strip() for v in visible.split(",")} if visible and all(
        v.strip().isdigit() for v in visible.split(",")) else None
    found = set()
    for line in proc.stdout.splitlines() if proc.returncode == 0 else ():
        index, _, capability = (part.strip() for part in line.partition(","))
        major, _, minor = capability.partition(".")
        if major.isdigit() and minor.isdigit() and (wanted is None or index in wanted):
            found.add(int(major) * 10 + int(minor))
    return [str(number) for number in sorted(found)]


def develop_architecture(wheel_value: str, gpus: list[str]) -> tuple[str, str]:
    """The one architecture a develop build compiles of the wheel's normalized list, and
    why: the newest GPU of this machine, else the newest entry of the list; real code
    only (no PTX: a develop build runs on the GPU it was built for, and PTX costs a
    second device compile).  A special value (``all``, ``native``) is kept whole."""
    if wheel_value in SPECIAL_VALUES:
        return wheel_value, f"the list is `{wheel_value}`"
    if gpus:
        return f"{gpus[-1]}-real", f"the GPU of this machine, sm_{gpus[-1]}"
    newest = wheel_value.rsplit(";", maxsplit=1)[-1].split("-", maxsplit=1)[0]
    return f"{newest}-real", "the newest of the wheel's list; no GPU here"


def architectures_for_build(options: BuildOptions, *, develop: bool) -> tuple[str | None, str]:
    """CMAKE_CUDA_ARCHITECTURES for a build (None: the project's own choice) and, for a
    develop build that compiles one architecture of the wheel's list, the sentence that
    says so.  A list asked for by a variable is built whole; ``develop-cuda-arch-list``
    picks what a develop build compiles of ``[tool.buildkit]``'s list."""
    request = options.cuda_architecture_request()
    if request is None:
        return None, ""
    wheel = normalize_cuda_architectures(request.value, variable=request.variable,
                                         pytorch_exact=request.pytorch_exact)
    develop_list, variable = options.develop_cuda_arch_list, options.variable_names["develop_cuda_arch_list"]
    if not develop or request.from_variable or develop_list == "wheel":
        return wheel, ""
    if develop_list != "one":
        return normalize_cuda_architectures(develop_list, variable=variable), ""
    one, why = develop_architecture(wheel, gpu_architectures(os.environ.get("CUDA_VISIBLE_DEVICES")))
    return one, (f"CUDA: this develop build compiles {one} only ({why}); a wheel builds {wheel}. "
                 f"{variable}=wheel builds the whole list in develop builds too.")
