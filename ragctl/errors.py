"""One error base for the library; the CLI turns these into one-line messages.

Exit codes (documented in the README):

- 0  success (something was indexed, or nothing needed to change)
- 1  an error (:class:`RagctlError`), for example a missing index or a model mismatch
- 2  a usage error (bad option, a path that does not exist)
- 3  ``ask`` found no answer in the documents (reserved for ``ask``)
- 4  ``index`` could read none of the files it was given
- 130 interrupted (Ctrl-C); whatever was committed before stays usable
"""

from __future__ import annotations

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_ALL_FAILED = 4
EXIT_INTERRUPTED = 130


class RagctlError(Exception):
    """Base of every error ragctl raises on purpose; the message says what to do next."""

    exit_code = EXIT_ERROR


class ConfigError(RagctlError):
    """The configuration file or an environment variable holds a bad value."""


class IndexNotFoundError(RagctlError):
    """The named index does not exist yet."""


class IndexLockedError(RagctlError):
    """Another ragctl process is writing to the same index."""


class DamagedIndexError(RagctlError):
    """The index's files are damaged; ``ragctl doctor`` says what can be repaired."""


class ReadOnlyIndexError(RagctlError):
    """The index cannot be written: its folder or database is read-only."""


class DiskFullError(RagctlError):
    """The disk holding the index is full; what was committed before is kept."""


class ModelMismatchError(RagctlError):
    """The index was built with another embedding model than the one asked for."""


class ModelNotFoundError(RagctlError):
    """A model name or directory could not be resolved to files on disk."""


class MissingDependencyError(RagctlError):
    """An optional dependency is not installed; the message names the extra."""


class AllFilesFailedError(RagctlError):
    """``index`` was given files but could read none of them."""

    exit_code = EXIT_ALL_FAILED


def missing_dependency(module: str, extra: str | None = None) -> MissingDependencyError:
    """Build the error raised when a lazily imported module is absent; ``extra`` names the
    optional group of ragctl that brings it (none for the core dependencies)."""
    how = f"pip install 'ragctl[{extra}]'" if extra else f"pip install {module}"
    return MissingDependencyError(
        f"the Python package '{module}' is not installed; install it with: {how}")
