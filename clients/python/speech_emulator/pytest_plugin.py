"""pytest fixtures: ``speech_emulator`` (one emulator for the session) and ``emulator`` (the same, reset before each test).

Registered by the package's ``pytest11`` entry point once installed; in a checkout, name it in a
conftest.py: ``pytest_plugins = ["speech_emulator.pytest_plugin"]``. Where the emulator comes from is
read from the environment (see runner.from_environment). A folder of tapes to replay for the whole run:
``--speech-emulator-replay DIR`` (``--speech-emulator-replay-strict``), or the ini options of the same names
with underscores, or SPEECH_EMULATOR_REPLAY (SPEECH_EMULATOR_REPLAY_STRICT=1).
"""

from __future__ import annotations

import os
import secrets
from typing import Iterator, Optional

import pytest

from .runner import Emulator, from_environment


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("speech_emulator")
    group.addoption("--speech-emulator-replay", dest="speech_emulator_replay", default=None, metavar="DIR", help="replay this folder of tapes (--replay)")
    group.addoption(
        "--speech-emulator-replay-strict",
        dest="speech_emulator_replay_strict",
        action="store_true",
        default=None,
        help="refuse a request no tape matches (--replay-strict)",
    )
    parser.addini("speech_emulator_replay", "folder of tapes the emulator replays (--replay)", default=None)
    parser.addini("speech_emulator_replay_strict", "refuse a request no tape matches (--replay-strict)", type="bool", default=False)


def _replay_of(config: pytest.Config) -> Optional[str]:
    return config.getoption("speech_emulator_replay") or config.getini("speech_emulator_replay") or os.environ.get("SPEECH_EMULATOR_REPLAY") or None


def _strict_of(config: pytest.Config) -> bool:
    if config.getoption("speech_emulator_replay_strict"):
        return True
    env = os.environ.get("SPEECH_EMULATOR_REPLAY_STRICT", "").strip().lower()
    return bool(config.getini("speech_emulator_replay_strict")) or env in ("1", "true", "yes", "on")


@pytest.fixture(scope="session")
def speech_emulator(pytestconfig: pytest.Config) -> Iterator[Emulator]:
    """One emulator for the whole session: its three base URLs and ``control``, a ControlClient."""
    # A started emulator gets a token of its own, so its control plane is guarded as in CI.
    emulator = from_environment(token=secrets.token_hex(12), replay=_replay_of(pytestconfig), replay_strict=_strict_of(pytestconfig))
    try:
        yield emulator
    finally:
        emulator.close()


@pytest.fixture
def emulator(speech_emulator: Emulator) -> Iterator[Emulator]:
    """The session's emulator, reset first (resources, sessions, faults, journal), its clock running, and the run's
    tapes in effect again if a test before replayed others (``control.tapes_replay``) or stopped them."""
    speech_emulator.control.reset()
    speech_emulator.control.clock.unfreeze()
    if speech_emulator.replay is not None or speech_emulator.control.tapes_touched:
        speech_emulator.restore_tapes()
    yield speech_emulator
