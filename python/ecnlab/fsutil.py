"""Writing result directories all at once: into a hidden temporary directory beside the
target, renamed into place only when complete, so an invalid scenario, a failed run or
Ctrl-C never leaves a half-written result directory behind."""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import OutputError

#: Files that mark a directory as an ecnlab result (safe to replace): a run, a reproduction or
#: sweep summary, a simulated-versus-emulated comparison.
RESULT_MARKERS = ("run.json", "summary.json", "compare.json")
#: Inside a temporary result directory: the id of the process writing it, so a later run can
#: tell a directory left by a killed process (SIGKILL, out of memory) from one being written.
OWNER_FILE = ".ecnlab-owner"


def check_replaceable(target: str | os.PathLike[str]) -> Path:
    """Raises OutputError unless ``target`` is absent, an empty directory, or an earlier
    ecnlab result directory."""
    t = Path(target)
    if not t.exists() and not t.is_symlink():
        return t
    if not t.is_dir() or t.is_symlink():
        raise OutputError(f"{t} exists and is not a directory")
    if any(t.iterdir()) and not any((t / m).is_file() for m in RESULT_MARKERS):
        raise OutputError(
            f"{t} exists and is not an ecnlab result directory; choose another output "
            "directory or remove it"
        )
    return t


def _missing_parents(p: Path) -> list[Path]:
    out = []
    for parent in p.parents:
        if parent.exists():
            break
        out.append(parent)
    return out


