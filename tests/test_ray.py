"""The Ray backend computes what the local backend computes: one local Ray instance, started
here for the whole module (about 10 s), on a small benchmark built from the demo data."""

from __future__ import annotations

import importlib.util
import sys
import zlib

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'inferqa[ray]'): Ray backend untested")

from inferqa.errors import InputError  # noqa: E402
from inferqa.reading import Reader  # noqa: E402
from inferqa.reranking import rerank_run  # noqa: E402
from inferqa.scale import Executor, RayLLM, generate, load_scaled_llm, map_batches  # noqa: E402

from test_scale import HashLLM, first_run, small_bench  # noqa: E402,F401  (fixture reused)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def ray_session():
    # Test-local classes (HashLLM) travel to the actors by value: workers cannot import tests/.
    ray.cloudpickle.register_pickle_by_value(sys.modules["test_scale"])
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def square_worker():
    import os

    pid = os.getpid()
    return lambda batch: [(x * x, pid) for x in batch]


def test_map_batches_ray_equals_local_across_windows():
    local = map_batches(range(57), square_worker, batch_size=4, progress=False)
    remote = map_batches(range(57), square_worker, backend="ray", batch_size=4, num_actors=2, window=30,
                         progress=False)
    assert [x for x, _ in remote] == [x for x, _ in local] == [i * i for i in range(57)]


def test_worker_input_error_reaches_the_caller_as_input_error():
    def make():
        def worker(batch):
            raise InputError("passage text is empty", record=batch[0], field="text")

        return worker

    with pytest.raises(InputError, match="passage text is empty") as info:
        map_batches(["p1", "p2"], make, backend="ray", batch_size=2, progress=False)
    assert info.value.field == "text"


def test_rerank_ray_equals_local(small_bench):
    run = first_run(small_bench)
    opts = {"llm": HashLLM()}
    local = rerank_run(run, small_bench.path, "llm-pointwise", depth=4, options=opts, progress=False)
    remote = rerank_run(run, small_bench.path, "llm-pointwise", depth=4, options=opts,
                        executor=Executor("ray", num_actors=2), progress=False)
    assert remote == local and remote.tag == local.tag
    assert list(remote) == list(run)


def test_reader_and_generate_through_ray_equal_local(small_bench, tmp_path):
    items = [(q.text, [h.text for h in q.hints[:2]]) for q in small_bench.questions.values()]
    expected = Reader(HashLLM()).read_batch(items)
    proxy = RayLLM(HashLLM, num_actors=2)
    try:
        assert proxy.identity == "fake:hash" and proxy.mode == "chat"
        assert Reader(proxy).read_batch(items) == expected
        pairs = [("prompt one", " yes"), ("prompt two", " no"), ("prompt three", " yes")]
        assert proxy.logprobs(pairs) == [HashLLM().logprob(p, c) for p, c in pairs]
    finally:
        proxy.close()
    prompts = [f"Question {i}: what?" for i in range(9)]
    assert generate(HashLLM, prompts, backend="ray", num_actors=2, batch_size=2, progress=False) == \
        HashLLM().complete(prompts) == generate(HashLLM, prompts, progress=False)


class GoldOrNotLLM(HashLLM):
    """Answers a question's gold answer for about half of the contexts, else a wrong one."""

    def __init__(self, golds: dict[str, str]):
        self.golds = golds

    def chat(self, conversations, params=None):
        outs = []
        for c in conversations:
            turn = c[-1]["content"]
            gold = next((a for q, a in self.golds.items() if q in turn), "nobody")
            outs.append(gold if zlib.crc32(turn.encode()) % 2 else "Nobody Knows Me")
        return outs


def test_labelling_through_ray_equals_local(tmp_path):
    import shutil

    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions
    from inferqa.label import label_benchmark

    questions = load_questions(demo_path())[:3]
    golds = {q.text: q.answers[0] for q in questions}
    build_benchmark(questions, tmp_path / "local", top_k=3, split=(0.5, 0.0, 0.5))  # 3 × 15 passages
    shutil.copytree(tmp_path / "local", tmp_path / "ray")
    label_benchmark(tmp_path / "local", [GoldOrNotLLM(golds)], progress=False)
    proxy = RayLLM(lambda: GoldOrNotLLM(golds), num_actors=2)
    try:
        label_benchmark(tmp_path / "ray", [proxy], progress=False)
    finally:
        proxy.close()
    local, remote = Benchmark(tmp_path / "local").qrels, Benchmark(tmp_path / "ray").qrels
    assert remote == local
    assert {lab for docs in local.values() for lab in docs.values()} == {1, 2}  # both outcomes occur
    assert (tmp_path / "ray" / "labels.jsonl").read_text() == (tmp_path / "local" / "labels.jsonl").read_text()


@pytest.mark.llm
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_real_smollm2_reader_ray_equals_local(small_bench, tmp_path):
    # Three short reader prompts over two actors (slices of 2 and 1): the llama-cpp backend
    # cuts each prompt's evaluation by its content (few-shot head, then the rest), so a
    # prompt's greedy answer is the same in any batch, alone and on any actor.
    items = [(q.text, [q.hints[0].text]) for q in list(small_bench.questions.values())[:3]]
    local_llm = load_scaled_llm("smollm2", cache=None)
    local = [o.raw for o in Reader(local_llm).read_batch(items)]
    assert Reader(local_llm).read_batch(items[1:2])[0].raw == local[1]
    local_llm.close()
    scaled = load_scaled_llm("smollm2", backend="ray", num_actors=2, cache=tmp_path / "llm.sqlite")
    try:
        assert [o.raw for o in Reader(scaled).read_batch(items)] == local
        # the driver-side cache answers a repeat without touching the actors
        again = Reader(scaled).read_batch(items)
        assert [o.raw for o in again] == local and scaled.stats.hits == len(items)
    finally:
        scaled.close()


def test_cli_dense_index_on_ray_equals_local(tmp_path):
    from typer.testing import CliRunner

    from inferqa.construct import build_benchmark
    from inferqa.cli import app
    from inferqa.data import demo_path, load_questions

    bench = tmp_path / "b3"
    build_benchmark(load_questions(demo_path())[:2], bench, top_k=3, split=(0.5, 0.0, 0.5))  # 2 × 15 passages
    runner = CliRunner()
    for backend, idx in (("local", "idx-local"), ("ray", "idx-ray")):
        res = runner.invoke(app, ["index", str(bench), "--retriever", "dense", "--backend", backend,
                                  "--num-actors", "1", "--index-dir", str(tmp_path / idx)])
        assert res.exit_code == 0, res.output
    local, remote = (np.load(tmp_path / d / "embeddings.npy") for d in ("idx-local", "idx-ray"))
    assert local.shape == (30, 384)
    np.testing.assert_allclose(remote, local, atol=1e-5)


def test_actor_that_cannot_load_its_model_fails_the_call_with_its_error():
    def make():
        raise OSError("no file named model.safetensors in /models/x")

    # Ray Data would restart such an actor without end; the error comes back with the first batch
    with pytest.raises(InputError, match="could not load its model: OSError: no file named model.safetensors"):
        map_batches(list(range(6)), make, backend="ray", batch_size=2, num_actors=2, progress=False)

    def llm():
        raise OSError("weights not found: /models/y.gguf")

    with pytest.raises(InputError, match="could not load its model: OSError: weights not found: /models/y.gguf"):
        RayLLM(llm, num_actors=1)
