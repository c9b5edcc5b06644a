"""Interfaces over ``Memory``: the command line (and later HTTP, MCP, LangGraph)."""
