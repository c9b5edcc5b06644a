"""Earlier versions of rewritten functions, for equivalence tests."""
