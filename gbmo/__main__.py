"""``python -m gbmo``: the ``gbmo`` command line, as the console script runs it."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
