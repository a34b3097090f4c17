"""The plan check: everything that can be known wrong before a single tool runs.

Unknown or disallowed tools, arguments that do not fit the tool's input schema, duplicate ids, references to
unknown ids or to calls of the same or a later step, and paths the referenced tool's declared output schema does
not have. All problems are collected into one message for the planner. Pure: no I/O.
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Collection, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from planwerk.core.extract import EXTRACT_TOOL
from planwerk.core.plan import Plan
from planwerk.core.refs import USER_ROOT, Ref, RefError, iter_refs, literal_strings, ref_text, retarget_refs
from planwerk.core.repair import repair_arguments
from planwerk.core.tools import ToolSpec
from planwerk.text.places import fold

_LOOKS_LIKE_REF = re.compile(r"\s*[<{\[(]\s*\$?ref\s*[>}\])]\s*[:=.]|\s*\$ref\b", re.IGNORECASE)
"""A text argument that begins like a reference in a form the protocol does not have ("<ref>:f.x", "{ref}=f.x",
"$ref = f.x"); the protocol's own ``"$ref:f.x"`` is a reference, not text, and "Ref: INV-12" is a value."""

MAX_CALLS = 64
"""A plan with more calls than this is rejected (runaway generation)."""


class PlanCheckError(ValueError):
    """A plan failed the check; ``problems`` lists each finding, the message joins them for the planner."""

    def __init__(self, problems: list[str]):
        super().__init__("The plan was rejected:\n" + "\n".join(f"- {p}" for p in problems))
        self.problems = problems


def check_plan(
    plan: Plan,
    specs: Mapping[str, ToolSpec],
    *,
    user_fields: Collection[str] = ("raw",),
    allowed_tools: Collection[str] | None = None,
    available: Collection[str] = (),
) -> list[str]:
    """Every problem of ``plan`` against the tool catalog; an empty list means the plan may run.

    ``available`` are ids of results from an earlier plan for the same question: references to them are fine.
    """
    problems: list[str] = []
    if plan.ask_user is not None:
        return problems
    # No steps and no "final" is valid: nothing to call, the finalizer answers from the context and conversation.
    if plan.call_count > MAX_CALLS:
        problems.append(f"the plan makes {plan.call_count} calls; at most {MAX_CALLS} are allowed")
        return problems

    earlier = set(available)
    step_of: dict[str, int] = {}
    for index, call in plan.calls():
        if call.id == USER_ROOT:
            problems.append(f'id "{USER_ROOT}" is reserved for user fields; choose another id')
        elif call.id in step_of:
            problems.append(f"id {call.id!r} is used twice (steps {step_of[call.id]} and {index}); ids must be unique")
        else:
            step_of[call.id] = index

    call_by_id = {call.id: call for _, call in plan.calls()}
    catalog = ", ".join(sorted(specs)) or "none"
    for index, call in plan.calls():
        where = f"call {call.id!r} ({call.name})"
        spec = specs.get(call.name)
        if spec is None:
            problems.append(f"{where}: unknown tool {call.name!r}; available tools: {catalog}")
        elif allowed_tools is not None and call.name not in allowed_tools:
            allowed = ", ".join(sorted(allowed_tools))
            problems.append(f"{where}: tool {call.name!r} is not allowed in this profile; allowed: {allowed}")
        else:
            problems.extend(f"{where}: {p}" for p in _check_arguments(call.arguments, spec))
        text = call.arguments.get("text") if call.name == EXTRACT_TOOL and spec is not None else None
        if isinstance(text, str) and ref_text(text) is None:
            # The extract step reads a result the planner does not see; a text written into the plan is one the
            # planner made up (seen: a formula invented as the text, its "values" then passed on).
            problems.append(
                f'{where}: text must be an earlier result, {{"$ref": "<id>"}}, not text written here; a value the '
                "question states goes straight into the argument of the tool that needs it"
            )
        for name, value in call.arguments.items():
            if isinstance(value, str) and ref_text(value) is None and _LOOKS_LIKE_REF.match(value):
                # The protocol's reference written in a form it does not have: sent as it stands, the text
                # itself becomes the value (seen: write_file's content "<ref>:result[0].content", 1.5B model).
                problems.append(
                    f"{where}: argument {name} = {value!r} is written like a reference but is none; a reference is "
                    f'{{"$ref": "<id>.<field>"}}, beginning with the id of the call whose result holds the value'
                )
            elif isinstance(value, str) and step_of.get(value.strip(), index) < index:
                # An earlier call's id written as a value: its result was meant (seen after an extract found
                # nothing, its id "values" was sent as an acting call's argument).
                problems.append(
                    f"{where}: argument {name} = {value!r} is the id of an earlier call; take its result with "
                    f'{{"$ref": "{value.strip()}.<field>"}} or write the value itself'
                )
        for ref in iter_refs(call.arguments):
            if isinstance(ref, RefError):
                problems.append(f"{where}: {ref}")
                continue
            if not ref.is_user and ref.root in earlier and ref.root not in step_of:
                continue
            found = _check_ref(ref, index, call.id, step_of, call_by_id, specs, user_fields)
            problems.extend(f"{where}: {p}" for p in found)
    return problems


