"""Files and directories that hold conversation data, created for their owner only.

A store's database, its memory files, a run's trace file and the viewer's page hold messages,
tool output and memories: private data. Created through :func:`create_private`, a new file is
``0600`` and a new directory ``0700`` (the umask can only take more away); one that already
exists is left as it is, mode included, since its owner may have chosen that mode.
"""

from __future__ import annotations

import os
from typing import Final

#: The mode of a file :func:`create_private` creates: read and write for its owner only.
PRIVATE_FILE: Final = 0o600
#: The mode of a directory :func:`create_private` creates: its owner only.
PRIVATE_DIRECTORY: Final = 0o700
_SEPARATORS = os.sep + (os.altsep or "")


def create_private(path: str | os.PathLike[str], *, directory: bool = False) -> bool:
    """Create ``path`` for its owner only, unless something is there; True when it created it.

    A new file is empty and ``0600``. With ``directory=True`` a new directory is ``0700``, and
    so is each missing directory above it. What exists is left as it is, its mode included, as
    is what another process creates meanwhile (the creation is exclusive: ``O_EXCL``, never
    through a link). An ``OSError`` (no such directory, no permission) is the caller's to
    report. Write a new file through it first (``create_private(p)``, then ``open(p, "w")``),
    so that it is never readable by others, not even for an instant.
    """
    where = os.fspath(path)
    if directory:
        where = where.rstrip(_SEPARATORS) or where  # "/srv/memory/" is "/srv/memory"
        above = os.path.dirname(where)
        if above and above != where and not os.path.isdir(above):
            create_private(above, directory=True)
        try:
            os.mkdir(where, PRIVATE_DIRECTORY)
        except FileExistsError:
            if not os.path.isdir(where):
                raise
            return False
        return True
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        os.close(os.open(where, flags, PRIVATE_FILE))
    except FileExistsError:
        return False
    return True
