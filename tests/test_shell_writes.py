"""The shell reader: which paths a command writes, before it runs."""

from __future__ import annotations

from git_lacunari.shell_writes import Write, write_targets


def test_write_targets_reading() -> None:
    assert write_targets("echo hi>out.txt && sed -i -e 's/a/b/' f1 'f 2'", "/r") == [
        Write("/r/out.txt", False),
        Write("/r/f1", False),
        Write("/r/f 2", False),
    ]
    assert write_targets("cat <<EOF > gen.py\nrm -rf everything\nEOF", "/r") == [
        Write("/r/gen.py", False)
    ]
    assert write_targets('echo $HOME > "$OUT"; rm `x`', "/r") == []
    assert write_targets("echo 'unbalanced", "/r") == []