def ensure_valid(plan: Plan, specs: Mapping[str, ToolSpec], **kwargs: Any) -> Plan:
    """Return ``plan`` if it passes :func:`check_plan`, else raise :class:`PlanCheckError`."""
    problems = check_plan(plan, specs, **kwargs)
    if problems:
        raise PlanCheckError(problems)
    return plan


def _unknown_id(ref: Ref, call_by_id: Mapping[str, Any]) -> str:
    """The problem of a reference to no call of the plan, naming the call it most likely meant.

    Measured with the packaged 1.5B model: it began references with a name it had seen instead of a call id, the
    file a call reads (``{"$ref": "address-change.txt.street"}`` for the call ``f`` that read that file) or a tool's
    name. A call whose tool is that name, or whose arguments hold it, is the call meant."""
    known = ", ".join(f"{cid} ({call.name})" for cid, call in sorted(call_by_id.items())) or "none"
    problem = f"$ref {ref.text!r}: unknown id {ref.root!r}; ids in this plan: {known}"
    if (meant := _meant_call(ref, call_by_id)) is not None:
        call = call_by_id[meant[0]]
        problem += (
            f"; {ref.root!r} is not an id but names the call {meant[0]!r} ({call.name}): a reference begins with the "
            f'id of the call whose result holds the value, {{"$ref": "{meant[0]}.<field of its result>"}}'
        )
    return problem


def _meant_call(ref: Ref, call_by_id: Mapping[str, Any]) -> tuple[str, str] | None:
    """The one call a reference to no id names, and the reference's path written after that name: by its tool's
    name (``read_file.street``) or a text its arguments hold (``address-change.txt.street`` for the call that read
    that file); ``None`` when no call or several do."""
    meant: list[tuple[str, str]] = []
    for cid, call in sorted(call_by_id.items()):
        if ref.root == call.name:
            meant.append((cid, ref.text[len(ref.root) :]))
            continue
        for text in literal_strings(call.arguments):
            if ref.text == text or ref.text.startswith(f"{text}."):
                meant.append((cid, ref.text[len(text) :]))
                break
    return meant[0] if len(meant) == 1 else None


def retarget_named_references(plan: Plan, available: Collection[str] = ()) -> Plan | None:
    """``plan`` with each reference that begins with no call's id but names exactly one call of the plan (by its
    tool's name or a text its arguments hold) pointing at that call's id, or ``None`` when there is none.

    Measured with the packaged 1.5B model and no hand-written examples: "Update my address to the one in the file
    address-change.txt." was planned twice with ``{"$ref": "address-change.txt.street"}`` although the feedback
    named the call meant; written as ``f.street`` the plan runs, and the text's fields come out with ``extract``
    after the first read (:func:`planwerk.core.extract.calls_after_extract`)."""
    call_by_id = {call.id: call for _, call in plan.calls()}
    renamed: dict[str, str] = {}
    for _, call in plan.calls():
        for ref in iter_refs(call.arguments):
            if not isinstance(ref, Ref) or ref.is_user or ref.root in call_by_id or ref.root in available:
                continue
            if (meant := _meant_call(ref, call_by_id)) is not None and meant[0] != call.id:
                renamed[ref.text] = meant[0] + meant[1]
    if not renamed:
        return None
    steps = [
        step.model_copy(
            update={
                "tools": [c.model_copy(update={"arguments": retarget_refs(c.arguments, renamed)}) for c in step.tools]
            }
        )
        for step in plan.steps
    ]
    return plan.model_copy(update={"steps": steps})


