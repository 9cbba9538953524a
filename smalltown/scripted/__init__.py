"""The no-model stand-in: answers every task from its typed inputs, deterministically.

Each module of the package registers its answers as it is imported (scripted/registry.py): the
package imports them all, so a new module's answers are found without a list to keep."""

import importlib
import pkgutil

from smalltown.scripted.backend import ScriptedBackend

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["ScriptedBackend"]
