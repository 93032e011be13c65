"""The embedded backend with the real SmolLM2 model (marked `embedded`; a few seconds in all)."""

from __future__ import annotations

import asyncio
import json

import pytest

from evolve.backends import Request, get_backend
from evolve.backends.embedded import render_chatml


def _ask(content: str, **kwargs) -> Request:
    messages = ({"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": content})
    return Request(messages=messages, **kwargs)


def test_chatml_rendering_is_explicit():
    text = render_chatml([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert text == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
    assert "SmolLM" not in render_chatml([{"role": "user", "content": "U"}])


CAPITALS = {"France": ("paris",), "Germany": ("berlin",), "Italy": ("rome", "roma"), "Japan": ("tokyo",),
            "Spain": ("madrid",)}


@pytest.mark.embedded
def test_embedded_answers_real_prompts():
    # A 135M model's greedy answer to one such question changes with the CPU kernels llama.cpp was
    # compiled with (one build answers "Paris" for France, another drifts into French): a working
    # model names at least two of five capitals, a broken one (garbage, empty text) none.
    backend = get_backend("embedded", cache=False)
    asks = [_ask(f"What is the capital of {country}?", max_tokens=24, role="critic") for country in CAPITALS]
    answers = asyncio.run(backend.complete(asks))
    assert all(done.ok for done in answers), [done.error for done in answers]
    named = [names for names, done in zip(CAPITALS.values(), answers, strict=True)
             if any(name in done.text.lower() for name in names)]
    assert len(named) >= 2, [done.text for done in answers]
    for done in answers:
        assert done.role == "critic" and done.model == "embedded" and not done.cached
        assert done.usage.prompt_tokens > 10 and 0 < done.usage.completion_tokens <= 24
        assert "<|im_end|>" not in done.text


@pytest.mark.embedded
def test_embedded_greedy_is_deterministic_and_batch_keeps_order():
    backend = get_backend("embedded", cache=False)
    requests = [_ask(q, max_tokens=8) for q in ("Name a fruit.", "Name a color.", "Name a fruit.")]
    first, second, third = asyncio.run(backend.complete(requests))
    assert first.text == third.text
    assert first.text != second.text


@pytest.mark.embedded
def test_embedded_json_schema_output_is_valid_json():
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    backend = get_backend("embedded", cache=False)
    questions = ("What is 2 + 2? Reply in JSON.", "How many legs does a cat have? Reply in JSON.")
    done = asyncio.run(backend.complete([_ask(q, max_tokens=24, json_schema=schema) for q in questions]))
    for completion in done:  # the second call reuses the cached grammar
        assert completion.ok, completion.error
        assert isinstance(json.loads(completion.text)["answer"], int)


@pytest.mark.embedded
def test_embedded_prompt_too_long_is_a_failed_completion():
    backend = get_backend("embedded", cache=False)
    [done] = asyncio.run(backend.complete([_ask("word " * 12000, max_tokens=8)]))
    assert not done.ok and "context" in done.error
    assert done.text == ""


@pytest.mark.embedded
def test_embedded_cache_hit_does_not_call_the_model():
    backend = get_backend("embedded")
    request = _ask("Say hello.", max_tokens=8)
    [miss] = asyncio.run(backend.complete([request]))
    backend.inner._model = None  # any further model call would fail
    [hit] = asyncio.run(backend.complete([request]))
    assert hit.cached and not miss.cached
    assert hit.text == miss.text and hit.usage == miss.usage


def test_embedded_missing_file_names_the_form(tmp_path):
    from evolve.errors import BackendError

    with pytest.raises(BackendError, match=r"embedded:PATH\.gguf"):
        get_backend(f"embedded:{tmp_path / 'nope.gguf'}")


@pytest.mark.embedded
def test_embedded_scores_choices_consistently_with_its_greedy_answer():
    backend = get_backend("embedded", cache=False)
    question = "What is the capital of France? Answer with the city only."
    [greedy] = asyncio.run(backend.complete([_ask(question, max_tokens=6)]))
    choices = (greedy.text, "Paris", "Berlin", "Madrid and Rome")
    [scored] = asyncio.run(backend.complete([_ask(question, choices=choices)]))
    assert scored.ok, scored.error
    assert len(scored.choice_logprobs) == 4 and all(-100 < v < 0 for v in scored.choice_logprobs)
    assert scored.text == greedy.text, "the greedy reply is the most likely of these"
    by = dict(zip(choices, scored.choice_logprobs, strict=True))
    assert by["Paris"] > by["Berlin"] > by["Madrid and Rome"]
    assert scored.usage.prompt_tokens > 10 and scored.usage.completion_tokens >= 3
    other = _ask("Name a color.", max_tokens=4)
    again = asyncio.run(backend.complete([other, _ask(question, choices=choices)]))[1]
    assert again.choice_logprobs == pytest.approx(scored.choice_logprobs, abs=1e-6), "what ran before changes nothing"


def _few_shot(question: str, **kwargs) -> Request:
    turns = []
    for city, country in (("Lyon", "France"), ("Porto", "Portugal"), ("Graz", "Austria")):
        turns += [{"role": "user", "content": f"Which country is {city} in?"},
                  {"role": "assistant", "content": country}]
    messages = ({"role": "system", "content": "Answer with the country only."}, *turns,
                {"role": "user", "content": question})
    return Request(messages=messages, **kwargs)


@pytest.mark.embedded
def test_embedded_restores_a_shared_prefix_with_the_same_results_as_evaluating_it():
    from evolve.backends.embedded import shared_model
    from evolve.backends.prefix_states import PrefixStates

    backend = get_backend("embedded", cache=False)
    model = shared_model()
    questions = ("Which country is Turin in?", "Which country is Ghent in?")
    choices = ("Italy", "Belgium", "Spain")

    def run() -> tuple[list, list]:
        scored = asyncio.run(backend.complete([_few_shot(q, choices=choices) for q in questions]))
        texts = asyncio.run(backend.complete([_few_shot(q, max_tokens=4) for q in questions]))
        return [c.choice_logprobs for c in scored], [c.text for c in texts]

    saved = model.prefixes
    try:
        model.prefixes = PrefixStates(max_bytes=0)  # nothing stored, as before the store existed
        plain = run()
        model.prefixes = PrefixStates()
        stored = run()
        assert model.prefixes.hits == 3 and model.prefixes.misses == 1, "one prefix, evaluated once"
        asyncio.run(backend.complete([_ask("Name a color.", max_tokens=4)]))
        again = run()
    finally:
        model.prefixes = saved
    assert stored == plain, "restoring the prefix gives what evaluating it gives"
    assert again == plain, "what ran before changes nothing"
    assert plain[0][0][0] > plain[0][0][1] and plain[0][1][1] > plain[0][1][0], "Turin is in Italy, Ghent in Belgium"
