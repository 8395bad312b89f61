"""Reader throughput with and without few-shot prefix reuse (llama-cpp backend).

Every reader prompt starts with the same instruction and five demonstrations. The naive
path resets the model before each prompt, so the whole prompt is evaluated every time;
the reused path evaluates the shared prefix once and then only each prompt's own suffix.
Both read the same prompts with greedy decoding; the answers must be identical.

    python benchmarks/reader_throughput.py [--model smollm2] [--n 16] [--k 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

from inferqa.data import demo_path, load_questions
from inferqa.llm import load_llm
from inferqa.read import Reader, union_norm
from inferqa.read.prompts import chat_messages


def prompts_from_demo(n: int, k: int) -> list[tuple[str, list[str]]]:
    """n demo questions; context = union of k passages over the top-5 hints (three orderings)."""
    items = []
    for q in load_questions(demo_path())[:n]:
        hints = [h.text for h in sorted(q.hints, key=lambda h: -(h.convergence or 0))[:5]]
        passages = [hints, hints[::-1], hints[1:] + hints[:1]][:k]
        items.append((q.text, union_norm(passages)))
    return items


def timed(reader: Reader, items) -> tuple[float, list[str]]:
    t0 = time.perf_counter()
    out = reader.read_batch(items)
    return time.perf_counter() - t0, [o.raw for o in out]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2", help="LLM spec of a llama-cpp model (default: smollm2)")
    ap.add_argument("--n", type=int, default=16, help="number of prompts")
    ap.add_argument("--k", type=int, default=3, help="passages merged per prompt")
    ap.add_argument("--threads", type=int, default=1,
                    help="llama.cpp threads; 1 is fastest on an oversubscribed machine")
    ap.add_argument("--n-ctx", type=int, default=2048)
    args = ap.parse_args()

    items = prompts_from_demo(args.n, args.k)
    opts = dict(cache=None, n_threads=args.threads, n_ctx=args.n_ctx)
    naive = load_llm(args.model, prefix_reuse=False, **opts)
    reused = load_llm(args.model, prefix_reuse=True, **opts)
    tok = reused._tokens
    lens = [len(tok(reused.render_chat(chat_messages(q, ctx))[0], add_bos=False)) for q, ctx in items] \
        if reused.mode == "chat" else []
    # Warm-up on one prompt each (page in weights) outside the timings.
    Reader(naive).read_batch(items[:1])
    Reader(reused).read_batch(items[:1])
    naive.llama.reset()
    reused.llama.reset()
    reused._snapshots.clear()

    t_naive, a_naive = timed(Reader(naive), items)
    t_reused, a_reused = timed(Reader(reused), items)
    same = sum(a == b for a, b in zip(a_naive, a_reused))

    print(f"model {naive.identity}, {len(items)} prompts, k={args.k}, {args.threads} threads"
          + (f", prompt tokens mean {sum(lens) / len(lens):.0f} (min {min(lens)}, max {max(lens)})" if lens else ""))
    print(f"{'path':<10}{'seconds':>10}{'prompts/s':>12}{'speed-up':>10}")
    print(f"{'naive':<10}{t_naive:>10.2f}{len(items) / t_naive:>12.3f}{1.0:>10.2f}")
    print(f"{'reused':<10}{t_reused:>10.2f}{len(items) / t_reused:>12.3f}{t_naive / t_reused:>10.2f}")
    print(f"identical answers: {same}/{len(items)}")
    naive.close()
    reused.close()


if __name__ == "__main__":
    main()
