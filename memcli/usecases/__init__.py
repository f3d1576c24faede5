"""Use cases over a memory root (reflection, the review inbox, rename, outcomes): each takes the root's
``Memory`` and configuration and returns plain values."""
