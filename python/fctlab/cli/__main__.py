"""``python -m fctlab.cli``: the ``fctlab`` command."""

from fctlab.cli import main

main()
