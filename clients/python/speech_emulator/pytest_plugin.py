"""pytest fixtures: ``speech_emulator`` (one emulator for the session) and ``emulator`` (the same, reset before each test).

Registered by the package's ``pytest11`` entry point once installed; in a checkout, name it in a
conftest.py: ``pytest_plugins = ["speech_emulator.pytest_plugin"]``. Where the emulator comes from is
read from the environment (see runner.from_environment).
"""

from __future__ import annotations

import secrets
from typing import Iterator

import pytest

from .runner import Emulator, from_environment


@pytest.fixture(scope="session")
def speech_emulator() -> Iterator[Emulator]:
    """One emulator for the whole session: its three base URLs and ``control``, a ControlClient."""
    # A started emulator gets a token of its own, so its control plane is guarded as in CI.
    emulator = from_environment(token=secrets.token_hex(12))
    try:
        yield emulator
    finally:
        emulator.close()


@pytest.fixture
def emulator(speech_emulator: Emulator) -> Iterator[Emulator]:
    """The session's emulator, reset first (resources, sessions, faults, journal), its clock running."""
    speech_emulator.control.reset()
    speech_emulator.control.clock.unfreeze()
    yield speech_emulator
