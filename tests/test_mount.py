"""``archivefs mount``: mounted for real (FUSE), driven by unmodified programs.

Each test starts the installed ``archivefs mount`` console script as a subprocess (or the
Python context manager in a thread) over the emulated archive, runs ordinary programs on
the mount point, and counts what reached the server. Every subprocess that touches the
mount point has a timeout, and the fixture always unmounts (``fusermount3 -uz``), so a
failing test never leaves a hung mount behind.
"""

from __future__ import annotations

import ctypes.util
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import archivefs
from archivefs.mount.runner import fuse_problem
from tests.support.providers import (
    NO_RESTORES,
    Provider,
    hold_restores,
    provider_params,
    quick_restores,
    request_counts,
    restore_calls,
    restore_requests,
    restores_started,
    seed_cold,
)
from tests.support.providers import seed as seed_provider

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from archivefs.testing import EmulatedArchive

pytestmark = pytest.mark.skipif(
    fuse_problem() is not None, reason=f"cannot mount here: {fuse_problem()}"
)

ARCHIVEFS = shutil.which("archivefs", path=str(Path(sys.executable).parent)) or "archivefs"
TIMEOUT = 120  # seconds any program run on the mount may take (a busy 2-core machine)
ENV = {
    **os.environ,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def run(*argv: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a program (on the mount) with a timeout; its output as text."""
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    if check:
        assert done.returncode == 0, f"{argv}: {done.stderr}"
    return done


def wait_for(condition: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@dataclass
class Mounted:
    """A running ``archivefs mount``: its mount point, process and log."""

    root: Path
    process: subprocess.Popen[bytes]
    log_path: Path
    extra: list[str] = field(default_factory=list)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def mount_cli(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> Iterator[Callable[..., Mounted]]:
    """``start(*options, prefix="")``: ``archivefs mount s3://BUCKET/PREFIX MNT OPTIONS``
    as a subprocess, returned once mounted; unmounted and stopped at teardown."""
    started: list[Mounted] = []

    def start(*options: str, prefix: str = "") -> Mounted:
        root = tmp_path / f"mnt{len(started)}"
        root.mkdir()
        log_path = tmp_path / f"mount{len(started)}.log"
        argv = [ARCHIVEFS, "mount", f"s3://{bucket}/{prefix}", str(root), *options,
                "--endpoint-url", archive.endpoint_url, "--journal", str(tmp_path / "j.sqlite"),
                "--restore-time-scale", str(1 / 3600)]  # fmt: skip
        with open(log_path, "wb") as sink:
            process = subprocess.Popen(argv, stdout=sink, stderr=sink, env=ENV)
        mounted = Mounted(root, process, log_path)
        started.append(mounted)
        wait_for(lambda: os.path.ismount(root) or process.poll() is not None)
        assert os.path.ismount(root), mounted.log()
        return mounted

    yield start
    for mounted in started:
        subprocess.run(["fusermount3", "-uz", str(mounted.root)], capture_output=True,
                       timeout=30, check=False)  # fmt: skip
        if mounted.process.poll() is None:
            mounted.process.terminate()
        try:
            mounted.process.wait(30)
        except subprocess.TimeoutExpired:
            mounted.process.kill()
            mounted.process.wait(30)


def seed(archive: EmulatedArchive, bucket: str) -> dict[str, bytes]:
    files = {
        "data/a.txt": b"alpha\n" * 1000,
        "data/b.bin": bytes(range(256)) * 4096,  # 1 MiB
        "data/sub/c.txt": b"gamma\n",
        "top.txt": b"top\n",
    }
    archive.put_objects(bucket, files)
    return files


def test_programs_list_stat_and_read_the_mounted_tree(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """ls -l, stat, cat, cp, md5sum and tar read the objects as ordinary files; stat of
    every file is answered from its directory's listing: no HEAD at all."""
    files = seed(archive, bucket)
    mounted = mount_cli()
    archive.requests.clear()
    listing = run("ls", "-lR", mounted.root).stdout
    assert "top.txt" in listing
    assert "c.txt" in listing
    sizes = run("stat", "-c", "%n %s %F", *(mounted.root / k for k in files)).stdout.splitlines()
    assert sizes == [f"{mounted.root / k} {len(v)} regular file" for k, v in files.items()]
    counts = archive.requests.per_op()
    assert counts.get("HEAD", 0) == 0, counts
    assert counts.get("LIST", 0) == 3, counts  # one listing per directory: /, data, data/sub
    assert run("cat", mounted.root / "data/a.txt").stdout.encode() == files["data/a.txt"]
    run("cp", mounted.root / "data/b.bin", tmp_path / "b.bin")
    assert (tmp_path / "b.bin").read_bytes() == files["data/b.bin"]
    digests = run("md5sum", mounted.root / "data/b.bin").stdout.split()[0]
    assert digests == hashlib.md5(files["data/b.bin"]).hexdigest()
    run("tar", "-C", mounted.root, "-cf", tmp_path / "t.tar", "data")
    names = run("tar", "-tf", tmp_path / "t.tar").stdout.split()
    assert sorted(names) == ["data/", "data/a.txt", "data/b.bin", "data/sub/", "data/sub/c.txt"]
    assert archive.requests.per_op().get("HEAD", 0) == 0


def test_writes_fail_with_erofs(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    seed(archive, bucket)
    mounted = mount_cli()
    archive.requests.clear()
    for argv in (
        ["touch", mounted.root / "new.txt"],
        ["sh", "-c", f"echo x > {mounted.root / 'top.txt'}"],
        ["mkdir", mounted.root / "d"],
        ["rm", mounted.root / "top.txt"],
        ["mv", mounted.root / "top.txt", mounted.root / "moved.txt"],
    ):
        done = run(*argv, check=False)
        assert done.returncode != 0, argv
        assert "Read-only file system" in done.stderr, (argv, done.stderr)
    assert set(archive.requests.per_op()) <= {"LIST", "GET"}  # nothing written or deleted


def test_ctrl_c_unmounts_cleanly(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """SIGINT (Ctrl-C) ends the foreground mount: unmounted, exit status 0, the log says so."""
    seed(archive, bucket)
    mounted = mount_cli()
    mounted.process.send_signal(signal.SIGINT)
    assert mounted.process.wait(TIMEOUT) == 0, mounted.log()
    assert not os.path.ismount(mounted.root)
    assert "unmounted" in mounted.log()
    assert list(mounted.root.iterdir()) == []


def test_the_mount_runs_over_libfuse3_unless_the_user_chose_a_library(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """mfusepy alone loads libfuse 2 when it is also installed (at most 128 KiB a request);
    the mount loads libfuse3, says so in its log, and leaves the environment as it was
    (an empty ``FUSE_LIBRARY_NAME`` too).
    A ``FUSE_LIBRARY_NAME`` the user set is the library it loads."""
    seed(archive, bucket)
    mounted = mount_cli()
    assert "libfuse 3." in mounted.log()
    probe = (
        "import os; from archivefs.mount.binding import libfuse_version; "
        "print(*libfuse_version(), repr(os.environ.get('FUSE_LIBRARY_NAME')))"
    )
    clean = {k: v for k, v in ENV.items() if k not in ("FUSE_LIBRARY_NAME", "FUSE_LIBRARY_PATH")}

    def loaded(env: dict[str, str]) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    major, _, left = loaded(clean)
    assert (major, left) == ("3", "None")
    major, _, left = loaded({**clean, "FUSE_LIBRARY_NAME": ""})  # empty: no choice, kept
    assert (major, left) == ("3", "''")
    if ctypes.util.find_library("fuse") is None:
        return  # no libfuse 2 here to choose
    major, _, left = loaded({**clean, "FUSE_LIBRARY_NAME": "fuse"})
    assert (major, left) == ("2", "'fuse'")


def test_a_killed_mount_is_cleared_by_unmount(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """kill -9 leaves a dead mount ("Transport endpoint is not connected"); `archivefs
    unmount` (fusermount3 -u) clears it, and the directory can be mounted again."""
    seed(archive, bucket)
    mounted = mount_cli()
    mounted.process.send_signal(signal.SIGKILL)
    mounted.process.wait(TIMEOUT)
    dead = run("ls", mounted.root, check=False)
    assert dead.returncode != 0
    assert "Transport endpoint is not connected" in dead.stderr
    run(ARCHIVEFS, "unmount", mounted.root)
    assert not os.path.ismount(mounted.root)
    assert list(mounted.root.iterdir()) == []


def test_daemon_detaches_and_unmount_ends_it(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """--daemon returns once mounted; the detached process serves until `archivefs unmount`."""
    seed(archive, bucket)
    root = tmp_path / "mnt"
    root.mkdir()
    log = tmp_path / "daemon.log"
    try:
        done = subprocess.run(
            [ARCHIVEFS, "mount", f"s3://{bucket}/data/", str(root), "--daemon", "--log-file",
             str(log), "--endpoint-url", archive.endpoint_url],
            capture_output=True, text=True, timeout=TIMEOUT, env=ENV, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert os.path.ismount(root)
        pid = int(done.stdout.split("(pid ")[1].split(";")[0])
        assert os.getsid(pid) == pid  # detached: its own session, no terminal to lose
        assert run("cat", root / "sub/c.txt").stdout == "gamma\n"
        run(ARCHIVEFS, "unmount", root)
        wait_for(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid))
        assert "mounted s3://" in log.read_text()
        failed = subprocess.run(
            [ARCHIVEFS, "mount", f"s3://{bucket}-missing/", str(root), "--daemon", "--log-file",
             str(log), "--endpoint-url", archive.endpoint_url],
            capture_output=True, text=True, timeout=TIMEOUT, env=ENV, check=False,
        )  # fmt: skip
        assert failed.returncode == 1
        assert "the mount did not start" in failed.stderr
        assert not os.path.ismount(root)
    finally:
        subprocess.run(["fusermount3", "-uz", str(root)], capture_output=True, timeout=30,
                       check=False)  # fmt: skip


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def test_python_context_manager_mounts_in_a_thread(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """``archivefs.mount(...)`` serves the tree from a thread of this process for the block
    and unmounts at its end, leaving the process's signal dispositions as they were
    (libfuse set SIGPIPE to SIG_DFL after its loop: the next write to a closed socket
    killed the process, an xdist worker in this suite)."""
    files = seed(archive, bucket)
    ignored_before = _ignored_signals()
    root = tmp_path / "mnt"
    root.mkdir()
    with archivefs.mount(
        f"s3://{bucket}/data", root, storage_options=archive.storage_options()
    ) as mounted:
        assert os.path.ismount(mounted)
        assert sorted(p.name for p in mounted.iterdir()) == ["a.txt", "b.bin", "sub"]
        assert (mounted / "b.bin").read_bytes() == files["data/b.bin"]
        assert os.stat(mounted / "sub/c.txt").st_size == 6
    assert not os.path.ismount(root)
    assert _ignored_signals() == ignored_before
    assert signal.SIGPIPE in ignored_before  # Python ignores it; libfuse must not undo that


def _ignored_signals() -> set[int]:
    """The signals this process ignores, as the kernel has them (/proc: SigIgn)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            mask = int(line.split()[1], 16)
            return {n for n in range(1, 65) if mask >> (n - 1) & 1}
    raise AssertionError("no SigIgn in /proc/self/status")


def test_netcdf_programs_and_xarray_read_through_the_mount(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """ncdump, h5dump and xarray.open_dataset open a netCDF4 file on the mount by its path."""
    xr = pytest.importorskip("xarray")
    np = pytest.importorskip("numpy")
    pytest.importorskip("h5netcdf")
    local = tmp_path / "t.nc"
    xr.Dataset({"temp": (("x",), np.arange(10.0))}).to_netcdf(local, engine="h5netcdf")
    archive.put_objects(bucket, {"nc/t.nc": local.read_bytes()})
    mounted = mount_cli()
    path = mounted.root / "nc/t.nc"
    run("ls", path.parent)
    archive.requests.clear()
    dump = run("ncdump", "-v", "temp", path).stdout
    assert "temp = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 ;" in dump
    # ncdump opens the file twice; both opens read one file object (mount/files.py): the
    # small file is fetched once, whole
    assert archive.requests.bytes_sent("GET") == local.stat().st_size
    assert archive.requests.count("GET") == 1
    assert 'DATASET "temp"' in run("h5dump", "-H", path).stdout
    script = (
        "import sys, xarray; "
        "ds = xarray.open_dataset(sys.argv[1], engine='h5netcdf'); "
        "print(float(ds.temp.sum()))"
    )
    assert run(sys.executable, "-c", script, path).stdout.strip() == "45.0"


def cat_all(paths: list[Path]) -> list[subprocess.CompletedProcess[bytes]]:
    """``cat`` of every path at once (concurrent opens), each with a timeout."""
    processes = [
        subprocess.Popen(["cat", str(p)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for p in paths
    ]
    done = []
    for process in processes:
        out, err = process.communicate(timeout=TIMEOUT)
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return done


def bundle(archive: EmulatedArchive, bucket: str, tmp_path: Path, files: dict[str, bytes]) -> None:
    """``files`` as members of one GLACIER bundle under ``s3://BUCKET/b/``."""
    src = tmp_path / "src"
    for name, data in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(data)
    done = subprocess.run(
        [ARCHIVEFS, "bundle", str(src), f"s3://{bucket}/b", "--storage-class", "GLACIER",
         "--endpoint-url", archive.endpoint_url],
        capture_output=True, text=True, timeout=TIMEOUT, env=ENV, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_raise_refuses_an_archived_open_with_eacces_and_says_how_to_restore(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """--on-archived raise (the default): open fails at once with EACCES (never EIO), the
    log names the object, its class and the restore command; nothing is requested."""
    archive.put_objects(bucket, {"cold/x.nc": b"x" * 100}, storage_class="GLACIER")
    mounted = mount_cli()
    assert run("stat", "-c", "%s", mounted.root / "cold/x.nc").stdout == "100\n"
    archive.requests.clear()
    done = run("cat", mounted.root / "cold/x.nc", check=False)
    assert done.returncode == 1
    assert "Permission denied" in done.stderr
    assert archive.requests.count("RestoreObject") == 0
    assert archive.requests.count("GET") == 0  # refused from the listing's state
    log = mounted.log()
    assert f"s3://{bucket}/cold/x.nc: archived in GLACIER" in log
    assert f"`archivefs restore s3://{bucket}/cold/x.nc --tier Bulk`" in log


def test_restore_requests_concurrent_opens_in_one_batch_one_request_per_group(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """--on-archived restore: concurrent opens of two bundle members and two objects fail
    with EACCES, and are one restore call: one request for the bundle, one per object;
    opening them again while they restore sends nothing more (the journal)."""
    archive.set_restore_delay(600)
    bundle(archive, bucket, tmp_path, {"m1.txt": b"one", "m2.txt": b"two"})
    archive.put_objects(bucket, {"o/a.txt": b"a", "o/b.txt": b"b"}, storage_class="DEEP_ARCHIVE")
    mounted = mount_cli("--on-archived", "restore", "--batch-window", "3", "--tier", "Bulk")
    paths = [mounted.root / p for p in ("b/m1.txt", "b/m2.txt", "o/a.txt", "o/b.txt")]
    run("stat", *paths)  # listed before the opens, so the batch holds only restores
    archive.requests.clear()
    for done in cat_all(paths):
        assert done.returncode == 1
        assert b"Permission denied" in done.stderr
    restores = archive.requests.matching(op="RestoreObject")
    keys = sorted(r.key for r in restores)
    assert len(keys) == 3, keys
    assert keys[1:] == ["o/a.txt", "o/b.txt"]
    assert keys[0].startswith("b/.archivefs/")  # the members' one bundle
    assert mounted.log().count("restoring 4 file(s) in one batch") == 1
    assert "its restore was requested" in mounted.log()
    archive.requests.clear()
    assert run("cat", paths[0], check=False).returncode == 1
    assert archive.requests.count("RestoreObject") == 0


def test_wait_blocks_concurrent_opens_until_their_batch_is_restored(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """--on-archived wait: concurrent opens block, one batch is restored (one request per
    object), and each program then reads its bytes."""
    archive.set_restore_delay(1.0)
    files = {f"w/{i}.txt": f"file {i}\n".encode() for i in range(3)}
    archive.put_objects(bucket, files, storage_class="GLACIER")
    mounted = mount_cli("--on-archived", "wait", "--batch-window", "3", "--wait-timeout", "300")
    paths = [mounted.root / k for k in files]
    run("stat", *paths)
    archive.requests.clear()
    done = cat_all(paths)
    assert [d.stdout for d in done] == list(files.values()), [d.stderr for d in done]
    assert archive.requests.count("RestoreObject") == 3
    assert mounted.log().count("restoring 3 file(s) in one batch and waiting") == 1


def test_wait_timeout_fails_the_open_with_etimedout(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    archive.set_restore_delay(600)
    archive.put_objects(bucket, {"w/slow.txt": b"s"}, storage_class="GLACIER")
    mounted = mount_cli("--on-archived", "wait", "--batch-window", "0", "--wait-timeout", "1")
    done = run("cat", mounted.root / "w/slow.txt", check=False)
    assert done.returncode == 1
    assert "Connection timed out" in done.stderr
    assert archive.requests.count("RestoreObject") == 1


def test_max_cost_refuses_the_restore_with_edquot(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """--max-cost is the filesystem's budget: a restore above it is never sent; the open
    fails with EDQUOT and the log says the estimate and the budget."""
    archive.put_objects(bucket, {"big/x.bin": b"x" * 1000}, storage_class="DEEP_ARCHIVE")
    mounted = mount_cli("--on-archived", "wait", "--batch-window", "0", "--max-cost", "0")
    done = run("cat", mounted.root / "big/x.bin", check=False)
    assert done.returncode == 1
    assert "Disk quota exceeded" in done.stderr
    assert archive.requests.count("RestoreObject") == 0
    assert "budget" in mounted.log().lower()


def xattrs(path: Path) -> dict[str, str]:
    """``getfattr -d`` of ``path``: its user.archivefs.* attributes."""
    out = run("getfattr", "-d", "-m", "user.archivefs", "--absolute-names", path).stdout
    found = {}
    for line in out.splitlines():
        if "=" in line:
            name, _, value = line.partition("=")
            found[name] = value.strip('"')
    return found


def test_getfattr_shows_the_archive_state_and_setfattr_restores(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """getfattr -d shows class, state, group and estimate from the listing; setfattr of
    user.archivefs.restore restores a file (one request), a directory's subtree (one call,
    one request per group) and refuses a tier S3 lacks with EINVAL."""
    archive.set_restore_delay(600)
    bundle(archive, bucket, tmp_path, {"m1.txt": b"one", "m2.txt": b"two"})
    archive.put_objects(bucket, {f"d/{i}.txt": b"d" for i in range(3)}, storage_class="GLACIER")
    archive.put_objects(bucket, {"hot.txt": b"h"})
    mounted = mount_cli()
    member = xattrs(mounted.root / "b/m1.txt")
    assert member["user.archivefs.storage_class"] == "GLACIER"
    assert member["user.archivefs.state"] == "archived"
    assert member["user.archivefs.group"].startswith(f"s3://{bucket}/b/.archivefs/")
    assert "1 restore request(s)" in member["user.archivefs.estimate"]
    assert "USD" in member["user.archivefs.estimate"]
    hot = xattrs(mounted.root / "hot.txt")
    assert hot["user.archivefs.state"] == "hot"
    assert hot["user.archivefs.group"] == f"s3://{bucket}/hot.txt"
    assert "0 restore request(s)" in hot["user.archivefs.estimate"]

    archive.requests.clear()
    run("setfattr", "-n", "user.archivefs.restore", "-v", "Bulk", mounted.root / "b/m1.txt")
    (request,) = archive.requests.matching(op="RestoreObject")
    assert f"s3://{bucket}/{request.key}" == member["user.archivefs.group"]
    assert xattrs(mounted.root / "b/m2.txt")["user.archivefs.state"] == "restoring"

    archive.requests.clear()
    run("setfattr", "-n", "user.archivefs.restore", "-v", "Bulk", mounted.root / "d")
    assert sorted(r.key for r in archive.requests.matching(op="RestoreObject")) == [
        f"d/{i}.txt" for i in range(3)
    ]
    assert {xattrs(mounted.root / f"d/{i}.txt")["user.archivefs.state"] for i in range(3)} == {
        "restoring"
    }
    wrong = run("setfattr", "-n", "user.archivefs.restore", "-v", "High", mounted.root / "hot.txt",
                check=False)  # fmt: skip
    assert wrong.returncode != 0
    assert "Invalid argument" in wrong.stderr
    unknown = run("getfattr", "-n", "user.archivefs.nothing", mounted.root / "hot.txt", check=False)
    assert "No such attribute" in unknown.stderr


def test_a_restored_file_shows_its_expiry_and_reads(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """Once restored, the state is `restored`, user.archivefs.restore_expiry is the copy's
    expiry, and the default policy (raise) opens it."""
    archive.put_objects(bucket, {"r/x.txt": b"restored bytes"}, storage_class="GLACIER")
    mounted = mount_cli()
    assert "user.archivefs.restore_expiry" not in xattrs(mounted.root / "r/x.txt")
    run("setfattr", "-n", "user.archivefs.restore", "-v", "Expedited", mounted.root / "r/x.txt")
    found = xattrs(mounted.root / "r/x.txt")
    assert found["user.archivefs.state"] == "restored"
    assert found["user.archivefs.restore_expiry"].startswith("20")
    assert run("cat", mounted.root / "r/x.txt").stdout == "restored bytes"


def test_every_provider_mounts_lists_reads_and_refuses_archived(
    provider: Provider, tmp_path: Path
) -> None:
    """On each provider's emulator (S3/moto, Azurite, GCS, the Oracle fake, radosgw),
    mounted by ``archivefs.mount(fs=...)``: ls -lR, stat, cat and md5sum read the tree with
    no HEAD; an archived file's open fails with EACCES (nothing requested) and getfattr
    shows its class and state."""
    files = {"p/a.txt": b"alpha\n", "p/sub/b.bin": bytes(range(256)) * 300}
    seed_provider(provider, files, provider.spec.hot_class)
    cold = provider.spec.cold_class
    if cold is not None:
        seed_provider(provider, {"p/cold.txt": b"cold"}, cold)
    root = tmp_path / "mnt"
    root.mkdir()
    url = f"{provider.spec.protocol}://{provider.bucket}/p"
    with archivefs.mount(url, root, fs=provider.fs()) as mounted:
        provider.server.requests.clear()
        listing = run("ls", "-lR", mounted).stdout
        assert "a.txt" in listing
        assert "b.bin" in listing
        sizes = run("stat", "-c", "%s", mounted / "a.txt", mounted / "sub/b.bin").stdout.split()
        assert sizes == [str(len(files["p/a.txt"])), str(len(files["p/sub/b.bin"]))]
        assert request_counts(provider).get(provider.spec.head_op, 0) == 0
        assert run("cat", mounted / "a.txt").stdout == "alpha\n"
        digest = run("md5sum", mounted / "sub/b.bin").stdout.split()[0]
        assert digest == hashlib.md5(files["p/sub/b.bin"]).hexdigest()
        if cold is not None:
            done = run("cat", mounted / "cold.txt", check=False)
            assert "Permission denied" in done.stderr
            assert restore_requests(provider) == 0
            found = xattrs(mounted / "cold.txt")
            assert found["user.archivefs.state"] == "archived"
            assert found["user.archivefs.storage_class"] == cold
    assert not os.path.ismount(root)


def test_cache_rereads_send_no_get_survive_remounts_and_follow_changes(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """--cache: a file read whole is read again from disk (no GET), also by the next
    mount; a changed object (new ETag in the next listing) is fetched again, never served
    stale; a file read in part is not kept."""
    files = seed(archive, bucket)
    cache = tmp_path / "cache"
    mounted = mount_cli("--cache", str(cache), "--listing-ttl", "0")
    big = mounted.root / "data/b.bin"
    assert run("md5sum", big).stdout.split()[0] == hashlib.md5(files["data/b.bin"]).hexdigest()
    assert archive.requests.count("GET", key="data/b.bin") >= 1
    archive.requests.clear()
    run("cp", big, tmp_path / "again.bin")
    assert (tmp_path / "again.bin").read_bytes() == files["data/b.bin"]
    assert archive.requests.count("GET") == 0
    assert archive.requests.count("HEAD") == 0

    run(ARCHIVEFS, "unmount", mounted.root)
    mounted.process.wait(TIMEOUT)
    again = mount_cli("--cache", str(cache), "--listing-ttl", "0")
    archive.requests.clear()
    digest = run("md5sum", again.root / "data/b.bin").stdout.split()[0]
    assert digest == hashlib.md5(files["data/b.bin"]).hexdigest()
    assert archive.requests.count("GET", key="data/b.bin") == 0

    archive.put_objects(bucket, {"data/b.bin": b"changed\n"})
    archive.requests.clear()
    assert run("cat", again.root / "data/b.bin").stdout == "changed\n"
    assert archive.requests.count("GET", key="data/b.bin") == 1

    archive.put_objects(bucket, {"data/big.bin": b"b" * (4 << 20)})
    run("head", "-c", "3", again.root / "data/big.bin")
    # the kernel sends the close (release) after head exits: wait for its partial copy to go
    wait_for(lambda: not any(p.name.startswith(".partial-") for p in cache.iterdir()))
    kept = sorted(p.stat().st_size for p in cache.iterdir())
    # b.bin's two versions; big.bin, read in part, is not kept
    assert kept == sorted([len(files["data/b.bin"]), len(b"changed\n")])


def test_cache_keeps_a_file_once_read_whole_before_its_close(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """The kernel sends a file's close (release) after the program exits, so ``cat f;
    cat f`` can open f again first: the copy is kept once every byte was delivered, and
    the second read, with the first still open, sends no GET. 24 MiB: more than a
    shared open file keeps behind its reads, so without the copy this refetches."""
    body = os.urandom(24 << 20)
    archive.put_objects(bucket, {"big/f.bin": body})
    cache = tmp_path / "cache"
    mounted = mount_cli("--cache", str(cache))
    with open(mounted.root / "big/f.bin", "rb") as first:
        assert first.read() == body
        assert archive.requests.count("GET", key="big/f.bin") >= 1
        archive.requests.clear()
        digest = run("md5sum", mounted.root / "big/f.bin").stdout.split()[0]
        assert digest == hashlib.md5(body).hexdigest()
        assert archive.requests.count("GET") == 0
    wait_for(lambda: not any(p.name.startswith(".partial-") for p in cache.iterdir()))
    (kept,) = cache.iterdir()
    assert kept.read_bytes() == body


def test_cache_evicts_the_least_recently_used_file_beyond_its_size(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_objects(bucket, {"x/1": b"1" * 600_000, "x/2": b"2" * 600_000})
    cache = tmp_path / "cache"
    mounted = mount_cli("--cache", str(cache), "--cache-size", "1MB")
    run("cat", mounted.root / "x/1")
    run("cat", mounted.root / "x/2")  # 1.2 MB > 1 MB: x/1, used least recently, goes
    wait_for(lambda: "cache: evicted" in mounted.log())  # at the release, after cat exits
    (kept,) = cache.iterdir()
    assert kept.read_bytes() == b"2" * 600_000
    again = mount_cli("--cache", str(cache), "--cache-size", "1MB")  # a new process
    archive.requests.clear()
    run("cat", again.root / "x/2")
    assert archive.requests.count("GET") == 0
    run("cat", again.root / "x/1")
    assert archive.requests.count("GET", key="x/1") == 1


@pytest.mark.parametrize("provider", provider_params(skip=NO_RESTORES), indirect=True)
@pytest.mark.parametrize("policy", ["restore", "wait"])
def test_every_provider_batches_concurrent_archived_opens(
    provider: Provider, policy: str, tmp_path: Path
) -> None:
    """--on-archived restore and wait on each provider with restores: three concurrent
    opens of archived files are one restore call, each object restored once, in as few
    HTTP requests as the provider batches (an Azure Blob Batch: one); restore refuses
    with EACCES, wait reads the bytes once the server finished."""
    if policy == "wait":
        quick_restores(provider)
    else:
        hold_restores(provider)
    cold = seed_cold(provider, 3, prefix="p/c")
    root = tmp_path / "mnt"
    root.mkdir()
    fs = provider.fs(restore_time_scale=1 / 3600)
    url = f"{provider.spec.protocol}://{provider.bucket}/p"
    with archivefs.mount(url, root, fs=fs, on_archived=policy, batch_window=3) as mounted:
        paths = [mounted / path.split("/p/", 1)[1] for path in cold]
        run("stat", *paths)
        provider.server.requests.clear()
        done = cat_all(paths)
        if policy == "restore":
            assert all(b"Permission denied" in d.stderr for d in done), done
        else:
            assert [d.stdout for d in done] == [f"object {i}".encode() for i in range(3)], done
    assert sorted(restores_started(provider).values()) == [1, 1, 1]
    assert restore_calls(provider) == provider.spec.restore_calls(3)


def test_listings_answer_stat_until_their_ttl_then_are_listed_again(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """A directory's listing answers stat (a name it lacks: ENOENT, no request) for
    --listing-ttl seconds; after that the next stat lists it again and sees new objects."""
    archive.put_objects(bucket, {"l/a.txt": b"a"})
    root = tmp_path / "mnt"
    root.mkdir()
    options = archive.storage_options()
    with archivefs.mount(f"s3://{bucket}/l", root, storage_options=options, listing_ttl=8) as m:
        assert os.path.exists(m / "a.txt")
        archive.put_objects(bucket, {"l/b.txt": b"b"})
        archive.requests.clear()
        assert not os.path.exists(m / "b.txt")  # within the TTL: the listing says no
        assert archive.requests.count("LIST") == 0
        wait_for(lambda: os.path.exists(m / "b.txt"), timeout=60)
        assert archive.requests.count("LIST") >= 1
        assert archive.requests.count("HEAD") == 0


def test_max_cost_refuses_a_fee_charging_read_with_edquot(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """A class that reads at once for a retrieval fee (GLACIER_IR): the read goes through
    the filesystem's budget, so --max-cost 0 refuses it with EDQUOT before any byte is
    fetched, and the log says why."""
    archive.put_objects(bucket, {"ir/x.bin": b"x" * 10_000}, storage_class="GLACIER_IR")
    mounted = mount_cli("--max-cost", "0")
    run("stat", mounted.root / "ir/x.bin")
    archive.requests.clear()
    done = run("cat", mounted.root / "ir/x.bin", check=False)
    assert done.returncode == 1
    assert "Disk quota exceeded" in done.stderr
    assert archive.requests.bytes_sent("GET") == 0
    assert "budget" in mounted.log().lower()
    free = mount_cli()  # no budget: the same read is paid and served
    assert run("cat", free.root / "ir/x.bin").stdout == "x" * 10_000


def test_bundle_members_are_files_of_their_own_size_and_mtime_listed_from_the_catalog(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """ls -lR of 600 bundled files in 3 folders: each member a regular file with its own
    size and modification time (from the catalog); the store gets no request per member."""
    files = {
        f"g{d}/f{i:03d}.txt": f"{d}-{i}".encode() * (i + 1) for d in range(3) for i in range(200)
    }
    bundle(archive, bucket, tmp_path, files)
    when = int((tmp_path / "src/g1/f007.txt").stat().st_mtime)
    mounted = mount_cli()
    archive.requests.clear()
    listing = run("ls", "-lR", mounted.root / "b").stdout
    assert sum(".txt" in line for line in listing.splitlines()) == 600
    counts = archive.requests.per_op()
    # the catalog answers the listings (3 requests in all); each folder's listing asks the
    # state of the one bundle its members are in (1 HEAD per folder, none per member)
    assert counts == {"LIST": 1, "GET": 2, "HEAD": 3}, counts
    member = mounted.root / "b/g1/f007.txt"
    assert run("stat", "-c", "%s %Y %F", member).stdout.split() == [
        str(len(files["g1/f007.txt"])),
        str(when),
        "regular",
        "file",
    ]


# -- --writable ---------------------------------------------------------------------------


def fresh(archive: EmulatedArchive) -> archivefs.ArchiveFileSystem:
    """A new filesystem on the server (no listing cache)."""
    return archivefs.ArchiveFileSystem(
        target_options=archive.storage_options(), skip_instance_cache=True
    )


def listed(archive: EmulatedArchive, bucket: str, prefix: str) -> dict[str, dict[str, object]]:
    """A fresh listing of ``prefix`` at the server, by name."""
    entries = fresh(archive).ls(f"{bucket}/{prefix}", detail=True)
    return {e["name"].rstrip("/").rsplit("/", 1)[-1]: e for e in entries}


def upload_line(url: str, size: int, klass: str, provider: str = "s3") -> str:
    """The log line of one upload, with its cost from the provider's price sheet."""
    from archivefs.model import StorageClass
    from archivefs.pricing.amounts import format_amount
    from archivefs.pricing.estimate import write_cost
    from archivefs.pricing.sheet import load_price_sheet
    from archivefs.providers import PROVIDERS

    sheet = load_price_sheet(PROVIDERS[provider].price_sheet)
    cost = write_cost(sheet, StorageClass.parse(klass, provider=provider), size)
    return (
        f"uploaded {url} ({size} bytes) in {klass}: {format_amount(cost.requests, 'USD')} for "
        f"1 PUT request(s), {format_amount(cost.storage_per_month, 'USD')} a month of storage "
        f"(price sheet {sheet.name})"
    )


def test_writable_cp_uploads_once_in_the_storage_class_with_its_cost_in_the_log(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """`cp` into a --writable mount is one PUT, in --storage-class, once the file is
    closed; the log says what it costs; the closed file is the store's (archived: its
    open is EACCES, as any archived file's); `echo >`, mkdir and tar -x work as on a
    disk; no local copy outlives its upload."""
    seed(archive, bucket)
    mounted = mount_cli("--writable", "--storage-class", "GLACIER")
    data = os.urandom(300_000)
    (tmp_path / "local.bin").write_bytes(data)
    archive.requests.clear()
    run("cp", tmp_path / "local.bin", mounted.root / "data/new.bin")
    assert archive.requests.per_op().get("PUT") == 1, archive.requests.per_op()
    entry = listed(archive, bucket, "data")["new.bin"]
    assert (entry["size"], entry["storage_class"]) == (len(data), "GLACIER")
    url = f"s3://{bucket}/data/new.bin"
    assert upload_line(url, len(data), "GLACIER") in mounted.log()
    assert "GLACIER is an archive class: reading it back needs a restore" in mounted.log()
    wait_for(lambda: "Permission denied" in run("cat", mounted.root / "data/new.bin",
                                                 check=False).stderr)  # fmt: skip
    assert run("stat", "-c", "%s", mounted.root / "data/new.bin").stdout.strip() == str(len(data))
    run("mkdir", mounted.root / "made")
    run("sh", "-c", f"echo hello > {mounted.root / 'made/hi.txt'}")
    assert listed(archive, bucket, "made")["hi.txt"]["size"] == 6
    (tmp_path / "tree/t").mkdir(parents=True)
    (tmp_path / "tree/t/x.txt").write_bytes(b"x" * 10)
    run("tar", "-C", tmp_path / "tree", "-cf", tmp_path / "t.tar", "t")
    run("tar", "-C", mounted.root / "made", "-xf", tmp_path / "t.tar")
    assert set(listed(archive, bucket, "made")) == {"hi.txt", "t"}
    assert listed(archive, bucket, "made/t")["x.txt"]["size"] == 10
    assert archive.requests.per_op().get("PUT") == 3  # new.bin, hi.txt, x.txt: once each
    assert archive.requests.per_op().get("DELETE", 0) == 0
    copies = Path(mounted.log().split("local copies of open files in ")[1].split()[0])
    assert copies.stat().st_mode & 0o777 == 0o700
    wait_for(lambda: not list(copies.iterdir()))  # none outlives its upload (at release)
    mounted.process.send_signal(signal.SIGINT)
    assert mounted.process.wait(TIMEOUT) == 0
    assert not copies.exists()  # removed at unmount


def test_writable_defaults_to_the_hot_class_and_renames_what_it_wrote(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """Without --storage-class uploads are STANDARD; write-then-rename (as editors and
    rsync do) ends as one object under the new name: one upload each, one delete."""
    seed(archive, bucket)
    mounted = mount_cli("--writable")
    archive.requests.clear()
    run("sh", "-c", f"echo draft > {mounted.root / '.tmp.txt'} && "
        f"mv {mounted.root / '.tmp.txt'} {mounted.root / 'final.txt'}")  # fmt: skip
    names = listed(archive, bucket, "")
    assert ".tmp.txt" not in names
    assert names["final.txt"]["storage_class"] == "STANDARD"
    assert fresh(archive).cat(f"{bucket}/final.txt") == b"draft\n"
    counts = archive.requests.per_op()
    assert (counts.get("PUT"), counts.get("DELETE")) == (2, 1), counts
    assert run("cat", mounted.root / "final.txt").stdout == "draft\n"
    # dd writes a new file (one upload); truncate changes an object in place (its bytes
    # fetched whole, one upload); rm -r removes the files, then the emptied directory
    archive.requests.clear()
    run("dd", "if=/dev/zero", f"of={mounted.root / 'd/z.bin'}", "bs=4096", "count=10",
        check=False)  # fmt: skip
    assert "No such file or directory" in run("ls", mounted.root / "d", check=False).stderr
    run("mkdir", mounted.root / "d")
    run("dd", "if=/dev/zero", f"of={mounted.root / 'd/z.bin'}", "bs=4096", "count=10")
    assert listed(archive, bucket, "d")["z.bin"]["size"] == 40960
    run("truncate", "-s", "100", mounted.root / "d/z.bin")
    assert listed(archive, bucket, "d")["z.bin"]["size"] == 100
    assert archive.requests.per_op().get("PUT") == 2
    run("rm", "-r", mounted.root / "d")
    assert archive.requests.per_op().get("DELETE") == 1
    assert "d" not in run("ls", mounted.root).stdout.split()
    # an object the mount did not write is not renamed in place: mv copies and deletes
    archive.requests.clear()
    run("mv", mounted.root / "top.txt", mounted.root / "data/top.txt")
    assert "top.txt" not in listed(archive, bucket, "")
    assert fresh(archive).cat(f"{bucket}/data/top.txt") == b"top\n"
    assert "not written by this mount; not renamed in place" in mounted.log()


def test_writable_rm_deletes_with_one_request_but_never_a_member_or_early(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """rm is one DELETE; a bundle member and an object inside its class's minimum storage
    days are refused with EPERM (nothing sent), the log says why and the fix; with
    --allow-early-delete the early deletion goes ahead and the log says its charge."""
    seed(archive, bucket)
    bundle(archive, bucket, tmp_path, {"m1.txt": b"one", "m2.txt": b"two"})
    archive.put_objects(bucket, {"cold/young.bin": b"y" * 1000}, storage_class="GLACIER")
    mounted = mount_cli("--writable")
    archive.requests.clear()
    run("rm", mounted.root / "top.txt")
    assert archive.requests.per_op().get("DELETE") == 1
    assert "top.txt" not in listed(archive, bucket, "")
    archive.requests.clear()
    for name in ("b/m1.txt", "cold/young.bin"):
        done = run("rm", "-f", mounted.root / name, check=False)
        assert "Operation not permitted" in done.stderr, done.stderr
    assert "DELETE" not in archive.requests.per_op()
    log = mounted.log()
    assert "b/m1.txt: a member of bundle" in log
    assert "cold/young.bin: in GLACIER for 0.0 of its 90 minimum days; not deleted" in log
    assert "--allow-early-delete" in log
    allowed = mount_cli("--writable", "--allow-early-delete")
    archive.requests.clear()
    run("rm", allowed.root / "cold/young.bin")
    assert archive.requests.per_op().get("DELETE") == 1
    assert "of early deletion billed (--allow-early-delete)" in allowed.log()


def test_writable_storage_class_is_checked_before_mounting(tmp_path: Path) -> None:
    """A class the provider does not have is a usage error (exit 2) naming its classes."""
    done = run(ARCHIVEFS, "mount", "az://c/p", tmp_path, "--writable", "--storage-class",
               "GLACIER", check=False)  # fmt: skip
    assert done.returncode == 2
    assert "unknown azure storage class 'GLACIER'" in done.stderr
    assert "Hot, Cool, Cold, Archive" in done.stderr


def test_every_provider_uploads_a_written_file_in_the_mounts_class(
    provider: Provider, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """On each provider (S3/moto, Azurite, GCS, the Oracle fake, radosgw), mounted with
    ``archivefs.mount(writable=True, storage_class=...)``: `cp` is one upload, the object
    at the server is in that class (an archive or fee class where the provider has one),
    the log gives its cost; rm of a hot object is one delete; rm of the new object,
    inside its class's minimum days, is refused with EPERM."""
    caplog.set_level("INFO", logger="archivefs.mount")
    spec = provider.spec
    klass = spec.chunk_class if spec.restores or spec.fee_class else spec.hot_class
    seed_provider(provider, {"p/old.txt": b"old"}, spec.hot_class)
    data = os.urandom(200_000)
    (tmp_path / "local.bin").write_bytes(data)
    root = tmp_path / "mnt"
    root.mkdir()
    url = f"{spec.protocol}://{provider.bucket}/p"
    with archivefs.mount(url, root, fs=provider.fs(), writable=True, storage_class=klass) as mnt:
        provider.server.requests.clear()
        run("cp", tmp_path / "local.bin", mnt / "new.bin")
        counts = request_counts(provider)
        assert counts.get(spec.put_op) == spec.put_requests, counts  # one upload
        entries = {e["name"].rsplit("/", 1)[-1]: e for e in provider.fs().ls(url, detail=True)}
        assert entries["new.bin"]["size"] == len(data)
        assert entries["new.bin"]["storage_class"] == klass
        assert upload_line(f"{url}/new.bin", len(data), klass, _sheet_provider(spec.name)) in (
            caplog.text
        )
        provider.server.requests.clear()
        run("rm", mnt / "old.txt")
        assert request_counts(provider).get(spec.delete_op) == 1
        if klass != spec.hot_class:  # a class with minimum storage days
            done = run("rm", mnt / "new.bin", check=False)
            assert "Operation not permitted" in done.stderr
            assert "bills" in caplog.text
            assert "of early deletion" in caplog.text
    assert not os.path.ismount(root)


def _sheet_provider(name: str) -> str:
    return "s3" if name == "rgw" else name


def test_writable_xarray_to_netcdf_on_the_mount_is_uploaded_once(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str
) -> None:
    """xarray's ``to_netcdf`` of a path on a --writable mount (HDF5: random writes, reads
    of what it wrote, several opens) ends as one object, uploaded once, that reads back."""
    pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    seed(archive, bucket)
    mounted = mount_cli("--writable")
    archive.requests.clear()
    path = mounted.root / "data/out.nc"
    script = (
        "import sys, numpy, xarray; "
        "xarray.Dataset({'temp': (('x',), numpy.arange(1000.0))})"
        ".to_netcdf(sys.argv[1], engine='h5netcdf')"
    )
    run(sys.executable, "-c", script, path)
    assert archive.requests.per_op().get("PUT") == 1, archive.requests.per_op()
    uploaded = fresh(archive).cat(f"{bucket}/data/out.nc")
    assert uploaded[:8] == b"\x89HDF\r\n\x1a\n"
    assert listed(archive, bucket, "data")["out.nc"]["size"] == len(uploaded)
    reader = (
        "import sys, xarray; "
        "print(float(xarray.open_dataset(sys.argv[1], engine='h5netcdf').temp.sum()))"
    )
    assert run(sys.executable, "-c", reader, path).stdout.strip() == "499500.0"


def test_writable_upload_above_max_cost_fails_the_close_with_edquot_and_keeps_the_copy(
    mount_cli: Callable[..., Mounted], archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """An upload whose PUT does not fit --max-cost is not sent: the program's close()
    fails with EDQUOT, the log says why; at unmount the unsent copy is kept and named."""
    seed(archive, bucket)
    mounted = mount_cli("--writable", "--max-cost", "0")
    (tmp_path / "local.txt").write_bytes(b"precious\n")
    archive.requests.clear()
    done = run("cp", tmp_path / "local.txt", mounted.root / "kept.txt", check=False)
    assert "Disk quota exceeded" in done.stderr, done.stderr
    assert "PUT" not in archive.requests.per_op()
    assert "an upload of 9 bytes into STANDARD" in mounted.log()
    mounted.process.send_signal(signal.SIGINT)
    assert mounted.process.wait(TIMEOUT) == 0
    copies = Path(mounted.log().split("local copies of open files in ")[1].split()[0])
    assert f"not uploaded (their last upload failed): s3://{bucket}/kept.txt" in mounted.log()
    assert [p.read_bytes() for p in copies.iterdir()] == [b"precious\n"]
    shutil.rmtree(copies)
