"""ef.io._atomic: what the atomic writer writes, keeps, refuses and cleans up."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import ef.io._atomic
from ef.io._atomic import atomic_files, atomic_writer, remove_stale_temporaries, temporary_name

SRC = str(Path(__file__).resolve().parents[1] / "src")


def write(path: str | Path, data: bytes) -> None:
    with atomic_writer(path) as stream:
        stream.write(data)


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_symlink_is_followed_and_its_target_written_beside_itself(tmp_path: Path) -> None:
    real_dir, link_dir = tmp_path / "real", tmp_path / "links"
    real_dir.mkdir()
    link_dir.mkdir()
    (real_dir / "report.json").write_bytes(b"old")
    (link_dir / "report.json").symlink_to(Path("..") / "real" / "report.json")  # relative, another folder
    (link_dir / "again.json").symlink_to(link_dir / "report.json")  # a chain of two links
    write(link_dir / "again.json", b"new")
    assert (link_dir / "report.json").is_symlink()
    assert (link_dir / "again.json").is_symlink()
    assert (real_dir / "report.json").read_bytes() == b"new"
    assert listing(real_dir) == ["report.json"]
    assert listing(link_dir) == ["again.json", "report.json"]


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "made.txt")
    write(tmp_path / "link", b"x")
    assert (tmp_path / "link").is_symlink()
    assert (tmp_path / "made.txt").read_bytes() == b"x"


@pytest.mark.parametrize("mode", [0o600, 0o755, 0o640])
def test_an_existing_files_mode_is_kept(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "secret.json"
    target.write_bytes(b"old")
    target.chmod(mode)
    write(target, b"new")
    assert (target.read_bytes(), stat.S_IMODE(target.stat().st_mode)) == (b"new", mode)


def test_a_new_file_gets_open_s_permissions(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        write(tmp_path / "new.json", b"{}")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640


def test_a_250_character_file_name_works(tmp_path: Path) -> None:
    name = "r" * 245 + ".json"
    write(tmp_path / name, b"{}")
    assert listing(tmp_path) == [name]
    assert len(temporary_name()) <= 40


def test_dev_null_is_written_not_replaced() -> None:
    write("/dev/null", b"nothing")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dev_full_reports_the_full_device_and_stays_a_device() -> None:
    with pytest.raises(OSError) as caught:
        write("/dev/full", b"x" * 100_000)
    assert (caught.value.errno, caught.value.filename) == (errno.ENOSPC, "/dev/full")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_fifo_is_written_into_not_renamed_over(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write(fifo, b"through the pipe")
    reader.join(timeout=10)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert listing(tmp_path) == ["pipe"]


@pytest.mark.parametrize("path", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_dev_stdout_writes_into_this_processs_output(tmp_path: Path, path: str) -> None:
    # Redirected to a file, /dev/stdout must add to that output, neither replace nor truncate it.
    out = tmp_path / "out.txt"
    code = f"""
        from ef.io._atomic import atomic_writer
        print("before", flush=False)
        with atomic_writer({path!r}) as stream:
            stream.write(b"report\\n")
        print("after")
    """
    with open(out, "wb") as handle:
        subprocess.run([sys.executable, "-c", textwrap.dedent(code)], stdout=handle, check=True,
                       env={**os.environ, "PYTHONPATH": SRC})
    assert out.read_text() == "before\nreport\nafter\n"
    assert listing(tmp_path) == ["out.txt"]


def test_a_directory_is_refused_naming_the_path(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError) as caught:
        write(tmp_path / "folder", b"x")
    assert caught.value.filename == str(tmp_path / "folder")
    assert listing(tmp_path) == ["folder"]


def test_a_failed_rename_names_the_users_path_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "link.json"
    (tmp_path / "real.json").write_bytes(b"old")
    target.symlink_to(tmp_path / "real.json")

    def cross_device(source: str, destination: str) -> None:
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), source, destination)

    monkeypatch.setattr(ef.io._atomic.os, "replace", cross_device)
    with pytest.raises(OSError) as caught:
        write(target, b"new")
    assert str(caught.value) == f"[Errno {errno.EXDEV}] Invalid cross-device link: '{target}'"
    assert listing(tmp_path) == ["link.json", "real.json"]
    assert (tmp_path / "real.json").read_bytes() == b"old"


def test_a_full_disk_names_the_users_path_and_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "r.json"
    target.write_bytes(b"old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(ef.io._atomic.os, "fsync", full)
    with pytest.raises(OSError) as caught:
        write(target, b"new")
    assert (caught.value.errno, caught.value.filename) == (errno.ENOSPC, str(target))
    assert (listing(tmp_path), target.read_bytes()) == (["r.json"], b"old")


@pytest.mark.parametrize("exception", [KeyboardInterrupt, RuntimeError, SystemExit])
def test_every_failure_in_the_block_removes_the_temporary_file(tmp_path: Path, exception: type) -> None:
    target = tmp_path / "r.json"
    target.write_bytes(b"old")

    def fail() -> None:
        with atomic_writer(target) as stream:
            stream.write(b"half")
            raise exception

    with pytest.raises(exception):
        fail()
    assert (listing(tmp_path), target.read_bytes()) == (["r.json"], b"old")


def test_several_files_are_all_renamed_or_none(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"old a")

    def fail() -> None:
        with atomic_files([tmp_path / "a", tmp_path / "b"]) as (a, _):
            a.write(b"new a")
            raise ValueError("second failed")

    with pytest.raises(ValueError, match="second failed"):
        fail()
    assert (listing(tmp_path), (tmp_path / "a").read_bytes()) == (["a"], b"old a")


def _child(tmp_path: Path, body: str) -> subprocess.Popen[bytes]:
    code = f"""
        import os, signal, sys, time
        from ef.io._atomic import atomic_writer
        with atomic_writer({str(tmp_path / "r.json")!r}) as stream:
            stream.write(b"x" * 1_000_000)
            stream.flush()
            {body}
    """
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": SRC})


def test_sigterm_removes_the_temporary_file_and_still_ends_the_process(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_bytes(b"old")
    child = _child(tmp_path, 'print("writing", flush=True); time.sleep(30)')
    assert child.stdout is not None
    assert child.stdout.readline() == b"writing\n"
    assert len(listing(tmp_path)) == 2  # the old file and the temporary one
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=10) == -signal.SIGTERM
    assert (listing(tmp_path), (tmp_path / "r.json").read_bytes()) == (["r.json"], b"old")


def test_a_killed_writers_leftover_goes_with_the_next_write(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_bytes(b"old")
    child = _child(tmp_path, "os.kill(os.getpid(), signal.SIGKILL)")
    assert child.wait(timeout=10) == -signal.SIGKILL
    leftovers = [name for name in listing(tmp_path) if name != "r.json"]
    assert len(leftovers) == 1
    assert leftovers[0].startswith(".ef-")
    assert (tmp_path / leftovers[0]).stat().st_size == 1_000_000
    # A live writer's temporary file (this process's, pid 1's) and another host's are kept.
    host = leftovers[0].split("-")[1]
    other_host = "0" * 8 if host != "0" * 8 else "1" * 8
    kept = [f".ef-{host}-{os.getpid()}-{'a' * 12}.tmp", f".ef-{host}-1-{'b' * 12}.tmp",
            f".ef-{other_host}-{child.pid}-{'c' * 12}.tmp"]
    for name in kept:
        (tmp_path / name).write_bytes(b"")
    (tmp_path / f".ef-{host}-{child.pid}-{'d' * 12}.tmp").mkdir()  # a killed index save's folder
    write(tmp_path / "r.json", b"new")
    assert listing(tmp_path) == sorted(["r.json", *kept])
    assert (tmp_path / "r.json").read_bytes() == b"new"


def test_remove_stale_temporaries_ignores_an_unreadable_folder(tmp_path: Path) -> None:
    assert remove_stale_temporaries(tmp_path / "missing") == []


def test_a_programs_own_sigterm_handler_stays_in_charge(tmp_path: Path) -> None:
    seen: list[int] = []

    def mine(signum: int, frame: object) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with atomic_writer(tmp_path / "r.json") as stream:
            stream.write(b"1")
            os.kill(os.getpid(), signal.SIGTERM)
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert (seen, (tmp_path / "r.json").read_bytes()) == ([signal.SIGTERM], b"1")
