"""Fidelity cases: dlq. See fidelity.py for the conventions."""

from fidelity import *  # noqa: F401,F403
