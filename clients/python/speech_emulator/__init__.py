"""speech-emulator for Python: a control-plane client and a pytest fixture, standard library only."""

from .client import ControlClient, ControlClientError, ControlError, Reply, SpokenAudio, VerificationError
from .runner import Emulator, connect, from_environment, local_command, start

__all__ = ["ControlClient", "ControlClientError", "ControlError", "Reply", "SpokenAudio", "VerificationError", "Emulator", "connect", "from_environment", "local_command", "start"]
__version__ = "0.1.0"
