"""Fidelity cases: fifo. See fidelity.py for the conventions."""

from fidelity import *  # noqa: F401,F403
