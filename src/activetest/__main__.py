"""``python -m activetest``: the command line (see :mod:`activetest.cli`)."""

from activetest.cli import main

if __name__ == "__main__":
    main()
