"""Run one function over many items in batches, here or on a Ray cluster, with the same outputs.

`make_worker()` is called once per process (once here, once per Ray actor) and returns the
batch function, so a model is loaded once per actor and not once per batch. Outputs come
back in input order on both backends; items are streamed, so a 2.4M-item iterable never
has to be a list.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import pickle
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..defaults import BACKEND, NUM_ACTORS
from ..errors import InputError
from ..progress import counter

BACKENDS = ("local", "ray")
Worker = Callable[[list], Sequence]
WorkerFactory = Callable[[], Worker]


def check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r} (choose one of: {', '.join(BACKENDS)})", field="backend")
    return backend


@dataclass(frozen=True)
class Executor:
    """Where a stage's batch jobs run: here (`local`) or on a pool of Ray actors (`ray`).

    Stages take one as a parameter (`Reranker.rerank(..., executor=)`,
    `Retriever.index(..., executor=)`) instead of carrying Ray options of their own."""

    backend: str = BACKEND.default
    ray_address: str | None = None
    num_actors: int = NUM_ACTORS.default
    num_cpus_per_actor: float = 1
    num_gpus_per_actor: float = 0

    def __post_init__(self) -> None:
        check_backend(self.backend)
        if self.num_actors < 1:
            raise InputError(f"num_actors must be at least 1, got {self.num_actors}", field="num_actors")

    @property
    def is_local(self) -> bool:
        return self.backend == "local"

    def imap(self, items: Iterable, make_worker: "WorkerFactory", **options: Any) -> Iterator[Any]:
        """`imap_batches` on this executor (`options`: batch_size, desc, progress, ...)."""
        return imap_batches(items, make_worker, backend=self.backend, num_actors=self.num_actors,
                            ray_address=self.ray_address, num_cpus_per_actor=self.num_cpus_per_actor,
                            num_gpus_per_actor=self.num_gpus_per_actor, **options)


LOCAL = Executor()


def _batched(items: Iterable, size: int) -> Iterator[list]:
    it = iter(items)
    while batch := list(itertools.islice(it, size)):
        yield batch


def _checked(batch: list, out: Sequence) -> Sequence:
    if len(out) != len(batch):
        raise RuntimeError(f"worker returned {len(out)} outputs for a batch of {len(batch)} items")
    return out


def imap_batches(items: Iterable, make_worker: WorkerFactory, *, backend: str = BACKEND.default, batch_size: int = 32,
                 num_actors: int = NUM_ACTORS.default, ray_address: str | None = None, num_cpus_per_actor: float = 1,
                 num_gpus_per_actor: float = 0, window: int = 65_536, progress: bool = True, desc: str = "map",
                 total: int | None = None) -> Iterator[Any]:
    """Yield `worker(batch)` outputs one item at a time, in input order.

    On Ray, items go out in windows of `window` items (one Ray Data pipeline each, its
    actor pool loading the model once per actor), so the driver never holds more than a
    window of inputs and outputs.
    """
    check_backend(backend)
    if batch_size < 1 or num_actors < 1:
        raise InputError("batch_size and num_actors must be at least 1", field="batch_size")
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    # here the worker (its model) is built before the bar shows, so a load failure comes alone
    worker = make_worker() if backend == "local" else None
    with counter(total, desc, "item", progress, dynamic_ncols=True) as bar:
        if backend == "local":
            for batch in _batched(items, batch_size):
                for out in _checked(batch, worker(batch)):
                    bar.update(1)  # before the yield: a caller that stops at the last item still sees 100 %
                    yield out
            return
        ensure_ray(ray_address)
        for chunk in _batched(items, max(window, batch_size)):
            try:
                for out in _ray_window(chunk, make_worker, batch_size=batch_size, num_actors=num_actors,
                                       num_cpus=num_cpus_per_actor, num_gpus=num_gpus_per_actor):
                    bar.update(1)
                    yield out
            except Exception as exc:
                raise unwrap_input_error(exc) from None


def map_batches(items: Iterable, make_worker: WorkerFactory, **options: Any) -> list:
    """`list(imap_batches(...))`: every output, in input order."""
    return list(imap_batches(items, make_worker, **options))


def unwrap_input_error(exc: BaseException) -> BaseException:
    """The InputError a Ray worker raised, if one is in the chain (so the CLI prints one
    line), else the exception itself."""
    seen, cur = set(), exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, InputError) and getattr(cur, "cause", None) is None:
            return cur
        seen.add(id(cur))
        cur = getattr(cur, "cause", None) or cur.__cause__ or cur.__context__
    return exc


def ensure_ray(address: str | None = None) -> None:
    """Connect to `address` (`auto`, `ray://host:10001`, ...) or start a local Ray, once."""
    try:
        import ray
    except ImportError:
        raise InputError("the ray backend needs Ray: pip install 'inferqa[ray]'", field="backend") from None
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    if ray.is_initialized():
        return
    ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)


class _RaisedInputError(tuple):
    def error(self) -> InputError:
        message, file, record, field = self
        return InputError(message, file=file, record=record, field=field)


def load_failure(exc: Exception) -> InputError:
    """A worker's failure to build its model, as the one-line error the command ends with."""
    if isinstance(exc, InputError):
        return exc
    return InputError(f"a Ray worker could not load its model: {type(exc).__name__}: {exc}")


