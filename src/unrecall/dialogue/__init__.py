"""Deterministic reading of user turns: forget and correction requests (no LLM)."""
