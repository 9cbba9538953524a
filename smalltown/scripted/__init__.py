"""The no-model stand-in: answers every task from its typed inputs, deterministically."""

from smalltown.scripted.backend import ScriptedBackend

__all__ = ["ScriptedBackend"]
