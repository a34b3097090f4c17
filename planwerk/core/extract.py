"""The built-in ``extract`` step: typed values out of untrusted text, read by a quarantined model call.

Read-then-act needs values that only a result's free text holds (a code in a document, an address in a letter). The
planner must not read that text: what a third party wrote there could then change which tools are called. So the
planner writes ``extract(text={"$ref": "f"}, schema={"code": "string", "total": "number"})`` like any call; at
run time a separate model call, with no tools and decoded under the JSON schema where the model supports it, pulls
the values out, and later calls take them with ``{"$ref": "<id>.code"}`` (the quarantined-extractor pattern of
CaMeL and of the plan-then-execute literature). The planner's choices are fixed before any text is read; a planted
instruction can at most change a value, and a call of a tool that acts with such a value waits for a person's
approval by default (``Profile.approve_extracted``).

This module is pure: the spec, the schema of a call's fields, the prompt's parts and the reply's parsing. The call
itself is made by :func:`planwerk.graph.nodes.call_tool.call_tool`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any, Literal

from planwerk.core.calls import CallRecord
from planwerk.core.plan import Plan, PlanData
from planwerk.core.refs import REF_KEY, USER_ROOT, Ref, iter_refs, ref_text, retarget_refs
from planwerk.core.tools import ToolSpec

EXTRACT_TOOL = "extract"
"""The built-in tool's name (a loaded tool of the same name hides it: the server's tool wins)."""

FieldType = Literal["string", "number", "integer", "boolean"]
FIELD_TYPES: tuple[FieldType, ...] = ("string", "number", "integer", "boolean")
MAX_FIELDS = 12
"""An extraction asks for at most this many fields (a small model's reply stays short)."""
MAX_TEXT_CHARS = 6_000
"""The text is cut to this many characters for the extracting model."""
FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
"""What an extracted field may be called: a short identifier (a later call names it in a reference)."""


def extract_spec(description: str) -> ToolSpec:
    """The ``extract`` tool as the planner and the plan check see it (``description`` in the profile's language)."""
    return ToolSpec(
        name=EXTRACT_TOOL,
        description=description,
        input_schema={
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "the text to read, usually an earlier result by $ref"},
                "schema": {
                    "type": "object",
                    "description": 'field name → "string", "number", "integer" or "boolean"',
                    "additionalProperties": {"enum": list(FIELD_TYPES)},
                },
            },
            "required": ["text", "schema"],
        },
        output_schema=None,
        server="planwerk",
        read_only=True,
    )


def returns_text(spec: ToolSpec) -> bool:
    """Whether ``spec``'s results are text an ``extract`` may read: a tool declared to only read (MCP
    ``readOnlyHint``) that declares no output schema. A tool without annotations may act, and its result is then a
    report of what it did, not a text to take values from."""
    return spec.read_only and not spec.output_schema


def field_types(schema: Any) -> dict[str, FieldType]:
    """The fields an ``extract`` call asks for, checked: ``ValueError`` saying what is wrong and what is expected."""
    if not isinstance(schema, Mapping) or not schema:
        raise ValueError('schema must be an object of field names and types, e.g. {"name": "string"}')
    if len(schema) > MAX_FIELDS:
        raise ValueError(f"schema asks for {len(schema)} fields; at most {MAX_FIELDS}")
    fields: dict[str, FieldType] = {}
    for name, kind in schema.items():
        if not isinstance(name, str) or not FIELD_NAME.match(name):
            raise ValueError(f"field name {name!r}: expected a short identifier (letters, digits, _)")
        if kind not in FIELD_TYPES:
            raise ValueError(f"field {name!r}: type {kind!r}; expected one of {', '.join(FIELD_TYPES)}")
        fields[name] = kind
    return fields


def json_schema(fields: Mapping[str, FieldType]) -> dict[str, Any]:
    """The JSON schema the extracting model is decoded under: every field, each its type or null (the text may
    not hold it)."""
    return {
        "type": "object",
        "properties": {name: {"anyOf": [{"type": kind}, {"type": "null"}]} for name, kind in fields.items()},
        "required": list(fields),
        "additionalProperties": False,
    }


