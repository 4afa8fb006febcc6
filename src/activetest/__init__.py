"""activetest: label-efficient evaluation of language models by active testing."""

__version__ = "0.1.0"