@contextmanager
def atomic_dir(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yields a temporary directory; on normal exit it replaces ``target``, on any
    exception (KeyboardInterrupt included) it is removed along with any parent directories
    created for it."""
    t = check_replaceable(target).absolute()
    created = _missing_parents(t)
    try:
        t.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create {t.parent}: {e.strerror or e}") from None
    remove_stale(t)
    tmp: Path | None = None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{t.name}.partial-", dir=t.parent))
        (tmp / OWNER_FILE).write_text(f"{os.getpid()} {_boot_id()}\n", encoding="utf-8")
        # mkdtemp makes it private; the result gets the usual permissions.
        tmp.chmod(0o777 & ~_umask())
    except BaseException as e:
        # A Ctrl-C between making the directory and handing it out must not leave it behind.
        if tmp is not None:
            _remove_tree(tmp)
        _remove_empty(created)
        if isinstance(e, OSError):
            raise OutputError(f"cannot write in {t.parent}: {e.strerror or e}") from None
        raise
    try:
        yield tmp
        (tmp / OWNER_FILE).unlink(missing_ok=True)
        _replace(tmp, t)
    except BaseException:
        _remove_tree(tmp)
        _remove_empty(created)
        raise


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return "-"


def _owner_alive(d: Path) -> bool:
    """Whether the process that is writing ``d`` still runs (unknown owners count as alive:
    a directory is removed only when its writer is known to be gone)."""
    try:
        pid_text, boot = (d / OWNER_FILE).read_text(encoding="utf-8").split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return True
    if boot != _boot_id():
        return False
    return pid_alive(pid)


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (one we may not signal counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: Seconds after which an earlier result set aside by a replacement (``.NAME.old-*``) is
#: surely not being renamed back by its writer.
OLD_RESULT_AGE_S = 60.0


def remove_stale(target: Path) -> list[Path]:
    """Removes the temporary directories of earlier writes of ``target`` whose process died
    without cleaning up, and earlier results a replacement could not remove; returns them."""
    gone = []
    try:
        siblings = list(target.parent.glob(f".{target.name}.partial-*"))
        old = list(target.parent.glob(f".{target.name}.old-*"))
    except OSError:
        return gone
    for d in siblings:
        if d.is_dir() and not d.is_symlink() and not _owner_alive(d):
            _remove_tree(d)
            gone.append(d)
    now = time.time()
    for d in old:
        try:
            settled = now - d.lstat().st_ctime > OLD_RESULT_AGE_S
        except OSError:
            continue
        if d.is_dir() and not d.is_symlink() and settled:
            _remove_tree(d)
            if not d.exists():
                gone.append(d)
    return gone


def _remove_tree(d: Path) -> None:
    # A second pass catches files a finishing writer added while the first pass ran.
    for _ in range(3):
        shutil.rmtree(d, ignore_errors=True)
        if not d.exists():
            return


def _remove_empty(dirs: list[Path]) -> None:
    for d in dirs:  # deepest first
        try:
            d.rmdir()
        except OSError:
            break


def _replace(tmp: Path, target: Path) -> None:
    check_replaceable(target)
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        old.rmdir()
        target.rename(old)
    try:
        tmp.rename(target)
    except BaseException:
        if old is not None:
            old.rename(target)
        raise
    if old is not None:
        _remove_tree(old)
        if old.exists():
            # Said, not silent: the next write of the target tries again.
            print(f"warning: could not remove the earlier result set aside at {old}; the next write of {target} removes it", file=sys.stderr)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Writes ``text`` to ``path`` whole or not at all: a temporary file beside it, renamed
    into place, with the permissions a new file gets (mkstemp's are private)."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


#: Bytes of a file ecnlab reads as text (a scenario, a sweep, a run's run.json).
TEXT_BYTES = 256 << 20


def read_text(path: str | os.PathLike[str], what: str, cap: int = TEXT_BYTES) -> str:
    """The UTF-8 text of ``path`` (a leading byte-order mark dropped) if it is a regular file
    of at most ``cap`` bytes. Raises FileNotFoundError, IsADirectoryError, or ValueError for
    what is not a regular file (``/dev/zero`` would be read until memory runs out, a FIFO
    would block for ever), too large, or not UTF-8; messages name the file and never show
    its contents."""
    p = Path(path)
    st = os.stat(p)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"{p} is a directory, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{p} is {_kind(st.st_mode)}, not a {what} (a regular file)")
    if st.st_size > cap:
        raise ValueError(f"{p} has {st.st_size} bytes, beyond the {cap} a {what} may have")
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{p} is {_kind(st.st_mode)}, not a {what} (a regular file)")
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise ValueError(f"{p} has more than {cap} bytes, beyond what a {what} may have")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{p} is not UTF-8 text (byte {e.start} is not)") from None
    return text[1:] if text.startswith("\ufeff") else text


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


@contextmanager
def sole_writer(target: str | os.PathLike[str], remove_after: Path | None = None) -> Iterator[Path]:
    """Holds ``.<name>.lock`` beside ``target`` (an exclusive ``flock``) while the block runs,
    and removes it after; OutputError when another process holds it. A reproduction keeps
    its finished runs beside its output until the output is complete and reads them back
    while it judges: a second process writing the same output would replace or remove them
    under the first. ``remove_after``: a directory removed, still under the lock, when the
    block ends without an exception (the finished runs, once the output holds them)."""
    t = Path(target).absolute()
    lock = t.parent / f".{t.name}.lock"
    try:
        t.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create {t.parent}: {e.strerror or e}") from None
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666 & ~_umask())
        except OSError as e:
            raise OutputError(f"cannot write in {t.parent}: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # The holder writes its pid only once it holds the lock, over the pid of a holder
            # that died without removing the file: the pid read here may be that dead one.
            try:
                holder = f" (last recorded pid {os.pread(fd, 64, 0).decode('ascii', 'replace').split()[0]})"
            except (OSError, IndexError):
                holder = ""
            os.close(fd)
            raise OutputError(
                f"{t} is being written by another process{holder}, which holds {lock}; "
                "wait for it to finish or choose another output directory"
            ) from None
        except OSError as e:
            # Not busy: the file system cannot lock (ENOLCK on some NFS or FUSE mounts).
            os.close(fd)
            raise OutputError(f"cannot lock {lock}: {e.strerror or e}; choose an output directory on a file system that supports flock") from None
        # The holder before us may have removed the file after we opened it: the lock is
        # ours only if the file we locked is still the one at that path.
        try:
            same = _identity_of(os.fstat(fd)) == _identity_of(os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield lock
        if remove_after is not None:
            shutil.rmtree(remove_after, ignore_errors=True)
    finally:
        try:
            lock.unlink(missing_ok=True)
        finally:
            os.close(fd)


def _identity_of(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)
