"""Getting an emulator for a test run: one already running (by URL), or one started from a command.

``start()`` runs the CLI on free ports and reads its URLs from the banner it prints once it listens;
``connect()`` reads them from a running emulator's health answer (which names them to a caller with
the control token). Both give an Emulator: the three base URLs and a ControlClient. With ``replay=``, the
emulator answers from that folder of tapes: a started one gets ``--replay`` (and ``--replay-strict``), a running
one is told over its control plane.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence

from .client import ControlClient

FREE_PORTS = ["--speech-port", "0", "--speech-backup-port", "0", "--platform-port", "0"]


@dataclass
class Emulator:
    speech_url: str
    speech_backup_url: str
    platform_url: str
    control: ControlClient
    #: The process when this emulator was started here (None for one reached by URL).
    process: Optional[subprocess.Popen] = field(default=None, repr=False)
    #: What the process printed (banner, warnings), for a failing test's report.
    output: List[str] = field(default_factory=list, repr=False)
    #: The folder of tapes the emulator replays for the whole run (None: its own answers), and whether strictly.
    replay: Optional[str] = None
    replay_strict: bool = False
    replay_speed: Optional[float] = None

    def restore_tapes(self) -> None:
        """Puts the run's tapes back in effect (``replay``, or none) if a test loaded or unloaded others."""
        loaded = self.control.tapes_loaded()
        if loaded["mode"] not in (None, "replay"):
            return
        if self.replay is None:
            if loaded["mode"] == "replay":
                self.control.tapes_stop_replay()
        elif (loaded["mode"], loaded["dir"], loaded["strict"], loaded["speed"]) != ("replay", self.replay, self.replay_strict, 1 if self.replay_speed is None else self.replay_speed):
            self.control.tapes_replay(self.replay, strict=self.replay_strict, speed=self.replay_speed)

    def close(self, timeout: float = 10.0) -> Optional[int]:
        """Stops a started emulator and every process it started (SIGTERM to its process group, so an
        emulator run through ``npx`` or a shell stops too; SIGKILL after ``timeout``); answers the exit
        code of the command. Nothing for one reached by URL."""
        if self.process is None:
            return None
        _stop_group(self.process, timeout)
        return self.process.returncode


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _stop_group(process: subprocess.Popen, timeout: float, sig: int = signal.SIGTERM) -> None:
    """Signals the process group the command leads (its own session, see start), then waits for the
    whole group to be gone; what is left at the deadline is killed."""
    if not hasattr(os, "killpg"):
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        return
    pgid = process.pid
    if _group_alive(pgid):
        os.killpg(pgid, sig)
    deadline = time.monotonic() + timeout
    try:
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _group_alive(pgid):
        os.killpg(pgid, signal.SIGKILL)
    process.wait()


def connect(url: str, token: Optional[str] = None, timeout: float = 30.0, replay: Optional[str] = None, replay_strict: bool = False) -> Emulator:
    """An emulator already running at ``url`` (any listener), once it answers ready. ``replay``: a folder of tapes on
    its machine, replayed from then on (``replay_strict``: a request no tape matches is refused)."""
    control = ControlClient(url, token=token)
    control.wait_until_ready(timeout=timeout)
    services = control.health().get("services")
    if not services:
        raise RuntimeError(f"the emulator at {url} does not name its services: set its control token (SPEECH_EMULATOR_TOKEN)")
    emulator = Emulator(
        services["speech"],
        services["speech_backup"],
        services["platform"],
        ControlClient(services["speech"], token=token),
        replay=replay,
        replay_strict=replay_strict,
    )
    if replay is not None:
        emulator.control.tapes_replay(replay, strict=replay_strict)
    return emulator


def local_command(start: Optional[Path] = None) -> List[str]:
    """The command that runs speech-emulator from a checkout above ``start`` (its build, unless a source is newer: then
    the sources through tsx), or from an installed package."""
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        package = folder / "package.json"
        if package.is_file() and '"name": "speech-emulator"' in package.read_text(encoding="utf-8"):
            built = folder / "dist" / "main.js"
            if built.is_file() and not _newer_sources(folder):
                return [_node(), str(built)]
            if (folder / "src" / "main.ts").is_file():
                tsx = folder / "node_modules" / ".bin" / "tsx"
                return [str(tsx), str(folder / "src" / "main.ts")] if tsx.exists() else ["npx", "tsx", str(folder / "src" / "main.ts")]
        installed = folder / "node_modules" / ".bin" / "speech-emulator"
        if installed.exists():
            return [str(installed)]
    raise RuntimeError(
        f"no speech-emulator found from {here}: set SPEECH_EMULATOR_URL (a running one) or SPEECH_EMULATOR_COMMAND (how to start one)"
    )


