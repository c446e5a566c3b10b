"""Starting a build tool with its output on one pipe, without importing subprocess.

The no-op ``buildkit develop`` starts ninja before anything else of buildkit is
imported, so that ninja's own no-op (its CMake glob check included) runs on one
core while the install step's modules load and check on the other.  ``subprocess``
costs ~8 ms to import (``signal``, ``selectors``, ``threading``; measured with
``-X importtime``), about as much as the rest of that first stage together; where
``os.posix_spawnp`` exists the child is started with it.  :class:`SpawnedProcess`
is the part of :class:`subprocess.Popen`'s interface that
:func:`buildkit.builder.build_output.run_step` uses.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's own import costs ~8 ms (measured): not at run time
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterator, Mapping, Sequence
    from signal import SIGPIPE, SIGTERM  # the same numbers, as typeshed knows them (it has no _signal)
    from typing import Protocol

    class Output(Protocol):
        """What is read of a child's output: its lines, then ``close()``."""

        def __iter__(self) -> Iterator[bytes]: ...

        def close(self) -> None: ...
else:
    # Python ignores SIGPIPE for itself; a child gets the default back, as subprocess.Popen's
    # restore_signals does.  `_signal` is what the signal module wraps (loaded at start-up).
    from _signal import SIGPIPE, SIGTERM


class SpawnedProcess:
    """A child with stdin from /dev/null and stdout and stderr on one pipe (``stdout``)."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None = None):
        read_end, write_end = os.pipe()  # both close-on-exec; the child's 1 and 2 are dups
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_DUP2, write_end, 1), (os.POSIX_SPAWN_DUP2, write_end, 2)]
        try:
            self.pid = os.posix_spawnp(command[0], list(command), dict(os.environ if env is None else env),
                                       file_actions=actions, setsigdef=(SIGPIPE,))
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        self.stdout: Output = os.fdopen(read_end, "rb")
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._done(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            self._done(os.waitpid(self.pid, 0)[1])
        assert self.returncode is not None
        return self.returncode

    def terminate(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, SIGTERM)

    def _done(self, status: int) -> None:
        self.returncode = os.waitstatus_to_exitcode(status)  # its output may still be read, as Popen's


class _Replayed:
    """Output lines already read, then the rest of the stream."""

    def __init__(self, lines: list[bytes], stream: Output):
        self.lines, self.stream = lines, stream

    def __iter__(self) -> Iterator[bytes]:
        yield from self.lines
        yield from self.stream

    def close(self) -> None:
        self.stream.close()


if TYPE_CHECKING:
    Process = SpawnedProcess | subprocess.Popen[bytes]  # what start() gives


def unread(process: Process, lines: list[bytes]) -> None:
    """Give ``lines``, read from ``process.stdout`` already, back to whoever reads it next."""
    stream = process.stdout
    assert stream is not None, "start() gives every child an output pipe"
    process.stdout = _Replayed(lines, stream)


def start(command: Sequence[str], env: Mapping[str, str] | None = None) -> Process:
    """``command`` running, its output (stderr joined to stdout) readable from ``.stdout``."""
    if hasattr(os, "posix_spawnp"):
        return SpawnedProcess(command, env)
    # Start-up cost: only where posix_spawn is missing (Windows) is subprocess imported here.
    import subprocess

    return subprocess.Popen(list(command), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
