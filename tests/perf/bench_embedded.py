"""Throughput of the embedded backend through evolve's path against a raw llama-cpp-python loop.

Both sides run the same 30 short chat prompts (greedy, max_tokens 32) on the same loaded model, in
one process, interleaved over several rounds so that machine noise hits both alike. Evolve's side
goes through `get_backend("embedded", cache=False)` wrapped in `MeteredBackend`, one batch per round
(as a rollout batch is sent); the raw side calls `Llama.create_completion` in a plain loop. The raw
loop runs on the model's own thread, the thread evolve uses too: llama.cpp's OpenMP build keeps a
spinning thread team per calling thread, so a loop on another thread would leave two teams fighting
for the cores and slow both sides (a single-threaded script has one team, like this setup).

Prints `name: value` lines; `embedded_saturation` = evolve tokens/s divided by the raw loop's.

Then the prefix store: 12 few-shot requests sharing a long prefix (a system prompt and 16 example
turns, as a few-shot harness renders), scored by choice and answered greedily, once with the store
off (a zero budget: nothing stored, so choice scoring evaluates every prompt whole and generation
reuses only what the context still holds, as before the store existed) and once on, interleaved;
`embedded_prefix_speedup` = seconds off / seconds on, `embedded_prefix_same_results` = 1 when both
sides agree exactly.
"""

from __future__ import annotations

import asyncio
import time

from evolve.backends import MeteredBackend, Request, get_backend
from evolve.backends.embedded import IM_END, SAMPLING, render_chatml, shared_model
from evolve.backends.prefix_states import DEFAULT_MAX_BYTES, PrefixStates

SYSTEM = "You are a helpful assistant. Answer in one short sentence."
QUESTIONS = [
    "What is the capital of France?", "Name a primary color.", "What do bees make?",
    "How many legs does a spider have?", "What is 7 times 8?", "Which animal says moo?",
    "What is the opposite of hot?", "Name a planet in our solar system.", "What do plants need to grow?",
    "What color is grass?", "What is frozen water called?", "Name a musical instrument.",
    "What is the largest ocean?", "How many days are in a week?",
    "What is the boiling point of water in Celsius?", "Name a fruit that is yellow.",
    "What do you use to write on paper?", "Which season comes after winter?", "What is the sun?",
    "Name a bird that cannot fly.", "What is a baby cat called?", "What language is spoken in Spain?",
    "How many hours are in a day?", "What gas do humans breathe in?", "Name a tool for cutting paper.",
    "What is the tallest animal?", "What is 12 plus 30?", "Which metal is liquid at room temperature?",
    "What do cows drink?", "Name a shape with three sides.",
]
MAX_TOKENS = 32
ROUNDS = 2


def _messages(question: str) -> tuple[dict[str, str], ...]:
    return ({"role": "system", "content": SYSTEM}, {"role": "user", "content": question})


def run_evolve(backend: MeteredBackend) -> tuple[int, float]:
    requests = [Request(messages=_messages(q), max_tokens=MAX_TOKENS) for q in QUESTIONS]
    start = time.perf_counter()
    completions = asyncio.run(backend.complete(requests))
    elapsed = time.perf_counter() - start
    if not all(c.ok for c in completions):
        raise SystemExit(f"embedded backend failed: {next(c.error for c in completions if not c.ok)}")
    return sum(c.usage.completion_tokens for c in completions), elapsed


def run_raw(llm) -> tuple[int, float]:
    prompts = [render_chatml(_messages(q)) for q in QUESTIONS]
    start = time.perf_counter()
    tokens = 0
    for prompt in prompts:
        out = llm.create_completion(prompt, max_tokens=MAX_TOKENS, temperature=0.0, stop=[IM_END], **SAMPLING)
        tokens += out["usage"]["completion_tokens"]
    return tokens, time.perf_counter() - start


def run_raw_on_model_thread(llm) -> tuple[int, float]:
    return shared_model().executor.submit(run_raw, llm).result()


def _few_shot(question: str, **kwargs) -> Request:
    turns = []
    for i, (q, a) in enumerate(zip(QUESTIONS[:16], ("Paris", "Red", "Honey", "Eight") * 4, strict=True)):
        turns += [{"role": "user", "content": f"Example {i}: {q}"}, {"role": "assistant", "content": a}]
    return Request(messages=({"role": "system", "content": SYSTEM}, *turns, {"role": "user", "content": question}),
                   **kwargs)


def run_prefix_side(backend, budget: int) -> tuple[float, list]:
    shared_model().prefixes = PrefixStates(max_bytes=budget)
    questions = QUESTIONS[16:28]
    start = time.perf_counter()
    scored = asyncio.run(backend.complete([_few_shot(q, choices=("Yes", "No", "Paris")) for q in questions]))
    texts = asyncio.run(backend.complete([_few_shot(q, max_tokens=8) for q in questions]))
    return time.perf_counter() - start, [c.choice_logprobs for c in scored] + [c.text for c in texts]


def prefix_figures(backend) -> None:
    seconds = {"off": 0.0, "on": 0.0}
    results = {}
    for _ in range(ROUNDS):
        for side, budget in (("off", 0), ("on", DEFAULT_MAX_BYTES)):
            elapsed, results[side] = run_prefix_side(backend, budget)
            seconds[side] += elapsed
    print(f"embedded_prefix_requests_per_side: {24 * ROUNDS}")
    print(f"embedded_prefix_off_s: {seconds['off']:.2f}")
    print(f"embedded_prefix_on_s: {seconds['on']:.2f}")
    print(f"embedded_prefix_speedup: {seconds['off'] / seconds['on']:.2f}")
    print(f"embedded_prefix_same_results: {int(results['off'] == results['on'])}")


def main() -> None:
    start = time.perf_counter()
    backend = MeteredBackend(get_backend("embedded", cache=False))
    load_s = time.perf_counter() - start
    llm = shared_model().llm
    run_raw_on_model_thread(llm)  # warm-up (first calls allocate buffers)
    sides = {"evolve": lambda: run_evolve(backend), "raw": lambda: run_raw_on_model_thread(llm)}
    totals = {side: [0, 0.0] for side in sides}
    for _ in range(ROUNDS):
        for side, fn in sides.items():
            tokens, elapsed = fn()
            totals[side][0] += tokens
            totals[side][1] += elapsed
    tps = {side: tokens / elapsed for side, (tokens, elapsed) in totals.items()}
    print(f"embedded_load_s: {load_s:.3f}")
    print(f"embedded_prompts_per_side: {len(QUESTIONS) * ROUNDS}")
    for side, (tokens, _) in totals.items():
        print(f"embedded_{side}_tokens: {tokens}")
    for side, value in tps.items():
        print(f"embedded_{side}_tokens_per_s: {value:.1f}")
    print(f"embedded_saturation: {tps['evolve'] / tps['raw']:.3f}")
    prefix_figures(backend)


if __name__ == "__main__":
    main()
