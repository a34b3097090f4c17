"""The model seam: planwerk talks to any langchain-core chat model.

A model that can constrain its decoding to a JSON schema implements :class:`SupportsPlanSchema`; the planner
then asks it for a variant bound to the schema of valid plans for the loaded tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel


@runtime_checkable
class SupportsPlanSchema(Protocol):
    """A chat model that can generate under a JSON schema (constrained decoding)."""

    def with_plan_schema(self, schema: Mapping[str, Any]) -> BaseChatModel:
        """A model that generates only text matching ``schema`` (the same model, differently bound)."""
        ...
