"""Control plane: targeting, the forgetting operations, audit and erasure proofs."""
