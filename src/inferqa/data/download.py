"""`inferqa download`: the QUIT, TriviaHG and WikiHint dataset repositories from the hub.

Files are fetched as the hub holds them (the QUIT release's `.zsd` stay compressed: every
reader opens them). huggingface_hub shows the progress and resumes: an interrupted download
stays in `.<out>.partial` beside `--out` and goes on from there next time; `--out` appears,
renamed from it, only once every file is in. Offline (`HF_HUB_OFFLINE`, or an endpoint that
does not answer within a few seconds) it stops at once with one line, before anything is
written.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from ..errors import InputError
from ..io import check_output
from ..models import connect_failure, env_on

PROBE_TIMEOUT_S = 3.0
ETAG_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Source:
    repo_id: str
    patterns: dict[str, list[str] | None]  # --what -> allow_patterns (None: the whole repository)


# QUIT's files sit under results/ (results/dataset/ the three splits); the two hint sets are
# dataset repositories of their own, with no results folder.
SOURCES = {
    "quit": Source("JamshidJDMY/InferentialQA",
                   {"dataset": ["results/dataset/**"], "results": ["results/**"], "all": None}),
    "triviahg": Source("JamshidJDMY/TriviaHG", {"dataset": None, "all": None}),
    "wikihint": Source("JamshidJDMY/WikiHint", {"dataset": None, "all": None}),
}


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def _proxy_for(url: str) -> str | None:
    scheme = urlsplit(url).scheme
    host = urlsplit(url).hostname or ""
    no_proxy = os.environ.get("no_proxy", os.environ.get("NO_PROXY", ""))
    if any(host == h.strip().lstrip(".") or host.endswith("." + h.strip().lstrip("."))
           for h in no_proxy.split(",") if h.strip()):
        return None
    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY"):
        if os.environ.get(name):
            return os.environ[name]
    return None


def check_online(url: str | None = None, timeout: float = PROBE_TIMEOUT_S) -> None:
    """InputError at once when downloads are switched off or `url`'s host (or the proxy in
    between) takes no connection within `timeout` seconds."""
    url = url or endpoint()
    if env_on("HF_HUB_OFFLINE"):
        raise InputError(f"offline (HF_HUB_OFFLINE is set): cannot download from {url}; unset it to download")
    target = _proxy_for(url) or url
    parts = urlsplit(target if "://" in target else f"http://{target}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    reason = connect_failure(parts.hostname or "", port, timeout)
    if reason is not None:
        via = f" through proxy {target}" if target != url else ""
        raise InputError(f"offline: cannot reach {url}{via} ({reason})")


def partial_dir(out: Path) -> Path:
    return out.with_name(f".{out.name}.partial")


def download(name: str, what: str, out: str | os.PathLike,
             on_start: Callable[[str], None] | None = None) -> tuple[Path, int]:
    """Fetch source `name`'s `what` into `out`; returns (out, number of files). `on_start` gets
    a line to show once the checks passed and the transfer begins."""
    if name not in SOURCES:
        raise InputError(f"unknown source {name!r} (use {', '.join(SOURCES)})", field="source")
    source = SOURCES[name]
    if what not in source.patterns:
        raise InputError(f"{name} has no {what!r} part (use {' or '.join(source.patterns)})", field="what")
    out = check_output(Path(out), kind="dir")
    if out.exists():
        raise InputError("already exists (downloads go to a new folder; delete it or choose another)",
                         file=out, field="out")
    partial = check_output(partial_dir(out), kind="dir")
    check_online()
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError
    except ImportError:
        raise InputError("downloading needs huggingface_hub (pip install 'inferqa[hub]')") from None
    partial.parent.mkdir(parents=True, exist_ok=True)
    if on_start is not None:
        resumed = " (resuming)" if partial.exists() else ""
        on_start(f"downloading {source.repo_id} ({what}){resumed} into {partial}, renamed {out} when complete")
    try:
        snapshot_download(source.repo_id, repo_type="dataset", allow_patterns=source.patterns[what],
                          local_dir=partial, etag_timeout=ETAG_TIMEOUT_S)
    except RepositoryNotFoundError:
        _drop_if_empty(partial)
        raise InputError(f"dataset repository {source.repo_id} not found on {endpoint()}") from None
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        kept = "" if _drop_if_empty(partial) else f"; run the same command again to resume from {partial}"
        raise InputError(f"download of {source.repo_id} stopped ({first}){kept}") from None
    if _drop_if_empty(partial):
        raise InputError(f"{source.repo_id}: nothing matched {source.patterns[what]}", field="what")
    n = len(_files(partial))
    os.replace(partial, out)
    return out, n


def _files(folder: Path) -> list[Path]:
    """The downloaded files under `folder` (huggingface_hub's .cache bookkeeping left out)."""
    return [p for p in folder.rglob("*") if p.is_file() and ".cache" not in p.relative_to(folder).parts]


def _drop_if_empty(partial: Path) -> bool:
    """Remove a partial folder that holds no downloaded file yet; True if it went."""
    if partial.exists() and not _files(partial):
        shutil.rmtree(partial, ignore_errors=True)
        return True
    return not partial.exists()
