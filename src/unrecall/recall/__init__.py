"""Recall plane: text normalisation, lexical terms, embeddings, hybrid search."""