def _check_ref(
    ref: Ref,
    step: int,
    own_id: str,
    step_of: Mapping[str, int],
    call_by_id: Mapping[str, Any],
    specs: Mapping[str, ToolSpec],
    user_fields: Collection[str],
) -> list[str]:
    if ref.is_user:
        if ref.path and str(ref.path[0]) not in user_fields:
            return [f"$ref {ref.text!r}: no user field {ref.path[0]!r}; available: {', '.join(sorted(user_fields))}"]
        return []
    if ref.root == own_id:
        return [f"$ref {ref.text!r} points at the call itself"]
    if ref.root not in step_of:
        return [_unknown_id(ref, call_by_id)]
    if step_of[ref.root] >= step:
        return [
            f"$ref {ref.text!r}: {ref.root!r} runs in step {step_of[ref.root]}, not before step {step}; "
            "move the referencing call to a later step"
        ]
    referenced = call_by_id[ref.root]
    if referenced.name == EXTRACT_TOOL and isinstance(referenced.arguments.get("schema"), Mapping):
        # An extract's result has exactly the fields its call asks for.
        fields = referenced.arguments["schema"]
        if ref.path and str(ref.path[0]) not in fields:
            return [
                f"$ref {ref.text!r}: the extract {ref.root!r} asks for no field {str(ref.path[0])!r}; "
                f"fields: {', '.join(map(str, fields))} (add the field to its schema or use one of these)"
            ]
        return []
    target = specs.get(referenced.name)
    if target is not None and target.output_schema:
        problem = _check_path(ref, target.output_schema)
        if problem:
            return [problem]
    return []


def _check_arguments(arguments: Mapping[str, Any], spec: ToolSpec) -> list[str]:
    schema = dict(spec.input_schema or {})
    properties = schema.get("properties") or {}
    problems = []
    if properties and schema.get("additionalProperties") is not True:
        unknown = [k for k in arguments if k not in properties]
        if unknown:
            problems.append(f"unknown argument(s) {', '.join(map(repr, unknown))}; expected: {', '.join(properties)}")
    # Referenced values are unknown until run time: validate the literal arguments only.
    referenced = {k for k, v in arguments.items() if ref_text(v) is not None or any(True for _ in iter_refs(v))}
    probe = {k: v for k, v in arguments.items() if k not in referenced}
    relaxed = copy.deepcopy(schema)
    if "required" in relaxed:
        relaxed["required"] = [k for k in relaxed["required"] if k not in referenced]
    relaxed.pop("additionalProperties", None)
    try:
        validator = Draft202012Validator(relaxed)
        # Judged as the call will see them: what the call-time repair fixes ("3" for a number) is no problem.
        probe = repair_arguments(relaxed, probe)
        for error in sorted(validator.iter_errors(probe), key=lambda e: list(e.path))[:5]:
            field = ".".join(str(p) for p in error.path) or "arguments"
            problems.append(f"argument {field}: {error.message}")
    except SchemaError:
        pass  # a server's broken schema is not the planner's fault; the server validates at call time
    return problems


def _check_path(ref: Ref, schema: Mapping[str, Any]) -> str | None:
    """Whether ``ref.path`` exists in a declared output schema (only where the schema is specific)."""
    root = schema
    node: Mapping[str, Any] | None = _deref(schema, root)
    for position, segment in enumerate(ref.path):
        if node is None:
            return None
        if node.get("type") == "object" or "properties" in node:
            properties = node.get("properties") or {}
            if str(segment) in properties:
                node = _deref(properties[str(segment)], root)
                continue
            if position == 0 and segment == "result":
                continue  # same leniency as resolution: "<id>.result.x" means "<id>.x"
            if node.get("additionalProperties") not in (None, False) or not properties:
                return None
            return (
                f"$ref {ref.text!r}: the output of {ref.root!r} has no field {str(segment)!r}; "
                f"fields: {', '.join(properties)}"
            )
        if node.get("type") == "array":
            if position == 0 and segment == "result":
                continue
            if not isinstance(segment, int) and not str(segment).lstrip("-").isdigit():
                return f"$ref {ref.text!r}: the output at {segment!r} is a list; use an index such as 0"
            node = _deref(node.get("items") or {}, root)
            continue
        return None  # anyOf, scalars, untyped: no precise claim
    return None


def _deref(node: Any, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Follow local ``#/$defs/...`` references of a JSON schema (pydantic output schemas use them)."""
    seen = 0
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and seen < 16:
        pointer = node["$ref"]
        if not pointer.startswith("#/"):
            return None
        target: Any = root
        for part in pointer[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        node = target
        seen += 1
    if isinstance(node, Mapping) and "anyOf" in node:
        options = [o for o in node["anyOf"] if isinstance(o, Mapping) and o.get("type") != "null"]
        if len(options) == 1:
            return _deref(options[0], root)
    return node if isinstance(node, Mapping) else None


ECHO_SIMILARITY = 0.9
"""How alike (difflib's ratio over the normalized texts) a question asked back must be to the user's question to
count as the same question."""


def echoes_question(asked: str, question: str) -> bool:
    """Whether ``asked`` (a plan's ``ask_user``) is the user's ``question`` again, up to case, punctuation and
    spacing: asking it back gets the user nowhere."""
    mine, theirs = _normalized(asked), _normalized(question)
    if not mine or not theirs:
        return False
    return difflib.SequenceMatcher(None, mine, theirs).ratio() >= ECHO_SIMILARITY


def _normalized(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in fold(text)).split())
