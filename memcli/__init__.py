"""memcli: a file-based Markdown memory for AI agents (``from memcli import Memory``)."""

__version__ = "0.1.0"
__all__ = ["Memory", "__version__"]


def __getattr__(name):
    if name == "Memory":
        from .core import Memory

        return Memory
    raise AttributeError(name)
