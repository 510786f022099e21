"""``python -m daxpy.cli``: the ``daxpy`` command."""

import sys

from .commands import main

if __name__ == "__main__":
    sys.exit(main())