def _newer_sources(folder: Path) -> bool:
    """True when a file under src/ changed after the last build (a stale dist/ is not run)."""
    cache = folder / "dist" / "emulator.cjs.cache"
    if not cache.is_file():
        return (folder / "src").is_dir()
    built = cache.stat().st_mtime
    for root, _dirs, files in os.walk(folder / "src"):
        if any(os.stat(os.path.join(root, f)).st_mtime > built for f in files):
            return True
    return False


def _node() -> str:
    return os.environ.get("SPEECH_EMULATOR_NODE") or shutil.which("node") or "node"


def start(
    command: Optional[Sequence[str]] = None,
    token: Optional[str] = None,
    timeout: float = 60.0,
    env: Optional[dict] = None,
    cwd: Optional[str] = None,
    replay: Optional[str] = None,
    replay_strict: bool = False,
    replay_speed: Optional[float] = None,
) -> Emulator:
    """Starts the emulator on free ports from ``command`` (default: local_command()) and waits for its banner.
    ``replay``, ``replay_strict``, ``replay_speed``: its ``--replay``, ``--replay-strict`` and ``--replay-speed`` (a
    damaged tape stops the start, and the error names it)."""
    args = list(command) if command else local_command()
    if replay is not None:
        args += ["--replay", str(replay)]
        if replay_strict:
            args.append("--replay-strict")
    if replay_speed is not None:
        args += ["--replay-speed", f"{replay_speed:g}"]
    child_env = {**os.environ, "EMULATOR_HOST": "127.0.0.1", **(env or {})}
    if token is not None:
        child_env["EMULATOR_CONTROL_TOKEN"] = token
    process = subprocess.Popen(
        [*args, *FREE_PORTS],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=child_env,
        cwd=cwd,
        text=True,
        # Its own process group: close() signals the emulator through any wrapper (npx, a shell) that would not pass SIGTERM on.
        start_new_session=hasattr(os, "killpg"),
    )
    output: List[str] = []
    urls: dict = {}
    banner_read = threading.Event()

    def read() -> None:
        # Reads every line, before and after the banner, so the process never blocks on a full pipe.
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line.rstrip("\n"))
            for name, label in (("speech", "speech synthesis"), ("speech_backup", "speech backup"), ("platform", "voice platform")):
                if line.strip().startswith(label):
                    urls[name] = line.split()[-1]
            if len(urls) == 3:
                banner_read.set()
        banner_read.set()

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout
    while not banner_read.wait(0.1):
        if time.monotonic() > deadline:
            _stop_group(process, 5.0, signal.SIGKILL)
            raise TimeoutError(f"speech-emulator did not start within {timeout} s ({shlex.join(args)}):\n" + "\n".join(output))
    if len(urls) != 3:
        _stop_group(process, 5.0)
        raise RuntimeError(f"speech-emulator exited {process.returncode} before it ran ({shlex.join(args)}):\n" + "\n".join(output))
    emulator = Emulator(
        urls["speech"],
        urls["speech_backup"],
        urls["platform"],
        ControlClient(urls["speech"], token=token),
        process,
        output,
        replay=None if replay is None else str(replay),
        replay_strict=replay is not None and replay_strict,
        replay_speed=replay_speed if replay is not None else None,
    )
    try:
        emulator.control.wait_until_ready(timeout=timeout)
    except BaseException:
        emulator.close()
        raise
    return emulator


def from_environment(token: Optional[str] = None, replay: Optional[str] = None, replay_strict: bool = False) -> Emulator:
    """What the pytest fixture uses: SPEECH_EMULATOR_URL, else SPEECH_EMULATOR_COMMAND, else a local checkout; with
    ``replay``, replaying that folder of tapes."""
    url = os.environ.get("SPEECH_EMULATOR_URL")
    if url:
        return connect(url, token=os.environ.get("SPEECH_EMULATOR_TOKEN", token), replay=replay, replay_strict=replay_strict)
    command = os.environ.get("SPEECH_EMULATOR_COMMAND")
    return start(shlex.split(command) if command else None, token=token, replay=replay, replay_strict=replay_strict)
