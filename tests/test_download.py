"""`inferqa download` without a network: one line, exit 2, nothing written (tests never
download; a hang is stopped by the subprocess timeout)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inferqa", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("env", [{"HF_HUB_OFFLINE": "1"},
                                 {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "http://127.0.0.1:9"}])
def test_download_offline_fails_in_one_line(tmp_path, env):
    done = cli("download", "quit", "--what", "results", "--out", str(tmp_path / "quit"), env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "offline" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # neither --out nor a partial folder beside it


def test_download_refuses_bad_arguments_before_any_network(tmp_path):
    (tmp_path / "there").mkdir()
    for args, message in ((("download", "wikihint", "--what", "results", "--out", str(tmp_path / "w")), "no 'results'"),
                          (("download", "squad", "--out", str(tmp_path / "s")), "unknown source"),
                          (("download", "quit", "--out", str(tmp_path / "there")), "already exists")):
        done = cli(*args, env={"HF_HUB_OFFLINE": "1"})
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and message in done.stderr


def test_download_renames_the_partial_folder_only_when_complete(tmp_path, monkeypatch):
    """huggingface_hub replaced by a fake that writes into local_dir (and fails once midway)."""
    import huggingface_hub

    from inferqa.data import download as dl
    from inferqa.errors import InputError

    calls = []

    def fake(repo_id, *, repo_type, allow_patterns, local_dir, etag_timeout):
        calls.append((repo_id, repo_type, allow_patterns))
        (Path(local_dir) / "results/dataset").mkdir(parents=True, exist_ok=True)
        (Path(local_dir) / "results/dataset/train.zsd").write_bytes(b"\x28\xb5\x2f\xfd")
        if len(calls) == 1:
            raise OSError("connection reset")
        (Path(local_dir) / "results/dataset/test.zsd").write_bytes(b"\x28\xb5\x2f\xfd")

    monkeypatch.setattr(dl, "check_online", lambda: None)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    out = tmp_path / "quit"
    with pytest.raises(InputError, match="resume from"):
        dl.download("quit", "dataset", out)
    assert not out.exists() and (tmp_path / ".quit.partial/results/dataset/train.zsd").exists()
    assert dl.download("quit", "dataset", out) == (out, 2)
    assert sorted(p.name for p in (out / "results/dataset").iterdir()) == ["test.zsd", "train.zsd"]
    assert not (tmp_path / ".quit.partial").exists()
    assert calls == [("JamshidJDMY/InferentialQA", "dataset", ["results/dataset/**"])] * 2
