"""Fidelity cases: message-level actions of standard queues. See fidelity.py for the conventions."""

from fidelity import *  # noqa: F401,F403
