"""Use cases over a memory root: each takes the root's ``Memory`` and returns values."""
