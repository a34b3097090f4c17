"""What a served run may choose: only the files, folders and model servers the operator allowed.

A run's :class:`~planwerk.graph.context.Context` comes from whoever can reach the server (with authentication off,
any web page the developer visits can reach a loopback server). Several of its fields name things on the server:
``mcp_config`` (which servers to start, with what commands and environment), ``model`` and ``answer_model`` (a
model folder, GGUF or replay file, or an ``endpoint:`` URL that gets the operator's API key), ``profile`` (a profile
file, which names a corpus, examples and models of its own) and ``embedding_model`` (a folder). :class:`RunPolicy`
lets a run choose among what the operator listed in the server's environment, and nothing else:

- ``PLANWERK_MCP_CONFIGS``: a folder of MCP config files; ``mcp_config`` names a file in it (relative to it, or an
  absolute path inside it). Inline JSON is refused. Unset: only the bundled servers (``mcp_config`` empty).
- ``PLANWERK_ALLOWED_ENDPOINTS``: comma-separated URL prefixes an ``endpoint:`` model may start with (the
  operator's ``PLANWERK_ENDPOINT_API_KEY`` goes only there, see :func:`planwerk.models.endpoint_keys.endpoint_allowed`).
  Unset: no ``endpoint:`` model.
- ``PLANWERK_MODEL_DIRS``: folders (``os.pathsep``-separated) holding the ``hf:``, ``gguf:`` (and its tokenizer
  folder) and ``replay:`` files and the ``embedding_model`` folders runs may name. Unset: only the packaged models
  (``profile``, ``default``, ``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``) and embedders (``default``,
  ``embeddinggemma``).
- ``PLANWERK_PROFILE_DIRS``: folders of profile files runs may name; a profile file's corpus and examples must lie
  in one of them too, and its model passes the model rules above. Unset: only the built-in profiles.
- ``PLANWERK_LEARN_EXAMPLES``: ``1`` lets runs set ``learn_examples``, which writes the server's one examples file
  (``$PLANWERK_HOME/examples.jsonl``) that every user's planner reads: one user's plans become every user's
  few-shot examples. Unset (or ``0``): ``learn_examples=true`` is refused.

Paths are resolved (``..`` and symbolic links followed) before they are compared, so nothing outside the folders is
reachable through them; a relative name is looked up in the folders. The checked context names the resolved paths.
The Python API and the CLI do not use this: they run as the user who typed the values.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from planwerk.graph.context import Context
from planwerk.models.endpoint_keys import ALLOWED_ENDPOINTS_ENV, allowed_endpoints, endpoint_allowed
from planwerk.models.specs import PROFILE_MODEL, endpoint_base_url, parse_model_spec
from planwerk.profiles import AUTO, PROFILES, Profile, get_profile, is_profile_path

MCP_CONFIGS_ENV = "PLANWERK_MCP_CONFIGS"
"""The folder of MCP config files a run's ``mcp_config`` may name."""
MODEL_DIRS_ENV = "PLANWERK_MODEL_DIRS"
"""Folders (``os.pathsep``-separated) of the model, replay and embedder files a run may name."""
PROFILE_DIRS_ENV = "PLANWERK_PROFILE_DIRS"
"""Folders (``os.pathsep``-separated) of the profile files (with their corpora and examples) a run may name."""
LEARN_EXAMPLES_ENV = "PLANWERK_LEARN_EXAMPLES"
"""``1``: runs may set ``learn_examples`` (the learned examples are shared by every user of the server)."""
_YES, _NO = frozenset({"1", "true", "yes", "on"}), frozenset({"", "0", "false", "no", "off"})
PACKAGED_EMBEDDERS = frozenset({"default", "all-MiniLM-L6-v2", "embeddinggemma"})
"""``embedding_model`` names that are no path: the packaged embedder and the installed EmbeddingGemma."""


class RunPolicyError(ValueError):
    """A run's context names something the operator did not allow (the message says what and which setting)."""


