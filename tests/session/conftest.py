"""Fixtures of the session tests; the helpers live in ``session_support`` (a module
name of its own: ``from conftest import ...`` would find another folder's conftest
when several test folders are collected in one run)."""

from session_support import pool_files  # noqa: F401  (a fixture)
from tests.lmeval_harness import lmeval_files  # noqa: F401  (a fixture)
