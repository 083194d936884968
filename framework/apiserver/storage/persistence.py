"""Durable storage for the API server: one SQLite database in WAL mode in a data directory.

k3s keeps the state of its API server in SQLite through kine instead of etcd; this does the same
for the test server. Every write is committed (one transaction, synchronous=NORMAL in WAL mode)
before the server applies it in memory, so before a watcher or the client can see it: what the
server has acknowledged is in the WAL, which survives ``kill -9`` of the process at any moment
(NORMAL does not fsync each commit, so an OS crash or power loss may lose the last writes). The
history of changes is not kept: after a restart every older resourceVersion is too old (410), so
clients re-list as after a compaction.

A data directory holds only what the server writes there (:data:`KNOWN_ENTRIES`); anything else,
or a database that is not ours or is damaged, is a :class:`DataDirError` before anything is
written. A lock file keeps a second server off the same directory.
"""

from __future__ import annotations

import fcntl
import gc
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from framework.meta import jsoncodec

ObjKey = tuple[str, str]

DB_NAME = "storage.db"
LOCK_NAME = "lock"
# SQLite's application_id marks the file as ours ("gcma"); user_version is the schema version.
APPLICATION_ID = 0x67636D61
SCHEMA_VERSION = 1
# Everything the server itself may create in its data directory.
KNOWN_ENTRIES = frozenset(
    {DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", f"{DB_NAME}-journal", LOCK_NAME, "pki", "kubeconfigs"}
)

_SCHEMA = """
CREATE TABLE objects (
    resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    rv INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (resource, namespace, name)
) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE tokens (token TEXT PRIMARY KEY, kind TEXT NOT NULL, value BLOB NOT NULL) WITHOUT ROWID;
"""


class DataDirError(Exception):
    """A data directory the server must not use; the message is one line naming the file."""


def lock_directory(directory: Path, what: str) -> int:
    """Take the directory's lock file (``flock``, released by the kernel even on kill -9); its fd.

    A holder may remove the file when it lets go (:func:`unlock_directory` with ``remove``): a lock
    taken on a file that was unlinked meanwhile locks nothing, so it is taken again on the new file.
    A refused attempt leaves the file alone: it belongs to the holder.
    """
    path = directory / LOCK_NAME
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # The file is the holder's now, even if this call created it: removing it would let a
            # third process lock a new file next to the holder's.
            os.close(fd)
            raise DataDirError(f"{path}: the data directory is in use by another {what}") from None
        try:
            current = os.stat(path).st_ino
        except FileNotFoundError:
            current = -1
        if current == os.fstat(fd).st_ino:
            break
        os.close(fd)  # the previous holder removed the file between our open and our lock
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def unlock_directory(directory: Path, fd: int, remove: bool) -> None:
    """Release :func:`lock_directory`'s lock; ``remove`` deletes the lock file (nothing else was made)."""
    if remove:
        (directory / LOCK_NAME).unlink(missing_ok=True)
    os.close(fd)


def check_directory(directory: Path, known: frozenset[str], what: str) -> None:
    """Create ``directory`` (mode 0700) or check that it holds only ``known`` entries."""
    if directory.exists() and not directory.is_dir():
        raise DataDirError(f"{directory}: not a directory")
    if not directory.exists():
        try:
            directory.mkdir(mode=0o700, parents=True)
        except OSError as e:
            raise DataDirError(f"{directory}: cannot create the data directory: {e.strerror}") from e
        return
    for entry in sorted(os.listdir(directory)):
        if entry not in known:
            raise DataDirError(
                f"{directory / entry}: not written by {what}; refusing to use {directory} as its data "
                "directory (move the file away or choose another directory)"
            )


class SQLiteStore:
    """The database of one data directory, opened, checked and locked (held until :meth:`close`)."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        check_directory(self.directory, KNOWN_ENTRIES, "the gcm API server")
        self.path = self.directory / DB_NAME
        lock_existed = (self.directory / LOCK_NAME).exists()
        self._lock_fd = lock_directory(self.directory, "API server")
        try:
            self.db = self._open()
        except BaseException:
            unlock_directory(self.directory, self._lock_fd, remove=not lock_existed)  # leave it as it was
            raise

    def _open(self) -> sqlite3.Connection:
        new = not self.path.exists()
        if new:
            # Created here, not by sqlite3, so it is private from the start (WAL/SHM files copy the mode).
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
        # The server's event loop thread uses it; construction happens on the caller's thread.
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            if new:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(f"PRAGMA application_id={APPLICATION_ID}")
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                db.executescript(_SCHEMA)
            else:
                self._check(db)
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as e:
            db.close()
            raise DataDirError(f"{self.path}: not a usable gcm API server database ({e})") from e
        except BaseException:
            db.close()
            raise
        return db

    def _check(self, db: sqlite3.Connection) -> None:
        # Read-only checks first: a foreign or damaged file is reported and left exactly as it is.
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise DataDirError(f"{self.path}: not a gcm API server database (application_id {app_id:#x})")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise DataDirError(
                f"{self.path}: schema version {version}, this server reads version {SCHEMA_VERSION}"
            )
        problems = [row[0] for row in db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            # quick_check's text may span lines; the operator gets one line (exit 2, never a traceback).
            raise DataDirError(f"{self.path}: database is damaged ({' '.join(problems[0].split())})")

    # -- reads at start ------------------------------------------------------------------------------

    def load(self) -> tuple[int, dict[str, dict[ObjKey, dict]]]:
        """The last resourceVersion handed out and every stored object by storage key."""
        tables: dict[str, dict[ObjKey, dict]] = {}
        # Building 100,000s of dicts would trigger the cyclic collector over and over, each pass over
        # the growing heap; these objects hold no cycles, so collection waits until they are loaded.
        collecting = gc.isenabled()
        gc.disable()
        try:
            rv = self._meta_int("rv")
            rows = self.db.execute("SELECT resource, namespace, name, rv, data FROM objects")
            loads = jsoncodec.loads
            for resource, namespace, name, obj_rv, data in rows:
                objs = tables.get(resource)
                if objs is None:
                    objs = tables[resource] = {}
                objs[(namespace, name)] = loads(data)
                if obj_rv > rv:
                    rv = obj_rv
        except (sqlite3.DatabaseError, orjson.JSONDecodeError) as e:
            raise DataDirError(f"{self.path}: database is damaged ({e})") from e
        finally:
            if collecting:
                gc.enable()
        return rv, tables

    def _meta_int(self, key: str) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else 0

    def secret(self, name: str) -> bytes | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (name,)).fetchone()
        return bytes(row[0]) if row else None

    def set_secret(self, name: str, value: bytes) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))

    def tokens(self) -> Iterator[tuple[str, str, object]]:
        """Every stored bearer token as (token, kind, decoded value)."""
        for token, kind, value in self.db.execute("SELECT token, kind, value FROM tokens"):
            yield token, kind, orjson.loads(value)

    def add_token(self, token: str, kind: str, value: object) -> None:
        self.db.execute("INSERT OR REPLACE INTO tokens VALUES (?, ?, ?)", (token, kind, orjson.dumps(value)))

    # -- writes (each one committed before it returns) -----------------------------------------------

    def put(self, resource: str, k: ObjKey, rv: int, obj: dict) -> None:
        row = (resource, k[0], k[1], rv, jsoncodec.dumps(obj))
        self.db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?)", row)

    def delete(self, resource: str, k: ObjKey, rv: int) -> None:
        # The deletion's resourceVersion outlives the row: it keeps the counter monotonic on restart.
        with self._transaction():
            self.db.execute(
                "DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?", (resource, *k)
            )
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('rv', ?)", (str(rv).encode(),))

    def drop(self, resource: str) -> None:
        self.db.execute("DELETE FROM objects WHERE resource = ?", (resource,))

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def close(self) -> None:
        """Close the database and release the directory (idempotent)."""
        if self._lock_fd < 0:
            return
        self.db.close()
        os.close(self._lock_fd)
        self._lock_fd = -1
