"""What a served run's context may name (:mod:`planwerk.graph.run_policy`): only the operator's files, folders and
model servers; inline MCP configs never. In-process, through :func:`planwerk.graph.run_context.run_context`, which the
LangGraph server's factory and Aegra's graph both call before anything is opened."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planwerk.graph.context import Context
from planwerk.graph.run_context import run_context
from planwerk.graph.run_policy import RunPolicy, RunPolicyError

SHELL_CONFIG = json.dumps({"mcpServers": {"x": {"command": "/bin/sh", "args": ["-c", "id > /tmp/p"]}}})
"""The issue's request: an inline config whose server is a shell."""


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """The operator's folders and a folder outside them, with a file in each."""
    out = {name: tmp_path / name for name in ("configs", "models", "profiles", "outside")}
    for folder in out.values():
        folder.mkdir()
    (out["configs"] / "team.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    (out["outside"] / "other.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    (out["models"] / "run.json").write_text("[]", encoding="utf-8")
    (out["outside"] / "run.json").write_text("[]", encoding="utf-8")
    return out


def policy_of(folders: dict[str, Path], endpoints: tuple[str, ...] = ()) -> RunPolicy:
    return RunPolicy.from_env(
        {
            "PLANWERK_MCP_CONFIGS": str(folders["configs"]),
            "PLANWERK_MODEL_DIRS": str(folders["models"]),
            "PLANWERK_PROFILE_DIRS": str(folders["profiles"]),
            "PLANWERK_ALLOWED_ENDPOINTS": ",".join(endpoints),
        }
    )


def test_an_inline_mcp_config_is_refused_whatever_the_operator_allows(folders: dict[str, Path]) -> None:
    for policy in (RunPolicy(), policy_of(folders)):
        with pytest.raises(RunPolicyError, match="the server takes no inline MCP config"):
            run_context({"mcp_config": SHELL_CONFIG}, policy)
        with pytest.raises(RunPolicyError, match="no inline MCP config"):
            run_context(Context(mcp_config="  " + SHELL_CONFIG), policy)  # a Context object is checked too


def test_without_a_config_folder_only_the_bundled_servers_are_allowed(folders: dict[str, Path]) -> None:
    assert run_context({}, RunPolicy()).mcp_config is None
    with pytest.raises(RunPolicyError, match=r"only the bundled MCP servers .*PLANWERK_MCP_CONFIGS"):
        run_context({"mcp_config": str(folders["configs"] / "team.json")}, RunPolicy())


def test_a_config_is_named_inside_the_operators_folder_and_nothing_leads_out(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    policy = policy_of(folders)
    inside = str((folders["configs"] / "team.json").resolve())
    assert run_context({"mcp_config": "team.json"}, policy).mcp_config == inside
    assert run_context({"mcp_config": inside}, policy).mcp_config == inside
    (folders["configs"] / "link.json").symlink_to(folders["outside"] / "other.json")
    (folders["configs"] / "sub").symlink_to(folders["outside"], target_is_directory=True)
    for escape in (
        "../outside/other.json",
        str(folders["outside"] / "other.json"),
        "link.json",
        "sub/other.json",
        str(folders["configs"] / ".." / "outside" / "other.json"),
    ):
        with pytest.raises(RunPolicyError, match="is not an MCP config file in the operator's folder") as error:
            run_context({"mcp_config": escape}, policy)
        assert str(tmp_path) not in str(error.value).replace(escape, "")  # the operator's folders are not named


def test_model_files_lie_in_the_operators_model_folders(folders: dict[str, Path]) -> None:
    policy = policy_of(folders)
    for packaged in ("profile", "default", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"):
        assert run_context({"model": packaged}, RunPolicy()).model == packaged
    inside = (folders["models"] / "run.json").resolve()
    assert run_context({"model": "replay:run.json"}, policy).model == f"replay:{inside}"
    with pytest.raises(RunPolicyError, match="operator set no PLANWERK_MODEL_DIRS"):
        run_context({"model": f"replay:{inside}"}, RunPolicy())
    for spec in (
        f"replay:{folders['outside'] / 'run.json'}",
        "replay:../outside/run.json",
        f"hf:{folders['outside']}",
        "hf:/",
        f"gguf:{folders['outside'] / 'm.gguf'}",
        f"gguf:{folders['models'] / 'm.gguf'}#{folders['outside']}",  # the tokenizer folder too
    ):
        with pytest.raises(RunPolicyError, match=r"context\.model.* is not a .* in the operator's folder"):
            run_context({"model": spec}, policy)


def test_endpoints_only_from_the_operators_list(folders: dict[str, Path]) -> None:
    policy = policy_of(folders, ("http://10.0.0.5:8080/v1", "https://models.example"))
    for allowed in (
        "endpoint:http://10.0.0.5:8080/v1",
        "endpoint:http://10.0.0.5:8080",
        "endpoint:https://models.example/x/v1#m",
    ):
        assert run_context({"model": allowed}, policy).model == allowed
    for refused in (
        "endpoint:http://evil.example/v1",
        "endpoint:http://10.0.0.5:8080.evil.example/v1",
        "endpoint:http://10.0.0.5:80800/v1",
        "endpoint:https://10.0.0.5:8080/v1",
        "endpoint:http://10.0.0.5:8080/v10",
        "endpoint:https://models.example.evil/v1",
        "endpoint:https://user@evil.example/v1",
    ):
        with pytest.raises(RunPolicyError, match="is not a model server this server may use"):
            run_context({"model": refused}, policy)
    with pytest.raises(RunPolicyError, match="the operator allows none"):
        run_context({"model": "endpoint:http://10.0.0.5:8080/v1"}, RunPolicy())


def test_profile_files_and_what_they_name_stay_in_the_operators_folders(folders: dict[str, Path]) -> None:
    policy = policy_of(folders, ("http://10.0.0.5:8080/v1",))
    profiles = folders["profiles"]
    (profiles / "plain.toml").write_text('persona = "You help."\n', encoding="utf-8")
    assert run_context({"profile": "plain.toml"}, policy).profile == str((profiles / "plain.toml").resolve())
    assert run_context({"profile": "math"}, RunPolicy()).profile == "math"
    with pytest.raises(RunPolicyError, match="only the built-in profiles"):
        run_context({"profile": str(profiles / "plain.toml")}, RunPolicy())
    (folders["outside"] / "p.toml").write_text('persona = "You help."\n', encoding="utf-8")
    with pytest.raises(RunPolicyError, match="is not a profile file in the operator's folder"):
        run_context({"profile": str(folders["outside"] / "p.toml")}, policy)
    # A profile inside whose corpus, examples or model lead outside.
    (folders["outside"] / "docs").mkdir()
    (profiles / "corpus.toml").write_text('persona = "x"\ncorpus = "../outside/docs"\n', encoding="utf-8")
    with pytest.raises(RunPolicyError, match=r"corpus: .* is not its corpus in the operator's folder"):
        run_context({"profile": "corpus.toml"}, policy)
    example = [{"question": "q", "plan": {"steps": [], "final": "a"}}]
    (folders["outside"] / "ex.json").write_text(json.dumps(example), encoding="utf-8")
    (profiles / "examples.toml").write_text('persona = "x"\nexamples = "../outside/ex.json"\n', encoding="utf-8")
    with pytest.raises(RunPolicyError, match=r"examples: .* is not its examples in the operator's folder"):
        run_context({"profile": "examples.toml"}, policy)
    (profiles / "evil.toml").write_text('persona = "x"\nmodel = "endpoint:http://evil.example/v1"\n', encoding="utf-8")
    with pytest.raises(RunPolicyError, match=r"the model of profile 'evil': endpoint .* is not a model server"):
        run_context({"profile": "evil.toml"}, policy)
    outside_replay = folders["outside"] / "run.json"
    (profiles / "replay.toml").write_text(f'persona = "x"\nmodel = "replay:{outside_replay}"\n', encoding="utf-8")
    with pytest.raises(RunPolicyError, match=r"the model of profile 'replay': .* is not a replay file"):
        run_context({"profile": "replay.toml"}, policy)
    # The run's own model replaces the profile's: then the profile's is not loaded, and not checked.
    assert run_context({"profile": "evil.toml", "model": "default"}, policy).model == "default"
    # A profile's model inside the model folders is what the run loads, resolved.
    inside_replay = (folders["models"] / "run.json").resolve()
    (profiles / "ok.toml").write_text('persona = "x"\nmodel = "replay:run.json"\n', encoding="utf-8")
    assert run_context({"profile": "ok.toml"}, policy).model == f"replay:{inside_replay}"


def test_a_profile_file_outside_the_folders_is_not_read(folders: dict[str, Path]) -> None:
    # Not even its existence or its syntax errors reach the client: the policy refuses before the file is read.
    broken = folders["outside"] / "broken.toml"
    broken.write_text("persona = \n", encoding="utf-8")
    with pytest.raises(RunPolicyError, match="is not a profile file") as error:
        run_context({"profile": str(broken)}, policy_of(folders))
    assert "TOML" not in str(error.value)


def test_embedder_folders_lie_in_the_model_folders(folders: dict[str, Path]) -> None:
    policy = policy_of(folders)
    for name in ("default", "embeddinggemma"):
        assert run_context({"embedding_model": name}, RunPolicy()).embedding_model == name
    (folders["models"] / "embedder").mkdir()
    inside = str((folders["models"] / "embedder").resolve())
    assert run_context({"embedding_model": "embedder"}, policy).embedding_model == inside
    for refused in (str(folders["outside"]), "../outside", "/"):
        with pytest.raises(RunPolicyError, match="embedding_model"):
            run_context({"embedding_model": refused}, policy)


def test_learning_examples_needs_the_operators_consent() -> None:
    # The learned examples land in one file every user's planner reads: a run may not write it unasked.
    with pytest.raises(RunPolicyError, match=r"context.learn_examples: .*shared .*PLANWERK_LEARN_EXAMPLES=1"):
        run_context({"learn_examples": True}, RunPolicy.from_env({}))
    assert run_context({"learn_examples": False}, RunPolicy.from_env({})).learn_examples is False
    for allowed in ("1", "true", "on"):
        policy = RunPolicy.from_env({"PLANWERK_LEARN_EXAMPLES": allowed})
        assert run_context({"learn_examples": True}, policy).learn_examples is True
    with pytest.raises(RunPolicyError, match="learn_examples"):
        run_context({"learn_examples": True}, RunPolicy.from_env({"PLANWERK_LEARN_EXAMPLES": "0"}))
    with pytest.raises(ValueError, match="PLANWERK_LEARN_EXAMPLES must be 1 or 0"):
        RunPolicy.from_env({"PLANWERK_LEARN_EXAMPLES": "sometimes"})


def test_the_answer_model_is_held_to_the_same_rules_as_the_model(folders: dict[str, Path]) -> None:
    policy = policy_of(folders, ("http://10.0.0.5:8080/v1",))
    assert run_context({"answer_model": "qwen2.5-coder-1.5b"}, RunPolicy()).answer_model == "qwen2.5-coder-1.5b"
    inside = (folders["models"] / "run.json").resolve()
    assert run_context({"answer_model": "replay:run.json"}, policy).answer_model == f"replay:{inside}"
    with pytest.raises(RunPolicyError, match=r"context\.answer_model.* is not a .* in the operator's folder"):
        run_context({"answer_model": f"replay:{folders['outside'] / 'run.json'}"}, policy)
    with pytest.raises(RunPolicyError, match=r"context\.answer_model: endpoint .* is not a model server"):
        run_context({"answer_model": "endpoint:http://evil.example/v1"}, policy)
    profiles = folders["profiles"]
    (profiles / "evil.toml").write_text(
        'persona = "x"\nanswer_model = "endpoint:http://evil.example/v1"\n', encoding="utf-8"
    )
    with pytest.raises(RunPolicyError, match=r"the answer model of profile 'evil': endpoint .* is not a model server"):
        run_context({"profile": "evil.toml"}, policy)
    # The run's own model writes its answers too: the profile's answer model is then not loaded, and not checked.
    assert run_context({"profile": "evil.toml", "model": "default"}, policy).answer_model == "profile"
    # A profile's answer model inside the model folders is what the run loads, resolved and pinned.
    (profiles / "ok.toml").write_text('persona = "x"\nanswer_model = "replay:run.json"\n', encoding="utf-8")
    assert run_context({"profile": "ok.toml"}, policy).answer_model == f"replay:{inside}"
