"""Adapters that plug unrecall into agent frameworks.

Each module imports its framework on import (``unrecall.integrations.langgraph``
needs ``langgraph``); this package imports none of them, so ``import unrecall``
never pulls a framework in.
"""
