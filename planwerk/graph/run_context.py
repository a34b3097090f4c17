"""The run's context as the graph reads it: a served run's context parsed and limited by the operator's policy
(:func:`run_context`), and the profile and model spec a context names (:func:`profile_of`, :func:`model_spec_of`).

They sit beside :class:`~planwerk.graph.context.Context` (not in the serving or node modules that call them) so that
the nodes, the composition root (:mod:`planwerk.graph.runtime`) and the servers (:mod:`planwerk.serving`) import
them downwards.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic import TypeAdapter, ValidationError

from planwerk.graph.context import Context
from planwerk.graph.run_policy import RunPolicy
from planwerk.models.specs import PROFILE_MODEL
from planwerk.profiles import Profile, get_profile


def profile_of(context: Context) -> Profile:
    """The run's profile (``auto`` depends on whether the run has an MCP config of its own), with the run's
    ``Context.plan_format`` when it sets one."""
    profile = get_profile(context.profile, mcp_config=context.mcp_config)
    if context.plan_format != "profile" and context.plan_format != profile.plan_format:
        return replace(profile, plan_format=context.plan_format)
    return profile


def model_spec_of(context: Context) -> str:
    """The run's chat model spec: ``Context.model``, or its profile's model when it says ``profile`` (the default)."""
    if context.model.strip() == PROFILE_MODEL:
        return profile_of(context).model
    return context.model


def answer_model_spec_of(context: Context) -> str:
    """The chat model spec that writes the run's answers: ``Context.answer_model``; where it says ``profile``, the
    profile's answer model when the run's model is the profile's too, else the run's model (a run that names one
    model gets that model throughout)."""
    if names_answer_model(context):
        return context.answer_model
    if context.model.strip() == PROFILE_MODEL:
        profile = profile_of(context)
        return profile.answer_model or profile.model
    return context.model


def names_answer_model(context: Context) -> bool:
    """Whether the run names the model that writes its answers (``Context.answer_model`` is no ``profile``)."""
    return context.answer_model.strip() != PROFILE_MODEL


def run_context(value: Any, policy: RunPolicy | None = None) -> Context:
    """The run's :class:`Context` from what the server passes (a dict, a ``Context`` or ``None``), limited to what
    the operator allowed (``policy``, default :meth:`RunPolicy.from_env`, see :mod:`planwerk.graph.run_policy`).

    Unknown keys are dropped (the server mirrors other configurable values into the context), ``null`` means the
    default; a bad value for a known key raises ``ValueError`` naming the key and what was expected, and so does a
    file, folder or model server the operator did not allow (:class:`~planwerk.graph.run_policy.RunPolicyError`).
    Runs before anything is opened or started.
    """
    policy = RunPolicy.from_env() if policy is None else policy
    # The policy first: a profile file is read only once it is known to lie in the operator's folders.
    context = policy.apply(_parsed_context(value))
    get_profile(context.profile, mcp_config=context.mcp_config)  # an unknown profile: the message names the known ones
    return context


def _parsed_context(value: Any) -> Context:
    if value is None:
        return Context()
    if isinstance(value, Context):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"run context must be an object with Context fields, got {type(value).__name__}")
    # A form may send null for a field left empty: that means its default.
    known = {k: v for k, v in value.items() if k in _CONTEXT_FIELDS and v is not None}
    try:
        context = _CONTEXT_ADAPTER.validate_python(known)
    except ValidationError as error:
        problems = "; ".join(f"context.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ValueError(f"invalid run context: {problems}") from None
    return context


_CONTEXT_FIELDS = frozenset(f.name for f in dataclasses.fields(Context))
_CONTEXT_ADAPTER: TypeAdapter[Context] = TypeAdapter(Context)