@dataclass(frozen=True)
class RunPolicy:
    """The operator's limits on what a served run's context may name (see the module doc)."""

    mcp_configs: Path | None = None
    """The folder of MCP config files; ``None``: only the bundled servers."""
    allowed_endpoints: tuple[str, ...] = ()
    """URL prefixes an ``endpoint:`` model may start with."""
    model_dirs: tuple[Path, ...] = ()
    """Folders of model, replay and embedder files."""
    profile_dirs: tuple[Path, ...] = ()
    """Folders of profile files and what they name (corpus, examples)."""
    learn_examples: bool = False
    """Whether runs may add to the server's shared examples file (``learn_examples``)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RunPolicy:
        """The policy the server's environment sets (folders resolved; a listed folder need not exist yet)."""
        env = os.environ if env is None else env
        configs = env.get(MCP_CONFIGS_ENV, "").strip()
        return cls(
            mcp_configs=_folder(configs) if configs else None,
            allowed_endpoints=allowed_endpoints(env) or (),
            model_dirs=_folders(env.get(MODEL_DIRS_ENV, "")),
            profile_dirs=_folders(env.get(PROFILE_DIRS_ENV, "")),
            learn_examples=_switch(env.get(LEARN_EXAMPLES_ENV, ""), LEARN_EXAMPLES_ENV),
        )

    def apply(self, context: Context) -> Context:
        """``context`` with every file it names resolved inside the operator's folders (the same object when it
        names none); :class:`RunPolicyError` naming the field and the setting otherwise."""
        if context.learn_examples and not self.learn_examples:
            raise RunPolicyError(
                "context.learn_examples: this server does not learn examples from runs (they would be shared with "
                f"every user of the server; the operator allows it with {LEARN_EXAMPLES_ENV}=1); leave it false"
            )
        changes: dict[str, str | None] = {}
        mcp_config = self._mcp_config(context.mcp_config)
        if mcp_config != context.mcp_config:
            changes["mcp_config"] = mcp_config
        profile_spec = self._profile_spec(context.profile)
        if profile_spec != context.profile:
            changes["profile"] = profile_spec
        if context.model.strip() == PROFILE_MODEL:
            profile = get_profile(profile_spec, mcp_config=mcp_config)
            model = self._model(profile.model, f"the model of profile {profile.name!r}")
            if model != profile.model:  # the profile file's model, resolved: the run loads that one
                changes["model"] = model
            if context.answer_model.strip() == PROFILE_MODEL and profile.answer_model is not None:
                answer = self._model(profile.answer_model, f"the answer model of profile {profile.name!r}")
                # Pinned where the run's model was: a resolved model no longer says "profile".
                if answer != profile.answer_model or "model" in changes:
                    changes["answer_model"] = answer
        else:
            model = self._model(context.model, "context.model")
            if model != context.model:
                changes["model"] = model
        if context.answer_model.strip() != PROFILE_MODEL:
            answer = self._model(context.answer_model, "context.answer_model")
            if answer != context.answer_model:
                changes["answer_model"] = answer
        if is_profile_path(profile_spec):
            self._profile_contents(get_profile(profile_spec), profile_spec)
        embedder = self._embedder(context.embedding_model)
        if embedder != context.embedding_model:
            changes["embedding_model"] = embedder
        return dataclasses.replace(context, **changes) if changes else context  # type: ignore[arg-type]

    # --- the fields ----------------------------------------------------------------------------------------------

    def _mcp_config(self, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if value.lstrip().startswith("{"):
            raise RunPolicyError(
                "context.mcp_config: the server takes no inline MCP config (it would start commands of the request's "
                f"choosing); name a config file of the operator's folder {MCP_CONFIGS_ENV}, or leave it empty for "
                "the bundled servers"
            )
        if self.mcp_configs is None:
            raise RunPolicyError(
                f"context.mcp_config: this server offers only the bundled MCP servers (the operator set no "
                f"{MCP_CONFIGS_ENV}); leave mcp_config empty"
            )
        return str(_inside(value, (self.mcp_configs,), "context.mcp_config", MCP_CONFIGS_ENV, "an MCP config file"))

    def _profile_spec(self, value: str) -> str:
        if value == AUTO or value in PROFILES or not is_profile_path(value):
            return value  # a built-in name (an unknown one is refused by get_profile, naming the known ones)
        if not self.profile_dirs:
            known = ", ".join([AUTO, *sorted(PROFILES)])
            raise RunPolicyError(
                f"context.profile: this server offers only the built-in profiles ({known}); the operator set no "
                f"{PROFILE_DIRS_ENV} for profile files"
            )
        return str(_inside(value, self.profile_dirs, "context.profile", PROFILE_DIRS_ENV, "a profile file"))

    def _profile_contents(self, profile: Profile, spec: str) -> None:
        """A profile file's own paths (corpus, examples) lie in the profile folders too; its model is checked
        with the run's (:meth:`apply`)."""
        where = f"profile file {spec}"
        for field, value in (("corpus", profile.corpus), ("examples", profile.examples)):
            if value is not None and Path(value).is_absolute():  # packaged names ("default", "generic") are no path
                _inside(value, self.profile_dirs, f"{where}: {field}", PROFILE_DIRS_ENV, f"its {field}")

    def _model(self, value: str, where: str) -> str:
        """The model spec with its files resolved; packaged names pass, endpoints only from the allow-list."""
        spec = parse_model_spec(value)  # ValueError naming the accepted forms
        if spec.kind in ("default", "packaged"):
            return value
        if spec.kind == "endpoint":
            if not endpoint_allowed(endpoint_base_url(spec.target), self.allowed_endpoints):
                listed = (
                    f"the operator allows {', '.join(self.allowed_endpoints)}"
                    if self.allowed_endpoints
                    else "the operator allows none"
                )
                raise RunPolicyError(
                    f"{where}: endpoint {spec.target} is not a model server this server may use ({listed}, "
                    f"{ALLOWED_ENDPOINTS_ENV}); name a packaged model such as 'default'"
                )
            return value
        if not self.model_dirs:
            raise RunPolicyError(
                f"{where}: {spec.kind}: names a file on the server, and the operator set no {MODEL_DIRS_ENV}; "
                "name a packaged model such as 'default' or 'qwen2.5-coder-1.5b'"
            )
        what = {"hf": "a model folder", "gguf": "a GGUF file", "replay": "a replay file"}[spec.kind]
        target = str(_inside(spec.target, self.model_dirs, where, MODEL_DIRS_ENV, what))
        extra = spec.extra
        if spec.kind == "gguf" and extra:
            extra = str(_inside(extra, self.model_dirs, f"{where} (tokenizer)", MODEL_DIRS_ENV, "a tokenizer folder"))
        return f"{spec.kind}:{target}" + (f"#{extra}" if extra else "")

    def _embedder(self, value: str) -> str:
        if not value.strip() or value in PACKAGED_EMBEDDERS:  # empty: the default embedder
            return value
        if not self.model_dirs:
            raise RunPolicyError(
                f"context.embedding_model: {value!r} names a folder on the server, and the operator set no "
                f"{MODEL_DIRS_ENV}; expected one of {', '.join(sorted(PACKAGED_EMBEDDERS))}"
            )
        return str(_inside(value, self.model_dirs, "context.embedding_model", MODEL_DIRS_ENV, "an embedder folder"))


def _switch(text: str, setting: str) -> bool:
    value = text.strip().lower()
    if value in _YES or value in _NO:
        return value in _YES
    raise ValueError(f"{setting} must be 1 or 0 (true/false, yes/no, on/off), got {text!r}")


def _folder(text: str) -> Path:
    return Path(text).expanduser().resolve()


def _folders(text: str) -> tuple[Path, ...]:
    return tuple(_folder(part) for part in text.split(os.pathsep) if part.strip())


def _inside(value: str, folders: Sequence[Path], where: str, setting: str, what: str) -> Path:
    """``value`` resolved inside one of ``folders``: an absolute path as it is, a relative one in the first folder
    that has it (else the first folder). :class:`RunPolicyError` when it resolves outside all of them."""
    path = Path(value.strip()).expanduser()
    if path.is_absolute():
        candidates = [path.resolve()]
    else:
        candidates = [(folder / path).resolve() for folder in folders]
        candidates.sort(key=lambda p: not p.exists())  # stable: the first folder that has it
    for candidate in candidates:
        if any(candidate.is_relative_to(folder) for folder in folders):
            return candidate
    # The folders themselves are not named: they are the operator's business, not the client's.
    raise RunPolicyError(
        f"{where}: {value!r} is not {what} in the operator's folder(s) {setting}; name one inside it (paths are "
        "resolved, links followed)"
    )
