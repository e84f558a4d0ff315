"""ragctl: ask questions about your own documents, offline, with cited answers."""

__version__ = "0.1.0"
