"""``python -m agentkit_core``: the ``agentkit`` command line, when the script is not on PATH."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
