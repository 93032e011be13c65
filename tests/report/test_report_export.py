"""Exporters, the export leakage screen and the runtime API round trip."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lineage_fixture import EVOLVE_TASKS, LEAKED_ANSWER, RUN

from evolve import Agent, load_harness, load_prompt
from evolve.backends import MockBackend
from evolve.bench.task import Task
from evolve.errors import HarnessError
from evolve.harness import AnswerExtraction, Control, Example, Harness, Section, Skill, Tool
from evolve.harness.io import parse_skill_md
from evolve.report.export import EXPORT_FORMATS, export_candidate
from evolve.report.leakage import LeakageError, SplitInfo, check_export, evolve_split


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()}


def test_json_bundle_round_trip_keeps_the_version(fx, tmp_path):
    files, prov = export_candidate(fx.store, "best", "json", tmp_path / "out", run_id=RUN)
    expected = fx.harnesses["c3b"]
    assert [f.name for f in files] == ["harness.json"]
    bundle = json.loads(files[0].read_text())
    assert bundle["version"] == expected.version == prov.version
    assert bundle["provenance"]["run_id"] == RUN and bundle["provenance"]["candidate_id"] == "c3b"
    assert bundle["provenance"]["model"] == "mock"
    assert bundle["provenance"]["scores"]["best_summary"]["test"]["score"] == 0.64
    assert bundle["provenance"]["leakage"]["checked"] is True and bundle["provenance"]["leakage"]["findings"] == []
    for path in (files[0], tmp_path / "out"):
        agent = load_harness(path)
        assert agent.version == expected.version and agent.harness == expected
        assert agent.provenance["candidate_id"] == "c3b"


def test_tampered_bundle_is_refused(fx, tmp_path):
    files, _ = export_candidate(fx.store, "c1a", "json", tmp_path / "out")
    data = json.loads(files[0].read_text())
    data["harness"]["system"][0]["text"] = "changed after export"
    files[0].write_text(json.dumps(data))
    with pytest.raises(HarnessError, match="modified after export"):
        load_harness(files[0])


def test_skills_export_is_an_agent_skills_folder(fx, tmp_path):
    out = tmp_path / "skills"
    export_candidate(fx.store, "c3b", "skills", out)
    files = _files(out)
    assert set(files) == {"skills/yes-no-questions/SKILL.md", "system.md", "harness.yaml", "provenance.json"}
    skill = parse_skill_md(files["skills/yes-no-questions/SKILL.md"], "SKILL.md")
    assert skill["name"] == "yes-no-questions" and skill["description"] == "Use for yes/no questions."
    assert skill["body"].strip() == "Answer with exactly one word: yes or no."
    assert json.loads(files["provenance.json"])["version"] == fx.harnesses["c3b"].version
    assert "You answer short questions precisely." in files["system.md"]
    assert "yes-no-questions" not in files["system.md"]  # skills live in their own files
    assert "samples: 3" in files["harness.yaml"]  # the control settings SKILL.md cannot hold


def test_prompt_export_is_one_text(fx, tmp_path):
    export_candidate(fx.store, "c3b", "prompt", tmp_path / "p")
    text = (tmp_path / "p" / "prompt.md").read_text()
    assert "You answer short questions precisely." in text and "Answer with exactly one word" in text
    assert not (tmp_path / "p" / "messages.json").exists()  # no few-shot turns to keep
    with pytest.raises(HarnessError, match=r"a prompt export .*evolve\.load_prompt"):
        load_harness(tmp_path / "p")


EVALUATED = Harness(
    name="evaluated",
    system=(Section(name="role", text="You answer short questions precisely."),
            Section(name="format", text="Reply with one word on the last line.")),
    skills=(Skill(name="yes-no", description="Use for yes/no questions.", body="Answer yes or no."),),
    examples=(Example(input="Is ice cold?", output="yes"),
              Example(input="Is fire cold?", output="no", rationale="Fire is hot.")),
    control=Control(temperature=0.4, max_tokens=48, samples=3, max_turns=2,
                    answer=AnswerExtraction(mode="last_line")),
    tools=(Tool(name="calc", description="Evaluates arithmetic.", implementation="builtin:calculator",
                parameters={"type": "object", "properties": {"expression": {"type": "string"}}}),),
)
TASK = Task(id="t1", input="Is snow white?", target="yes")


def _evaluated_messages(harness: Harness) -> list[dict[str, str]]:
    """The messages the rollout runtime sends to the policy for TASK (what a run evaluates)."""
    from evolve.bench.runtime import evaluate
    from evolve.bench.verifiers import make_verifier

    policy = MockBackend(default="yes")
    asyncio.run(evaluate(harness, [TASK], policy, make_verifier("exact")))
    sent = {tuple(tuple(sorted(m.items())) for m in r.messages) for r in policy.history}
    assert len(sent) == 1, "every sample of the first turn sees the same messages"
    return list(policy.history[0].messages)


def _reload(fmt: str, out: Path) -> tuple[list[dict[str, str]], Control, tuple[Tool, ...]]:
    """Load an export back the way its documentation says; its messages for TASK and its settings."""
    if fmt == "prompt":
        prompt = load_prompt(out)
        return prompt.messages(TASK.input), prompt.control, prompt.tools
    agent = load_harness(out)
    return agent.messages(TASK.input), agent.harness.control, agent.harness.tools


@pytest.mark.parametrize("placement", ["turns", "system"])
@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_every_export_renders_the_messages_the_run_evaluated(fx, tmp_path, fmt, placement):
    harness = EVALUATED.model_copy(update={"control": EVALUATED.control.model_copy(
        update={"examples_as": placement})})
    fx.store.add_candidate("ev", RUN, harness, parent_id="c3b", round=4, status="accepted", origin="llm")
    out = tmp_path / fmt
    export_candidate(fx.store, "ev", fmt, out)
    messages, control, tools = _reload(fmt, out)
    assert messages == _evaluated_messages(harness)
    assert control == harness.control and tools == harness.tools  # nothing of the settings is lost
    if fmt == "prompt":
        assert (out / "messages.json").is_file() == (placement == "turns")
        assert ("Is fire cold?" in (out / "prompt.md").read_text()) == (placement == "system")
    if fmt == "python":
        assert load_harness(out / "harness").harness == harness


def test_export_cli_names_the_settings_file_and_converts_only_when_asked(fx, cli, tmp_path):
    fx.store.add_candidate("ev", RUN, EVALUATED, parent_id="c3b", round=4, status="accepted", origin="llm")
    kept = cli("export", "ev", "--run", RUN, "--format", "prompt", "--out", str(tmp_path / "kept"))
    assert kept.exit_code == 0, kept.output
    lines = kept.output.splitlines()
    settings = next(line for line in lines if line.startswith("prompt.md cannot express the control settings"))
    assert f"{tmp_path / 'kept' / 'harness.yaml'}:" in settings
    assert "samples 3 (vote majority)" in settings and "tools calc" in settings
    assert any("are chat turns, as evaluated" in line for line in lines) and "converted" not in kept.output
    converted = cli("export", "ev", "--run", RUN, "--format", "prompt", "--examples-as", "system",
                    "--out", str(tmp_path / "conv"))
    assert converted.exit_code == 0, converted.output
    assert f"the run evaluated harness {EVALUATED.version}" in " ".join(converted.output.split())
    assert not (tmp_path / "conv" / "messages.json").exists()
    assert "Is fire cold?" in (tmp_path / "conv" / "prompt.md").read_text()
    bundle = cli("export", "ev", "--run", RUN, "--format", "json", "--examples-as", "system",
                 "--out", str(tmp_path / "json"))
    provenance = json.loads((tmp_path / "json" / "harness.json").read_text())["provenance"]
    assert bundle.exit_code == 0 and provenance["evaluated_version"] == EVALUATED.version
    assert "cannot express" not in bundle.output  # the bundle holds every setting
    bad = cli("export", "ev", "--run", RUN, "--format", "prompt", "--examples-as", "inline",
              "--out", str(tmp_path / "bad"))
    assert bad.exit_code == 2 and "--examples-as 'inline' is unknown; valid: turns, system" in bad.output


def test_python_export_runs_from_the_shell(fx, tmp_path):
    out = tmp_path / "py"
    export_candidate(fx.store, "c3b", "python", out)
    assert (out / "harness" / "harness.yaml").is_file() and (out / "agent.py").is_file()
    assert load_harness(out / "harness").version == fx.harnesses["c3b"].version
    done = subprocess.run([sys.executable, str(out / "agent.py"), "Is the sky green?", "--model", "mock"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "mock answer"


def test_planted_leak_is_refused_and_nothing_is_written(fx, tmp_path):
    out = tmp_path / "leak"
    with pytest.raises(LeakageError) as info:
        export_candidate(fx.store, "c1b", "json", out)
    message = str(info.value)
    assert "\n" not in message and "ev-1" in message and "--allow-leaks" in message
    assert not out.exists()
    files, prov = export_candidate(fx.store, "c1b", "json", out, allow_leaks=True)
    assert prov.leakage["allowed"] is True and prov.leakage["findings"]
    assert files[0].is_file()


def test_cli_export_refuses_leak_with_one_line_and_exports_best(cli, tmp_path):
    bad = cli("export", "c1b", "--format", "json", "--out", str(tmp_path / "x"))
    assert bad.exit_code == 2
    assert bad.output.startswith("error: export refused") and bad.output.count("\n") == 1
    ok = cli("export", "best", "--run", RUN, "--format", "skills", "--out", str(tmp_path / "best"))
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "best" / "skills" / "yes-no-questions" / "SKILL.md").is_file()
    unknown = cli("export", "best", "--format", "docx", "--out", str(tmp_path / "y"))
    assert unknown.exit_code == 2 and "skills, prompt, json, python" in unknown.output


@pytest.mark.parametrize("fmt", ["skills", "prompt", "json", "python"])
def test_exported_files_contain_no_evolve_split_answers(fx, tmp_path, fmt):
    out = tmp_path / fmt
    export_candidate(fx.store, "best", fmt, out, run_id=RUN)
    text = "\n".join(_files(out).values()).casefold()
    for task in EVOLVE_TASKS:
        assert task["input"].casefold() not in text
        if len(task["target"]) > 3:
            assert task["target"].casefold() not in text
    assert LEAKED_ANSWER not in text


def test_evolve_split_is_rebuilt_from_the_run_config(fx):
    split = evolve_split(fx.store.get_run(RUN))
    assert sorted(t.id for t in split.tasks) == sorted(t["id"] for t in EVOLVE_TASKS)


def test_demo_pool_examples_are_allowed(fx):
    from evolve.harness import Example

    leaky = fx.harnesses["c0"].model_copy(update={"examples": (Example(input="q", output=LEAKED_ANSWER),)})
    split = evolve_split(fx.store.get_run(RUN))
    with pytest.raises(LeakageError):
        check_export(leaky, split)
    demo = SplitInfo(tasks=split.tasks, labels=split.labels, source="x", demo_inputs=frozenset({"q"}))
    assert check_export(leaky, demo) == []


def test_agent_messages_and_run_with_a_backend(fx):
    agent = load_harness_from_store(fx, "c3b")

    class Item:
        input = "Is the sky green?"

    messages = agent.messages(Item())
    assert messages[0]["role"] == "system" and "yes-no-questions" in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": "Is the sky green?"}
    assert agent.messages("Is the sky green?") == messages
    assert agent.harness.control.samples == 3 and agent.harness.control.temperature == 0
    backend = MockBackend(["no"])  # 3 greedy samples are identical: one request stands for all
    result = agent.run(Item(), model=backend)
    assert result.answer == "no" and result.error is None
    assert result.usage["completion_tokens"] == 1 and result.usage["total"] > 1
    assert len(backend.history) == 1 and list(backend.history[0].messages) == messages
    with pytest.raises(TypeError):
        agent.messages(42)


def load_harness_from_store(fx, cid):
    from evolve.runtime import Agent

    return Agent(fx.harnesses[cid])


@pytest.mark.embedded
def test_exported_bundle_runs_on_the_embedded_model(fx, tmp_path):
    files, _ = export_candidate(fx.store, "c1a", "json", tmp_path / "emb")
    agent = load_harness(files[0])
    short = agent.harness.model_copy(update={"control": agent.harness.control.model_copy(update={"max_tokens": 8})})
    result = Agent(short).run("Is the sky green on a clear day?", model="embedded")
    assert result.error is None and result.text.strip()
    assert result.answer == result.text.strip()  # answer mode `full`
    assert result.usage["prompt_tokens"] > 10 and 0 < result.usage["completion_tokens"] <= 8


def test_unscreenable_export_needs_allow_leaks(fx, tmp_path):
    from lineage_fixture import SEED

    from evolve.errors import EvolveError

    fx.store.create_run("moved", {"benchmark": str(tmp_path / "gone.jsonl"), "seed": 0})
    fx.store.add_candidate("m0", "moved", SEED, parent_id=None, round=-1, status="seed")
    with pytest.raises(EvolveError, match=r"cannot screen the export.*--allow-leaks"):
        export_candidate(fx.store, "m0", "json", tmp_path / "m")
    _, prov = export_candidate(fx.store, "m0", "json", tmp_path / "m", allow_leaks=True)
    assert prov.leakage["checked"] is False and prov.leakage["against"].startswith("not screened")


def test_tools_are_exported_as_function_definitions_beside_skills_and_prompt(tmp_path):
    from evolve.bench.tools import builtin_tool
    from evolve.harness import Harness
    from evolve.report.export import export

    harness = Harness(tools=(builtin_tool("read_file"), builtin_tool("run_tests")))
    for fmt in ("skills", "prompt"):
        files = export(harness, fmt, tmp_path / fmt, {})
        tools = json.loads((tmp_path / fmt / "tools.json").read_text(encoding="utf-8"))
        assert tmp_path / fmt / "tools.json" in files
        assert [t["function"]["name"] for t in tools] == ["read-file", "run-tests"]
        assert tools[0] == {"type": "function", "function": {"name": "read-file", "description": "Read a file of the "
                            "workspace.", "parameters": harness.tools[0].parameters}}
        assert "implementation" not in json.dumps(tools)
    export(Harness(), "prompt", tmp_path / "plain", {})
    assert not (tmp_path / "plain" / "tools.json").exists()


def test_agent_runs_the_multi_turn_loop_on_a_copy_of_a_workspace(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    replies = iter(['{"tool": "edit-file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}',
                    "Fixed add."])
    agent = load_harness(Path(__file__).resolve().parents[2] / "harnesses" / "agent")
    done = agent.run("Fix calc.py.", workspace=repo, model=MockBackend(lambda r: next(replies)))
    assert done.answer == "Fixed add." and done.error is None
    assert (done.workspace / "calc.py").read_text(encoding="utf-8").endswith("a + b\n")
    assert (repo / "calc.py").read_text(encoding="utf-8").endswith("a - b\n")  # the caller's folder is untouched
    assert "+    return a + b" in done.changes and [s["role"] for s in done.trajectory][:3] == ["user", "assistant",
                                                                                           "tool"]


def test_an_exported_choice_harness_says_how_it_answers_and_runs_as_an_agent(tmp_path):
    from evolve.report.export import control_summary, export_notes
    from evolve.runtime import Agent

    choice = {"labels": ("yes", "no"), "calibration": ("Is water wet?", "Is fire cold?")}
    h = Harness(system=(Section(name="task", text="Answer yes or no."),), control=Control(choice=choice))
    assert "answer by choice among 2 labels (calibrated on 2 inputs)" in control_summary(h)
    assert any("scoring its labels" in note for note in export_notes(h, "prompt", tmp_path))
    assert not any("scoring its labels" in note for note in export_notes(Harness(), "prompt", tmp_path))

    def scorer(request):
        text = request.messages[-1]["content"]
        return "yes" if "sky blue" in text or "wet" in text else "no"

    result = Agent(h).run("Is the sky blue?", model=MockBackend(scorer))
    assert result.answer == "yes" and result.error is None
