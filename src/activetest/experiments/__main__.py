"""``python -m activetest.experiments``."""

from activetest.experiments.reproduce import main

main()
