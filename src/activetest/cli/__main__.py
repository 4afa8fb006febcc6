"""``python -m activetest.cli``: the command line, as the console script runs it."""

from activetest.cli import main

if __name__ == "__main__":
    main()
