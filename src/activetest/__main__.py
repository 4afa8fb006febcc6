"""``python -m activetest``: the command line (see :mod:`activetest.cli`).

A scoring command runs in a supervised child (:mod:`activetest.supervise`), itself
``python -m activetest``; the parent only waits for it, so it starts the child before
importing the command line's modules (typer, rich), which only the child needs.
"""

import sys


def main() -> None:
    """Run the command line, or supervise a child that runs it."""
    from activetest import supervise

    args = sys.argv[1:]
    if supervise.wants_supervisor(args):
        sys.exit(supervise.run_supervised(args))
    from activetest.cli import main as cli_main

    cli_main(args)


if __name__ == "__main__":
    main()
