"""Benchmark loading: external formats, shipped suites, deterministic splits and bad input."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from evolve.bench.benchmark import list_benchmarks, load_benchmark
from evolve.bench.generate import GeneratorSpec, generate
from evolve.errors import BenchmarkError, ConfigError


def all_ids(bench) -> list[str]:
    return [task_id for ids in bench.split_ids().values() for task_id in ids]


def write_bbh(path, n=40):
    examples = [{"input": f"Is {i} even?\nOptions:\n- Yes\n- No", "target": "Yes" if i % 2 == 0 else "No"}
                for i in range(n)]
    path.write_text(json.dumps({"canary": "x", "examples": examples}))
    return path


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_bbh_file_detected_with_labels_from_targets(tmp_path):
    bench = load_benchmark(str(write_bbh(tmp_path / "parity.json")))
    assert bench.name == "parity"
    assert bench.labels == ("No", "Yes")
    assert bench.verifier.name == "label"
    assert sum(len(v) for v in bench.splits.values()) == 40
    assert set(bench.splits) == {"demo", "evolve", "validation", "test"}
    task = bench.split("test")[0]
    assert task.labels == ("No", "Yes") and task.id.startswith("t-")


def test_bbh_numeric_targets_use_numeric_verifier(tmp_path):
    path = tmp_path / "count.json"
    path.write_text(json.dumps({"examples": [{"input": f"count {i}", "target": str(i % 7)} for i in range(30)]}))
    bench = load_benchmark(str(path))
    assert bench.verifier.name == "numeric" and bench.labels is None


def test_gsm8k_loader_takes_the_number_after_hashes(tmp_path):
    rows = [{"question": f"Tom has {i} apples and buys 1,000 more. How many?",
             "answer": f"He has {i} + 1000 = {i + 1000}\n#### {i + 1000:,}"} for i in range(20)]
    bench = load_benchmark(str(write_jsonl(tmp_path / "gsm.jsonl", rows)))
    task = next(t for s in bench.splits.values() for t in s if "has 3 apples" in t.input)
    assert task.target == "1003"
    assert "1000 = 1003" in task.meta["rationale"]
    assert bench.verifier.name == "numeric"
    assert bench.verifier.score(task, "So the answer is 1,003.").reward == 1.0


def test_gsm8k_without_hashes_names_the_line(tmp_path):
    rows = [{"question": "q", "answer": "1\n#### 1"}, {"question": "q2", "answer": "no marker"}]
    with pytest.raises(BenchmarkError, match=r"gsm\.jsonl: line 2: .*####"):
        load_benchmark(str(write_jsonl(tmp_path / "gsm.jsonl", rows)))


def test_humaneval_loader(tmp_path):
    rows = [{"task_id": f"H/{i}", "prompt": f"def f{i}(x):\n", "entry_point": f"f{i}",
             "test": f"def check(c):\n    assert c(1) == {i + 1}\n"} for i in range(8)]
    bench = load_benchmark(str(write_jsonl(tmp_path / "code.jsonl", rows)))
    assert bench.verifier.name == "python_tests"
    task = next(t for s in bench.splits.values() for t in s if t.id == "H/2")
    assert task.meta["entry_point"] == "f2"
    assert bench.verifier.score(task, "    return x + 2\n").reward == 1.0


def test_generic_jsonl_with_configurable_fields_and_split_field(tmp_path):
    rows = [{"q": f"q{i}", "a": f"a{i}", "split": ["evolve", "test"][i % 2]} for i in range(10)]
    path = write_jsonl(tmp_path / "qa.jsonl", rows)
    bench = load_benchmark(str(path), input_field="q", target_field="a")
    assert [t.input for t in bench.split("test")] == ["q1", "q3", "q5", "q7", "q9"]
    assert bench.verifier.name == "exact"
    with pytest.raises(BenchmarkError, match="no split 'validation'; valid: evolve, test"):
        bench.split("validation")


def test_malformed_jsonl_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"input": "a", "target": "b"}\n\n{"input": "c", "target": \n')
    with pytest.raises(BenchmarkError, match=r"bad\.jsonl: line 3: invalid JSON"):
        load_benchmark(str(path))


def test_missing_target_names_file_line_and_field(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [{"input": "a", "target": "b"}, {"input": "c", "answer": "d"}])
    with pytest.raises(BenchmarkError, match=r"t\.jsonl: line 2: missing field 'target'"):
        load_benchmark(str(path))


def test_empty_benchmark(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(BenchmarkError, match="no tasks"):
        load_benchmark(str(path))
    (tmp_path / "e.json").write_text('{"examples": []}')
    with pytest.raises(BenchmarkError, match="no tasks"):
        load_benchmark(str(tmp_path / "e.json"))


def test_split_larger_than_the_data(tmp_path):
    path = write_bbh(tmp_path / "small.json", n=10)
    with pytest.raises(BenchmarkError, match="need 12 tasks but there are only 10"):
        load_benchmark(str(path), splits={"evolve": 6, "test": 6})


def test_splits_are_deterministic_and_depend_on_the_seed(tmp_path):
    path = str(write_bbh(tmp_path / "p.json", n=60))
    a, b = load_benchmark(path), load_benchmark(path)
    assert a.split_ids() == b.split_ids()
    c = load_benchmark(path, seed=7)
    assert c.split_ids() != a.split_ids()
    assert sorted(all_ids(c)) == sorted(all_ids(a))
    ids = all_ids(a)
    assert len(ids) == len(set(ids))


def test_label_splits_keep_the_label_proportions(tmp_path):
    bench = load_benchmark(str(write_bbh(tmp_path / "p.json", n=100)), splits={"evolve": 40, "test": 40})
    for name in ("evolve", "test"):
        counts = Counter(t.target for t in bench.split(name))
        assert abs(counts["Yes"] - counts["No"]) <= 2


def test_benchmark_folder_with_yaml_and_options(tmp_path):
    write_jsonl(tmp_path / "tasks.jsonl", [{"text": f"t{i}", "label": ["x", "y"][i % 2]} for i in range(20)])
    (tmp_path / "benchmark.yaml").write_text(
        "name: mine\nverifier: label\ntasks: tasks.jsonl\ninput_field: text\ntarget_field: label\n"
        "splits: {evolve: 5, validation: 5, test: 10}\nseed: 3\ndenylist: ['secret']\n")
    bench = load_benchmark(str(tmp_path))
    assert bench.name == "mine" and bench.denylist == ("secret",)
    assert [len(bench.split(s)) for s in ("demo", "evolve", "validation", "test")] == [0, 5, 5, 10]
    (tmp_path / "benchmark.yaml").write_text("tasks: tasks.jsonl\ninput_field: text\ntarget_field: label\n"
                                             "verifier: fuzzy\n")
    with pytest.raises(BenchmarkError, match="field 'verifier': unknown verifier 'fuzzy'; valid: exact, label"):
        load_benchmark(str(tmp_path))
    (tmp_path / "benchmark.yaml").write_text("tasks: tasks.jsonl\nsplitz: {}\n")
    with pytest.raises(BenchmarkError, match="splitz"):
        load_benchmark(str(tmp_path))


def test_unknown_benchmark_name_lists_shipped_ones():
    with pytest.raises(ConfigError, match="sentiment-products"):
        load_benchmark("no-such-benchmark")


SHIPPED = ["sentiment-products", "sentiment-restaurants", "topic-headlines", "topic-questions", "extract-city",
           "extract-city-news"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_benchmarks(name):
    bench = load_benchmark(name)
    assert [len(bench.split(s)) for s in ("demo", "evolve", "validation", "test")] == [40, 60, 60, 100]
    assert bench.ood and all(o in list_benchmarks() for o in bench.ood)
    ids = all_ids(bench)
    assert len(set(ids)) == len(ids) == 260
    if bench.labels:
        counts = Counter(t.target for t in bench.split("test"))
        assert set(counts) == set(bench.labels)
        assert max(counts.values()) - min(counts.values()) <= 2
    assert load_benchmark(name).split_ids() == bench.split_ids()


def test_ood_siblings_share_no_inputs():
    for name in SHIPPED:
        bench = load_benchmark(name)
        inputs = {t.input for s in bench.splits.values() for t in s}
        for sibling in bench.ood:
            other = load_benchmark(sibling)
            assert not inputs & {t.input for s in other.splits.values() for t in s}


def test_generator_is_seeded_and_fills_distinct_slot_values():
    spec = GeneratorSpec.model_validate({
        "count": 12, "seed": 5,
        "slots": {"city": ["A", "B", "C", "D"]},
        "classes": [{"target": "{city}", "templates": ["from {city} to {city_2}"]}],
    })
    rows = generate(spec)
    assert rows == generate(spec)
    assert all(r["input"].split()[1] != r["input"].split()[3] for r in rows)
    assert all(r["input"].split()[1] == r["target"] for r in rows)
    with pytest.raises(BenchmarkError, match="distinct inputs"):
        generate(spec.model_copy(update={"count": 13}))
    with pytest.raises(ValueError, match="unknown slot 'town'"):
        GeneratorSpec.model_validate({"count": 1, "slots": {}, "classes": [{"target": "x", "templates": ["{town}"]}]})
