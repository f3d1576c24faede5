"""Checks on text before it is written: personal data (pii)."""
