"""Temporary files that a killed process left behind, and whether a process still runs.

Large files are written under a temporary name that carries the writer's process id
(``model.gguf.1234.tmp``, ``fast-copy.tmp-1234``) and renamed into place when whole. A
process killed before the rename (``kill -9``, a closed laptop lid, the OOM killer) leaves
its temporary for good: 156 MB for a first ``ask`` killed while the generator was joined.
The next writer removes those whose process is gone.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from pathlib import Path

logger = logging.getLogger("ragctl.files")

# a temporary of a live process is taken as abandoned once this old (a pid can be reused)
ABANDONED_AFTER_S = 6 * 3600.0


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` is running (another user's counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    except OSError:
        return False
    return True


def remove_stale(folder: Path, pattern: str) -> list[Path]:
    """Remove the files or folders in ``folder`` whose names match ``pattern`` (a regular
    expression with a group named ``pid``) and whose process is no longer running, or
    that are older than :data:`ABANDONED_AFTER_S`; the paths removed."""
    rx = re.compile(pattern)
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    now = time.time()
    for path in entries:
        m = rx.fullmatch(path.name)
        if m is None:
            continue
        try:
            pid = int(m.group("pid"))
            old = now - path.lstat().st_mtime > ABANDONED_AFTER_S
        except (ValueError, OSError):
            continue
        if pid != os.getpid() and (old or not pid_alive(pid)):
            try:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            except OSError as e:
                logger.debug("cannot remove %s: %s", path, e)
                continue
            logger.info("removed %s, left by an interrupted run", path)
            removed.append(path)
    return removed


def line_at(data: bytes, char: int) -> int | None:
    """The line (from 1) of the ``char``-th character of a text file's ``data``, counted as
    ``index`` decodes it (a byte-order mark dropped, line endings made "\\n"): UTF-8, UTF-16
    or UTF-32 by its mark, else one byte a character (a legacy encoding). None when the
    file is shorter than that."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe\x00\x00", "utf-32-le"),
                       (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe", "utf-16-le"),
                       (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            text = data[len(bom):].decode(codec, errors="replace")
            break
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if char > len(text):
        return None
    return text.count("\n", 0, char) + 1
