"""Shared by the shardc Python tests: where the repository's files are."""
import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def examples():
    return os.path.join(ROOT, "examples")
