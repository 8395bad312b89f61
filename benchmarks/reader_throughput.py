"""Reader throughput, naive vs optimised, on every LLM backend, with the same prompts.

Every reader prompt starts with the same instruction and five demonstrations (its head).
  llama-cpp     naive: context reset, every block of every prompt evaluated, one
                prompt at a time (prefix_reuse=false, parallel=1)
                optimised: the defaults: the longest block prefix kept (trie reuse), the
                rest evaluated, blocks without logits, one prompt at a time
                read shape: `inferqa read`'s own workload (per question both unions at
                k = 1, 3, 5 over five ranked passages, asked once each, in trie order),
                head reuse (reuse_scope=head) against trie reuse, one prompt at a time
  transformers  naive: one `generate` per whole prompt (batch_size=1, prefix_reuse=false)
                optimised: batches of --batch-size rests on the head's KV cache
  openai        naive: one request at a time, in the caller's order
                optimised: --concurrency requests in flight, sorted so heads hit the
                server's prefix cache; against llama.cpp's llama-server with
                --concurrency slots (scripts/build_llama_server.sh) and against
                llama-cpp-python's one-slot server (--server picks)
Each of --rounds rounds loads fresh models (the optimised path pays for its head every
round); within a round the two paths' calls alternate (llama-cpp: 4 prompts a call; naive
first in odd rounds), so a machine shared with other jobs, or one whose speed drifts within
minutes, slows both alike. Answers are greedy and must agree.

The transformers side runs SmolLM2 itself: the bundled GGUF is converted once into a
transformers folder (needs `pip install gguf accelerate`; skipped with a message if absent).

    python benchmarks/reader_throughput.py [--backends llama-cpp,transformers,openai]
        [--n 16] [--k 3] [--read-questions 8] [--rounds 2] [--threads 1] [--batch-size 8] [--concurrency 4]
        [--server both]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path
from typing import Callable

from inferqa.data import demo_path, load_questions
from inferqa.llm import GenerationParams, load_llm
from inferqa.reading import Reader, union_freq, union_norm
from inferqa.reading.prompts import chat_messages
from inferqa.reading.reader import reading_order

STEP = 4  # llama-cpp: prompts per timed call; the paths' calls alternate
WARM_UP = [[{"role": "user", "content": "Say hello."}]]  # shares no head with reader prompts


def prompts_from_demo(n: int, k: int) -> list[tuple[str, list[str]]]:
    """n demo questions; context = union of k passages over the top-5 hints (three orderings)."""
    items = []
    for q in load_questions(demo_path())[:n]:
        hints = [h.text for h in sorted(q.hints, key=lambda h: -(h.convergence or 0))[:5]]
        passages = [hints, hints[::-1], hints[1:] + hints[:1]][:k]
        items.append((q.text, union_norm(passages)))
    return items


# a ranked list of five passages, as hint positions among a question's top 5 (a retriever's
# top 5 over one question's family of passages)
READ_PASSAGES = ((0, 1), (1, 2, 0), (3,), (0, 4, 2), (2, 3))


def read_shaped(n: int) -> list[tuple[str, list[str]]]:
    """The prompts `inferqa read` asks for n demo questions, strategies union_norm and
    union_freq at k = 1, 3, 5: distinct prompts once each, in its (trie) order."""
    items: dict[tuple[str, tuple[str, ...]], None] = {}
    for q in load_questions(demo_path())[:n]:
        hints = [h.text for h in sorted(q.hints, key=lambda h: -(h.convergence or 0))[:5]]
        passages = [[hints[i] for i in p if i < len(hints)] for p in READ_PASSAGES]
        for merge in (union_norm, union_freq):
            for k in (1, 3, 5):
                items.setdefault((q.text, tuple(merge(passages[:k]))), None)
    keys = list(items)
    return [(keys[i][0], list(keys[i][1])) for i in reading_order(keys)]


def interleaved(rounds: int, make: dict[str, Callable[[], list[Callable[[], list[str]]]]]) -> dict[str, list]:
    """For each round, `make[path]()` builds every path's fresh runner outside the clock: a
    list of steps (calls of a few prompts each). The paths' steps then alternate (which path
    goes first alternates by round), each timed, so a machine whose speed drifts within
    minutes slows every path alike. Returns path -> [wall s, CPU s of this process, answers
    per round]; models run in process on one thread."""
    out: dict[str, list] = {p: [0.0, 0.0, []] for p in make}
    for r in range(rounds):
        order = list(make) if r % 2 == 0 else list(make)[::-1]
        steps = {path: make[path]() for path in order}
        spent = {path: [0.0, 0.0, []] for path in order}
        for i in range(max(len(s) for s in steps.values())):
            for path in order:
                if i < len(steps[path]):
                    t0, c0 = time.perf_counter(), time.process_time()
                    answers = steps[path][i]()
                    spent[path][0] += time.perf_counter() - t0
                    spent[path][1] += time.process_time() - c0
                    spent[path][2] += answers
        for path in order:
            wall, cpu, answers = spent[path]
            out[path][0] += wall
            out[path][1] += cpu
            out[path][2].append(answers)
            print(f"  round {r + 1} {path:<9} {wall:7.1f} s wall, {cpu:7.1f} s CPU", flush=True)
        del steps
    return out


def report(backend: str, n: int, results: dict[str, list], lines: list[str], cpu: bool = True,
           paths: tuple[str, str] = ("naive", "optimised")) -> None:
    (t_naive, c_naive, a_naive), (t_opt, c_opt, a_opt) = results[paths[0]], results[paths[1]]
    rounds = len(a_naive)
    stable = all(a == a_naive[0] for a in a_naive) and all(a == a_opt[0] for a in a_opt)
    same = sum(x == y for x, y in zip(a_naive[0], a_opt[0]))
    rate_n, rate_o = n * rounds / t_naive, n * rounds / t_opt
    print(f"{backend}: {paths[0]} {t_naive:.1f} s, {paths[1]} {t_opt:.1f} s wall over {rounds} round(s) of {n} prompts"
          + (f"; CPU {c_naive:.1f} s vs {c_opt:.1f} s, speedup {c_naive / c_opt:.2f}×" if cpu else "")
          + f"; answers the same in every round: {'yes' if stable else 'NO'}")
    lines.append(f"{backend}: {paths[0]} {rate_n:.3f} prompts/s, {paths[1]} {rate_o:.3f} prompts/s, "
                 f"speedup {t_naive / t_opt:.2f}×, answers identical {same}/{n}")


def reader(llm) -> Callable[[list], list[str]]:
    return lambda items: [o.raw for o in Reader(llm).read_batch(items)]


def bench_llamacpp(args, items, lines) -> None:
    opts = dict(cache=None, n_threads=args.threads, n_ctx=args.n_ctx)

    def make(work, **reuse):
        def build():
            llm = load_llm("smollm2", **reuse, **opts)
            llm.chat(WARM_UP, GenerationParams(max_tokens=2))  # page the weights in
            read = reader(llm)
            return [lambda part=work[i:i + STEP]: read(part) for i in range(0, len(work), STEP)]
        return build

    probe = load_llm("smollm2", **opts)
    lens = [len(probe._tokens(probe.render_chat(chat_messages(q, c))[0], add_bos=False)) for q, c in items]
    conv = chat_messages(*items[0])
    head = len(probe._tokens(probe.render_head(conv), add_bos=False))
    probe.close()
    print(f"llama-cpp: SmolLM2, {len(items)} prompts of {sum(lens) / len(lens):.0f} tokens on average "
          f"(min {min(lens)}, max {max(lens)}), head {head} tokens, {args.threads} thread(s)", flush=True)
    report("llama-cpp", len(items), interleaved(args.rounds, {"naive": make(items, prefix_reuse=False, parallel=1),
                                                              "optimised": make(items)}), lines)
    shaped = read_shaped(args.read_questions)
    print(f"llama-cpp (read shape): {len(shaped)} prompts of {args.read_questions} demo questions (union_norm and "
          "union_freq at k = 1, 3, 5, in trie order), head reuse against trie reuse", flush=True)
    report("llama-cpp (read shape)", len(shaped), interleaved(args.rounds, {
        "head": make(shaped, reuse_scope="head", parallel=1), "trie": make(shaped, parallel=1)}), lines,
        paths=("head", "trie"))


def smollm2_hf_folder() -> Path | None:
    """The bundled SmolLM2 GGUF as a transformers folder (converted once, then cached)."""
    folder = Path(os.environ.get("INFERQA_CACHE", Path.home() / ".cache" / "inferqa")) / "smollm2-135m-hf"
    if (folder / "config.json").is_file():
        return folder
    if any(importlib.util.find_spec(m) is None for m in ("gguf", "accelerate")):
        return None
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from inferqa.models import smollm2_path
    gguf = smollm2_path()
    print("transformers: converting the bundled SmolLM2 GGUF once (about 2 minutes)...", flush=True)
    tmp = folder.with_name(folder.name + ".tmp")
    AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(tmp)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # a model loaded from GGUF refuses save_pretrained: copy its (dequantized) weights into a plain one
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(loaded.state_dict())
    plain.save_pretrained(tmp)
    tmp.rename(folder)
    return folder


def bench_transformers(args, items, lines) -> None:
    folder = smollm2_hf_folder()
    if folder is None:
        print("transformers: skipped: converting the bundled SmolLM2 needs `pip install gguf accelerate`")
        return

    def make(batch_size: int, reuse: bool):
        def build():
            llm = load_llm(f"transformers:{folder}", cache=None, n_threads=args.threads, dtype="float32",
                           batch_size=batch_size, prefix_reuse=reuse)
            llm.chat(WARM_UP, GenerationParams(max_tokens=2))
            return [lambda: reader(llm)(items)]
        return build

    print(f"transformers: SmolLM2 (float32, converted from the GGUF), {len(items)} prompts, "
          f"batch {args.batch_size}, {args.threads} thread(s)", flush=True)
    report("transformers", len(items), interleaved(args.rounds, {"naive": make(1, False),
                                                                  "optimised": make(args.batch_size, True)}), lines)


def bench_openai(args, items, lines) -> None:
    from inferqa.llm.servers import local_server, missing_for
    from inferqa.models import smollm2_path

    kinds = ["llama.cpp", "llama-cpp-python"] if args.server == "both" else [args.server]
    for kind in kinds:
        why = missing_for(kind)
        if why:
            print(f"openai ({kind} server): skipped: {why}")
            continue
        parallel = args.concurrency if kind == "llama.cpp" else 1
        with local_server(smollm2_path(), kind, n_ctx=args.n_ctx, threads=args.threads, parallel=parallel) as url:
            spec = f"openai:smollm2@{url}?repeat_penalty=1.0&timeout=600"

            def make(concurrency: int):
                def build():
                    llm = load_llm(f"{spec}&concurrency={concurrency}", cache=None)
                    llm.chat(WARM_UP, GenerationParams(max_tokens=2))  # no slot holds the reader's head now
                    if concurrency == 1:  # one request at a time, in the caller's order
                        return [lambda: [reader(llm)([it])[0] for it in items]]
                    return [lambda: reader(llm)(items)]
                return build

            print(f"openai: {kind} server (SmolLM2, {args.threads} thread(s), {parallel} slot(s)), {len(items)} "
                  f"prompts, concurrency {args.concurrency}", flush=True)
            # the work is in the server's process: this process's CPU time says nothing
            report(f"openai ({kind} server)", len(items),
                   interleaved(args.rounds, {"naive": make(1), "optimised": make(args.concurrency)}), lines, cpu=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="llama-cpp,transformers,openai")
    ap.add_argument("--n", type=int, default=16, help="number of prompts")
    ap.add_argument("--k", type=int, default=3, help="passages merged per prompt")
    ap.add_argument("--read-questions", type=int, default=8, help="llama-cpp read shape: demo questions")
    ap.add_argument("--rounds", type=int, default=2, help="naive/optimised rounds, alternating which goes first")
    ap.add_argument("--threads", type=int, default=1, help="threads per model; 1 is fastest on a loaded machine")
    ap.add_argument("--n-ctx", type=int, default=2048)
    ap.add_argument("--batch-size", type=int, default=8, help="transformers: prompts per generate")
    ap.add_argument("--concurrency", type=int, default=4, help="openai: requests in flight (and llama.cpp slots)")
    ap.add_argument("--server", choices=("both", "llama.cpp", "llama-cpp-python"), default="both",
                    help="openai: the local server(s) to measure against")
    args = ap.parse_args()
    benches = {"llama-cpp": bench_llamacpp, "transformers": bench_transformers, "openai": bench_openai}
    chosen = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in chosen if b not in benches]
    if unknown:
        ap.error(f"unknown backend(s) {', '.join(unknown)}; choose from {', '.join(benches)}")

    from requirements import require

    modules = {"llama-cpp": "llama_cpp", "transformers": "transformers", "openai": "openai"}
    require("reader_throughput.py", tuple(modules[b] for b in chosen), "the chosen backends")

    items = prompts_from_demo(args.n, args.k)
    load = os.getloadavg()[0]
    lines: list[str] = []
    for b in chosen:
        benches[b](args, items, lines)
    print(f"load average {load:.1f} at start, {os.getloadavg()[0]:.1f} at end ({os.cpu_count()} cores)")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