def clip_text(text: Any) -> str:
    """The text as the extracting model reads it: a string as is, other JSON compact; cut to
    :data:`MAX_TEXT_CHARS`."""
    value = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str)
    return value[:MAX_TEXT_CHARS]


def parse_extraction(reply: str, fields: Mapping[str, FieldType], text: str | None = None) -> dict[str, Any]:
    """The typed values in the extracting model's reply; a field it did not give, or gave as something that is
    not its type, is ``None`` (never a guess). With the ``text`` it read, a string value the text does not hold
    (letters and digits compared, case folded) is ``None`` too: an extraction copies values, and the 1.5B model
    wrote ``"null"`` as the string for a field the text lacked. ``ValueError`` when the reply holds no JSON
    object."""
    data = _json_object(reply)
    if data is None:
        raise ValueError(f"the extraction reply holds no JSON object: {reply[:200]!r}")
    values = {name: _typed(data.get(name), kind) for name, kind in fields.items()}
    if text is not None:
        held = _letters_and_digits(text)
        values = {
            name: None
            if isinstance(value, str) and (_letters_and_digits(value) not in held or ambiguous_code(value, text))
            else value
            for name, value in values.items()
        }
    return values


_CODE = re.compile(r"[A-Za-z0-9]{8,}")


def _is_code(token: str) -> bool:
    return bool(_CODE.fullmatch(token)) and any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def ambiguous_code(value: str, text: str) -> bool:
    """Whether ``value`` is a code (one token of letters and digits, eight or more: an account number, an order
    id) and ``text`` holds another code of about its length: which one the text means is then a reading, and a
    third party who wrote a second one into the text (a planted instruction naming their own code) would have the
    1.5B model pick theirs. Such a field is ``None``: the call that needs it fails naming it, and is planned
    again or asked, never sent with a guess."""
    if not _is_code(value.strip()):
        return False
    size = len(value.strip())
    codes = {token for token in _CODE.findall(text) if _is_code(token) and abs(len(token) - size) <= max(2, size // 4)}
    return len(codes - {value.strip()}) > 0


def _letters_and_digits(text: str) -> str:
    return "".join(character for character in text.casefold() if character.isalnum())


def _json_object(reply: str) -> dict[str, Any] | None:
    """The reply's JSON object: the whole reply, or its first ``{`` to its last ``}`` (a model's fence or words)."""
    text = reply.strip()
    start, end = text.find("{"), text.rfind("}")
    for candidate in (text, text[start : end + 1] if 0 <= start < end else ""):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _typed(value: Any, kind: FieldType) -> Any:
    if value is None:
        return None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind in ("number", "integer"):
        if isinstance(value, str):
            cleaned = re.sub(r"[^\d.,\-]", "", value).replace(",", "")
            try:
                value = float(cleaned)
            except ValueError:
                return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if kind == "integer":
            return int(value) if float(value).is_integer() else None
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _text_field(ref: Ref, texts: Collection[str]) -> str | None:
    """The field a reference reads of a text result (``f.street``, ``f.result.street``), else ``None``."""
    if ref.is_user or ref.root not in texts or not ref.path:
        return None
    path = ref.path[1:] if ref.path[0] == "result" else ref.path
    return str(path[0]) if len(path) == 1 else None


def calls_after_extract(plan: Plan, previous: Plan, failed: Collection[str], texts: Collection[str]) -> PlanData | None:
    """``plan``, a corrected plan, with each call of ``previous`` that failed (``failed``: call ids) on fields of a
    text result (``texts``: ids of text results; ``{"$ref": "f.street"}``) planned again, in a step after the
    ``extract`` of that text that ``plan`` holds, its references taken from the extract's fields; ``None`` when no
    such call is missing. A call comes back only when ``plan`` calls its tool nowhere and the extract asks for every
    field it read.

    Measured with the packaged 1.5B model on the domain set: told that a file's text has no fields and that an
    extract takes them out, it planned the read and the extract, said in its reason that the values go to
    ``update_user_info`` next, and left that call out; the task ended with nothing done."""
    extracts: dict[str, tuple[str, int, Collection[str]]] = {}
    for index, call in plan.calls():
        source = ref_text(call.arguments.get("text")) if call.name == EXTRACT_TOOL else None
        schema = call.arguments.get("schema")
        if source is None or not isinstance(schema, Mapping):
            continue
        root, _, rest = source.partition(".")
        if rest in ("", "result") and root in texts:
            extracts[root] = (call.id, index, schema)
    planned = {call.name for _, call in plan.calls()}
    ids = {call.id for _, call in plan.calls()}
    restored: list[tuple[int, dict[str, Any]]] = []
    for _, call in previous.calls():
        if call.id not in failed or call.name in planned or call.id in ids:
            continue
        renamed: dict[str, str] = {}
        for ref in iter_refs(call.arguments):
            if not isinstance(ref, Ref):
                break
            field = _text_field(ref, texts)
            if field is None:
                if not ref.is_user and ref.root not in ids:
                    break  # it reads a call the corrected plan no longer has
                continue
            extract = extracts.get(ref.root)
            if extract is None or field not in extract[2]:
                break
            renamed[ref.text] = f"{extract[0]}.{field}"
        else:
            if renamed:
                step = max(extracts[text.partition(".")[0]][1] for text in renamed) + 1
                arguments = retarget_refs(call.arguments, renamed)
                restored.append((step, {"id": call.id, "name": call.name, "arguments": arguments}))
    if not restored:
        return None
    data = plan.stored()
    for step, call_data in restored:
        while len(data["steps"]) <= step:
            data["steps"].append({"description": "", "tools": []})
        data["steps"][step]["tools"].append(call_data)
    return data


ANSWER_VALUES_ID = "answer_values"
"""The id of the ``extract`` of the person's answer that :func:`values_from_answer` adds (a suffix when taken)."""


def values_from_answer(plan: Plan, unclear: Collection[CallRecord], answer_field: str = "answer") -> PlanData | None:
    """``plan`` with each argument that an earlier run of its tool could not take from an ``extract`` (``unclear``:
    those calls' records, whose ``args`` hold ``None`` for it) taken instead from an extract of the person's
    answer to the question about it (``{"$ref": "user.answer"}``), as the same type; ``None`` when the plan takes
    no such argument from an extract again.

    The person was asked which value the text means (it held none, or two account numbers, one of them planted);
    the 1.5B model, shown the answer "Use GB29NWBK60161331926819.", planned the same extract again, and the value
    was unclear again. The answer is read like any text, by the quarantined extraction, so "Use the one on the
    bill" stays unclear instead of becoming a value. An argument the plan already takes from an extract of what the
    person wrote is left as planned."""
    wanted = {
        (record["tool"], name)
        for record in unclear
        for name, value in (record.get("args") or {}).items()
        if value is None
    }
    extracts = {call.id: call for _, call in plan.calls() if call.name == EXTRACT_TOOL}
    schema: dict[str, str] = {}
    taken: list[tuple[str, str]] = []  # (call id, argument): the answer's extract names its field after the argument
    for _, call in plan.calls():
        for name, value in call.arguments.items():
            text = ref_text(value)
            root, _, field = (text or "").partition(".")
            source = extracts.get(root)
            if (call.name, name) not in wanted or source is None or not FIELD_NAME.match(name):
                continue
            if _reads_person(source.arguments.get("text")):  # the plan reads the answer itself already
                continue
            fields = source.arguments.get("schema")
            kind = fields.get(field) if isinstance(fields, Mapping) else None
            schema[name] = kind if kind in FIELD_TYPES else "string"
            taken.append((call.id, name))
    if not taken:
        return None
    ids = {call.id for _, call in plan.calls()}
    answer_id = ANSWER_VALUES_ID
    while answer_id in ids:
        answer_id += "_2"
    data = plan.stored()
    for step in data["steps"]:
        for call_data in step["tools"]:
            for call_id, name in taken:
                if call_data["id"] == call_id:
                    call_data["arguments"][name] = {REF_KEY: f"{answer_id}.{name}"}
    reading = {
        "id": answer_id,
        "name": EXTRACT_TOOL,
        "arguments": {"text": {REF_KEY: f"{USER_ROOT}.{answer_field}"}, "schema": schema},
    }
    data["steps"][0]["tools"].insert(0, reading)
    return data


def _reads_person(text: Any) -> bool:
    """Whether an extract's ``text`` argument is a reference to what the person wrote (``user.*``)."""
    reference = ref_text(text)
    return reference is not None and reference.partition(".")[0] == USER_ROOT
