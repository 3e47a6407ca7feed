"""A run directory on a network file system gets a note: its locks are not to be trusted."""

from __future__ import annotations

from pathlib import Path

from opt_suite.store import filesystems
from opt_suite.store.filesystems import filesystem_type, shared_filesystem_note

# /proc/self/mountinfo lines: id, parent, dev, root, mount point, options ... - type source opts
MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /home rw,relatime shared:2 - nfs4 server:/home rw,vers=4.2
41 40 0:36 / /home/me/scratch\\040space rw shared:3 - lustre 10.0.0.1@tcp:/scratch rw,flock
42 22 0:37 / /tmp rw shared:4 - tmpfs tmpfs rw
"""


def test_the_longest_mount_point_names_the_type():
    assert filesystem_type(Path("/home/me/runs/a"), MOUNTINFO) == "nfs4"
    assert filesystem_type(Path("/home/me/scratch space/x"), MOUNTINFO) == "lustre"
    assert filesystem_type(Path("/tmp/x"), MOUNTINFO) == "tmpfs"
    assert filesystem_type(Path("/var/lib"), MOUNTINFO) == "ext4"
    assert filesystem_type(Path("/homely"), MOUNTINFO) == "ext4"  # a prefix of parts, not text


def test_a_directory_on_nfs_gets_one_note_and_a_local_one_none(tmp_path, monkeypatch):
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(MOUNTINFO)
    monkeypatch.setattr(filesystems, "MOUNTINFO", mountinfo)
    note = shared_filesystem_note(Path("/home/me/runs/a"))
    assert note is not None and len(note.splitlines()) == 1
    assert note.startswith("note: /home/me/runs/a is on nfs4, where SQLite's and flock's locks")
    assert "never two on the same --out" in note
    assert shared_filesystem_note(Path("/tmp/x")) is None
    monkeypatch.setattr(filesystems, "MOUNTINFO", tmp_path / "absent")
    assert shared_filesystem_note(Path("/home/me/runs/a")) is None
