"""Adapters and harnesses that measure unrecall against published protocols."""
