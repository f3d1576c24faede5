"""Hash constructors for the per-turn path, from CPython's own C modules: importing ``hashlib``
loads OpenSSL, milliseconds that a recall need not pay. The digests are the same as hashlib's."""

from __future__ import annotations


def constructor(name: str):
    """The constructor of ``name`` (sha1, sha256 or blake2b), falling back to hashlib's."""
    try:
        if name == "sha1":
            from _sha1 import sha1

            return sha1
        if name == "sha256":
            try:
                from _sha2 import sha256  # Python 3.12+
            except ImportError:
                from _sha256 import sha256  # Python 3.10, 3.11
            return sha256
        if name == "blake2b":
            from _blake2 import blake2b

            return blake2b
    except ImportError:
        pass
    import hashlib

    return getattr(hashlib, name)
