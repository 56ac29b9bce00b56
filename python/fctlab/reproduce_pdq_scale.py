"""Moved to :mod:`fctlab.recipes.pdq.scale`; this name stays for one release. Importing it gives that module itself (not a copy),
so that setting one of its names here sets it for the recipe too."""

import sys
from importlib import import_module

sys.modules[__name__] = import_module("fctlab.recipes.pdq.scale")
