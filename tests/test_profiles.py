"""Profiles as data: built-in names, ``auto``, TOML profile files (validated, clear errors) and what a profile file
changes in a real run (persona, allowed tools, approvals, examples) against the real ``mcp-server-time`` over stdio."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.graph.run_context import run_context
from planwerk.graph.run_policy import RunPolicy
from planwerk.models.replay import ReplayChatModel
from planwerk.profiles import PROFILES, get_profile, load_profile_file
from planwerk.prompts import generic
from planwerk.prompts.examples import library
from planwerk.prompts.texts import texts_for
from planwerk.tools.config import load_config
from tests.helpers import make_agent
from tests.third_party import time_server

TIME_PLAN = json.dumps(
    {
        "steps": [
            {
                "description": "",
                "tools": [{"id": "tokyo", "name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}],
            }
        ],
        "final": None,
    }
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def time_config(tmp_path: Path) -> Path:
    """An MCP config with the real ``mcp-server-time`` over stdio."""
    command, *args = time_server()
    config = {"mcpServers": {"time": {"command": command, "args": args, "timeout": 30}}}
    return write(tmp_path / "mcp.json", json.dumps(config))


def test_auto_is_travel_with_the_bundled_servers_and_generic_with_a_config_of_ones_own() -> None:
    assert Context().profile == "auto"
    assert get_profile("auto").name == "travel"
    assert get_profile("auto", mcp_config="servers.json").name == "generic"
    assert get_profile("travel", mcp_config="servers.json").name == "travel"  # named: no guessing


def test_the_generic_profile_exists_in_german_and_english() -> None:
    german, english = get_profile("generic"), get_profile("generic-en")
    assert (german.language, english.language) == ("de", "en")
    assert german.persona == generic.PERSONA_DE and english.persona == generic.PERSONA_EN
    assert german.allowed_tools is None and english.allowed_tools is None  # any tools
    assert german.corpus is None  # the travel corpus would answer questions about other things
    for profile in (german, english):
        assert texts_for(profile).language == profile.language
        assert set(profile.refusals) == {"de", "en"}
        assert profile.refusals[profile.language] in profile.persona


def test_a_profile_file_becomes_a_profile(tmp_path: Path) -> None:
    examples = write(tmp_path / "clock-examples.json", json.dumps([{"question": "Time in Tokyo?", "plan": {}}]))
    (tmp_path / "docs").mkdir()
    path = write(
        tmp_path / "clock.toml",
        '''
persona = """You are a clock.
You tell the time."""
language = "en"
allowed_tools = ["get_current_time"]
approve = ["convert_time"]
examples = "clock-examples.json"
corpus = "docs"
uses_dates = false
plan_format = "expression"

[refusals]
en = "Only times."
''',
    )
    profile = get_profile(str(path))
    assert profile.name == "clock"  # the file's name without .toml
    assert profile.persona == "You are a clock.\nYou tell the time."
    assert profile.allowed_tools == frozenset({"get_current_time"}) and profile.approve == frozenset({"convert_time"})
    assert profile.examples == str(examples) and profile.corpus == str(tmp_path / "docs")
    assert profile.uses_dates is False and profile.refusals == {"en": "Only times."}
    assert profile.plan_format == "expression"


def test_a_minimal_profile_file_takes_the_generic_defaults(tmp_path: Path) -> None:
    profile = load_profile_file(write(tmp_path / "p.toml", 'persona = "Hi."\nname = "mine"\n'))
    assert profile.name == "mine" and profile.language == "en" and profile.examples == "generic"
    assert profile.allowed_tools is None and profile.corpus is None and profile.refusals == generic.REFUSALS


def test_a_runs_plan_format_overrides_the_profiles() -> None:
    from planwerk.graph.context import Context
    from planwerk.graph.run_context import profile_of

    assert profile_of(Context(profile="travel")).plan_format == "json"
    assert profile_of(Context(profile="travel", plan_format="expression")).plan_format == "expression"
    assert profile_of(Context(profile="math", plan_format="json")).plan_format == "json"
    assert profile_of(Context(profile="math")).plan_format == get_profile("math").plan_format
    with pytest.raises(ValueError, match=r"Context\.plan_format must be 'profile', 'json' or 'expression'"):
        Context(plan_format="yaml")  # type: ignore[arg-type]


def test_a_run_takes_its_profiles_model_unless_it_names_one(tmp_path: Path) -> None:
    from planwerk.graph.run_context import model_spec_of

    assert Context().model == "profile"
    assert model_spec_of(Context()) == model_spec_of(Context(profile="travel")) == "default"
    assert model_spec_of(Context(profile="math")) == "qwen2.5-coder-1.5b"
    assert model_spec_of(Context(profile="math", model="default")) == "default"
    assert model_spec_of(Context(profile="generic-en", model="qwen2.5-coder-1.5b")) == "qwen2.5-coder-1.5b"
    own = write(tmp_path / "own.toml", 'persona = "x"\nmodel = " endpoint:http://127.0.0.1:8080/v1 "\n')
    assert model_spec_of(Context(profile=str(own))) == "endpoint:http://127.0.0.1:8080/v1"
    plain = write(tmp_path / "plain.toml", 'persona = "x"\n')
    assert model_spec_of(Context(profile=str(plain))) == "default"
    with pytest.raises(ValueError, match="stands for the run's profile's model"):
        from planwerk.models.specs import load_chat_model

        load_chat_model("profile")  # loading needs a resolved spec; it never guesses a profile


def test_the_answers_are_written_by_the_profiles_answer_model_unless_the_run_names_a_model(tmp_path: Path) -> None:
    from planwerk.graph.run_context import answer_model_spec_of

    assert Context().answer_model == "profile"
    # A profile without an answer model: its model writes the answers, as the run's model does when it names one.
    assert answer_model_spec_of(Context(profile="math")) == "qwen2.5-coder-1.5b"
    assert answer_model_spec_of(Context(profile="math", model="default")) == "default"
    split = write(tmp_path / "split.toml", 'persona = "x"\nanswer_model = " qwen2.5-coder-1.5b "\n')
    assert get_profile(str(split)).answer_model == "qwen2.5-coder-1.5b"
    assert answer_model_spec_of(Context(profile=str(split))) == "qwen2.5-coder-1.5b"
    # A run that names one model gets that model throughout; one that names an answer model gets that one.
    assert answer_model_spec_of(Context(profile=str(split), model="default")) == "default"
    assert answer_model_spec_of(Context(profile="math", answer_model="default")) == "default"
    assert get_profile(str(write(tmp_path / "plain.toml", 'persona = "x"\n'))).answer_model is None


def test_an_edited_profile_file_is_read_again(tmp_path: Path) -> None:
    path = write(tmp_path / "p.toml", 'persona = "First."\n')
    assert get_profile(str(path)).persona == "First."
    write(path, 'persona = "Second, longer."\n')
    assert get_profile(str(path)).persona == "Second, longer."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('language = "en"\n', r"persona: missing; it is required"),
        ('persona = "x"\nlanguage = "fr"\n', r"language: Input should be 'de' or 'en'"),
        ('persona = "x"\npersonality = "y"\n', r"personality: unknown key; expected one of name, persona, language"),
        ('persona = "x"\nallowed_tools = "get_current_time"\n', r"allowed_tools: Input should be a valid list"),
        ('persona = "x"\napprove = [""]\n', r"approve\.0: String should have at least 1 character"),
        ('persona = "x"\nrefusals = {fr = "non"}\n', r"refusals\.fr\.\[key\]: Input should be 'de' or 'en'"),
        ('persona = "x"\nexamples = "missing.json"\n', r"examples: cannot read .*missing\.json .*packaged library"),
        ('persona = "x"\ncorpus = "nowhere"\n', r"corpus: .*nowhere does not exist"),
        ('persona = "x"\nplan_format = "yaml"\n', r"plan_format: Input should be 'json' or 'expression'"),
        ('persona = "x"\nmodel = "gpt"\n', r"model: .*unknown model spec 'gpt'; expected one of: default"),
        ('persona = "x"\nmodel = "profile"\n', r"model: .*'profile' would name the profile itself"),
        ('persona = "x"\nanswer_model = "gpt"\n', r"answer_model: .*unknown model spec 'gpt'; expected one of"),
        ('persona = "x\n', r"not valid TOML"),
    ],
)
def test_a_bad_profile_file_gets_one_error_naming_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "bad.toml", text)
    with pytest.raises(ValueError, match=message) as caught:
        get_profile(str(path))
    assert str(caught.value).startswith(f"profile file {path}")


def test_bad_examples_in_a_profile_file_are_named(tmp_path: Path) -> None:
    write(tmp_path / "ex.json", json.dumps([{"plan": {}}]))
    path = write(tmp_path / "p.toml", 'persona = "x"\nexamples = "ex.json"\n')
    with pytest.raises(ValueError, match=r"examples: .*ex\.json: 0\.question: missing"):
        get_profile(str(path))


def test_unknown_names_and_missing_files_are_refused_naming_what_is_known(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown profile 'astrology'; known profiles: auto, generic, generic-en"):
        get_profile("astrology")
    with pytest.raises(ValueError, match=r"profile file .*absent\.toml: cannot read it"):
        get_profile(str(tmp_path / "absent.toml"))
    # The server reads the run context the same way: a bad profile file is named before anything starts.
    allowed = RunPolicy(profile_dirs=(tmp_path.resolve(),))
    with pytest.raises(ValueError, match=r"absent\.toml: cannot read it"):
        run_context({"profile": str(tmp_path / "absent.toml")}, allowed)
    assert run_context({"profile": "generic-en"}).profile == "generic-en"
    assert set(PROFILES) == {"travel", "math", "generic", "generic-en"}


async def test_with_an_own_mcp_config_the_default_profile_is_generic(time_config: Path) -> None:
    model = ReplayChatModel.of([TIME_PLAN, "Die Uhr hat geantwortet."])  # the question's language
    async with make_agent(model, mcp_config=time_config) as planwerk:
        reply = await planwerk.ask("Wie spät ist es in Tokio?")
    system = str(model.prompts[0][0].content)
    assert system.startswith(generic.PERSONA_DE)
    assert "Reiseplaner" not in system and "get_current_time(" in system
    # The generic examples that fit the loaded tools are shown (the travel ones need tools that are not loaded).
    assert "Asia/Tokyo" in system or "America/New_York" in system
    result = next(e for e in reply.events if e["event"] == "tool_result")
    assert result["result"]["timezone"] == "Asia/Tokyo"  # the real server answered


async def test_a_profile_file_sets_persona_allowed_tools_and_approvals(time_config: Path, tmp_path: Path) -> None:
    profile = write(
        tmp_path / "clock.toml",
        'persona = "You are a strict clock."\nallowed_tools = ["get_current_time", "convert_time"]\n'
        'approve = ["get_current_time"]\n',
    )
    model = ReplayChatModel.of([TIME_PLAN, "The clock tool answered."])
    async with make_agent(model, mcp_config=time_config, profile=str(profile)) as planwerk:
        reply = await planwerk.ask("What time is it in Tokyo?")
        system = str(model.prompts[0][0].content)
        assert system.startswith("You are a strict clock.") and "\nRules:\n" in system  # English protocol
        # The profile's approve list pauses the call although the server does not mark it destructive.
        assert [i["kind"] for i in reply.interrupts] == ["approval"] and reply.answer is None
        approved = await planwerk.resume("approve", thread_id=reply.thread_id)
    assert approved.answer == "The clock tool answered."
    assert any(e["event"] == "tool_result" and e["tool"] == "get_current_time" for e in approved.events)


async def test_a_profile_files_allowed_tools_limit_the_plan(time_config: Path, tmp_path: Path) -> None:
    profile = write(tmp_path / "convert.toml", 'persona = "You convert times."\nallowed_tools = ["convert_time"]\n')
    model = ReplayChatModel.of([TIME_PLAN, TIME_PLAN, TIME_PLAN])
    async with make_agent(model, mcp_config=time_config, profile=str(profile)) as planwerk:
        reply = await planwerk.ask("What time is it in Tokyo?")
    assert "get_current_time(" not in str(model.prompts[0][0].content)
    assert not any(e["event"] == "tool_call" for e in reply.events)  # the plan check refused the hidden tool
    assert any(e["event"] == "replan" and "get_current_time" in e["reason"] for e in reply.events)


def test_cli_takes_a_profile_file_and_names_a_bad_one(tmp_path: Path, time_config: Path) -> None:
    bad = write(tmp_path / "bad.toml", 'persona = "x"\nlanguage = "fr"\n')
    done = subprocess.run(
        [sys.executable, "-m", "planwerk.cli", "ask", "Hi?", "--profile", str(bad), "--mcp-config", str(time_config)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PLANWERK_HOME": str(tmp_path / "home"), "COLUMNS": "200"},
    )
    assert done.returncode == 2, done.stderr
    assert "language: Input should be 'de' or 'en'" in done.stderr and str(bad) in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_runs_the_model_a_profile_file_names_when_the_run_names_none(tmp_path: Path, time_config: Path) -> None:
    replies = write(tmp_path / "replies.json", json.dumps([TIME_PLAN, "The profile's own model answered."]))
    profile = write(tmp_path / "clock.toml", f'persona = "You are a clock."\nmodel = "replay:{replies}"\n')
    args = ["ask", "What time is it in Tokyo?", "--json", "--no-retrieval", "--profile", str(profile)]
    args += ["--mcp-config", str(time_config), "--today", "2026-11-22"]
    env = {"PATH": "/usr/bin:/bin", "PLANWERK_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "planwerk.cli", *args], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["answer"] == "The profile's own model answered."
    # A profile whose model cannot work is named before any server starts.
    gone = tmp_path / "gone.json"
    write(profile, f'persona = "You are a clock."\nmodel = "replay:{gone}"\n')
    with pytest.raises(ValueError, match=r"replay file not found: .*gone\.json"):
        Agent(profile=str(profile), mcp_config=time_config)


def test_cli_runs_with_a_profile_file(tmp_path: Path, time_config: Path) -> None:
    profile = write(tmp_path / "clock.toml", 'persona = "You are a clock."\n')
    replies = write(tmp_path / "replies.json", json.dumps([TIME_PLAN, "The clock tool answered."]))
    args = ["ask", "What time is it in Tokyo?", "--json", "--no-retrieval", "--profile", str(profile)]
    args += ["--mcp-config", str(time_config), "--model", f"replay:{replies}", "--today", "2026-11-22"]
    done = subprocess.run(
        [sys.executable, "-m", "planwerk.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PLANWERK_HOME": str(tmp_path / "home"), "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    events: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events][-1] == "final_answer"
    assert events[-1]["answer"] == "The clock tool answered."


def test_the_documented_profile_file_and_examples_are_valid(tmp_path: Path) -> None:
    docs = (Path(__file__).parents[1] / "docs" / "profiles.md").read_text(encoding="utf-8")
    [toml_block] = re.findall(r"```toml\n(.*?)```", docs, re.S)
    examples_block, config_block = re.findall(r"```json\n(.*?)```", docs, re.S)
    write(tmp_path / "clock-examples.json", examples_block)
    profile = get_profile(str(write(tmp_path / "clock.toml", toml_block)))
    assert profile.name == "clock" and profile.allowed_tools == frozenset({"get_current_time", "convert_time"})
    assert library(profile.examples)[0].tools == frozenset({"get_current_time"})
    servers = load_config(config_block).servers
    assert servers["work"].tool_prefix == "job" and servers["home"].tool_prefix is None
    # The finalizer reads the persona without its rule for declining once a tool has delivered.
    assert "Refuse" in profile.persona_for_answer(False) and "Refuse" not in profile.persona_for_answer(True)


def test_the_generic_persona_refuses_only_when_no_tool_fits() -> None:
    # An unconditional "refuse … with exactly this sentence" was copied as the reason of empty plans on questions
    # a loaded tool fitted (issue 29); the refusal must be conditional and say that it is wrong when a tool fits.
    for persona, refusal in (
        (generic.PERSONA_EN, generic.REFUSAL_OUT_OF_SCOPE_EN),
        (generic.PERSONA_DE, generic.REFUSAL_OUT_OF_SCOPE_DE),
    ):
        before, _, after = persona.casefold().partition(refusal.casefold())
        condition = before.rsplit("\n\n", 1)[-1]
        assert ("only when none of the tools" in condition) or ("nur, wenn keines der werkzeuge" in condition)
        assert ("that sentence is wrong" in after) or ("ist dieser satz falsch" in after)