class _RayActor:
    """One per Ray actor: builds the worker once, then maps pickled batches."""

    def __init__(self, factory_blob: bytes):
        from ray import cloudpickle

        self.worker, self.failed = None, None
        try:
            self.worker = cloudpickle.loads(factory_blob)()
        except Exception as exc:
            # Raised here, Ray Data would start the actor again and again and the command
            # would wait without a word: the error goes back with the first batch instead.
            self.failed = load_failure(exc)

    def __call__(self, batch: dict) -> dict:
        import numpy as np

        items = [pickle.loads(b) for b in batch["blob"]]
        try:
            if self.failed is not None:
                raise self.failed
            outs = _checked(items, self.worker(items))
        except InputError as exc:
            # Ray Data re-raises worker errors as its own type without the cause: send the
            # InputError back as data so the caller gets it whole.
            outs = [_RaisedInputError((exc.message, exc.file, exc.record, exc.field))] * len(items)
        blobs = np.array([pickle.dumps(o, protocol=pickle.HIGHEST_PROTOCOL) for o in outs], dtype=object)
        return {"idx": batch["idx"], "blob": blobs}


def _ray_window(chunk: list, make_worker: WorkerFactory, *, batch_size: int, num_actors: int,
                num_cpus: float, num_gpus: float) -> Iterator[Any]:
    import ray.data
    from ray import cloudpickle

    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    rows = [{"idx": i, "blob": pickle.dumps(x, protocol=pickle.HIGHEST_PROTOCOL)} for i, x in enumerate(chunk)]
    ds = ray.data.from_items(rows, override_num_blocks=max(1, min(len(rows) // batch_size, 4 * num_actors)))
    ds = ds.map_batches(_RayActor, fn_constructor_kwargs={"factory_blob": cloudpickle.dumps(make_worker)},
                        batch_size=batch_size, batch_format="numpy", num_cpus=num_cpus, num_gpus=num_gpus or None,
                        compute=ray.data.ActorPoolStrategy(size=num_actors))
    # preserve_order should already deliver rows in order; the heap makes it a guarantee.
    pending: list[tuple[int, bytes]] = []
    want = 0
    for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
        for i, blob in zip(batch["idx"], batch["blob"]):
            heapq.heappush(pending, (int(i), blob))
        while pending and pending[0][0] == want:
            out = pickle.loads(heapq.heappop(pending)[1])
            if isinstance(out, _RaisedInputError):
                raise out.error()
            yield out
            want += 1
    if want != len(chunk):
        raise RuntimeError(f"Ray returned {want} of {len(chunk)} outputs")
