"""Values a question sets apart (quotes, bracketed lists), and the call copied for each further set of them."""

from __future__ import annotations

from typing import Any

from planwerk.core.plan import Plan
from planwerk.core.value_sets import further_sets, further_value_sets, set_apart_values


def plan(*calls: tuple[str, dict[str, Any]]) -> Plan:
    tools = [{"id": f"c{i}", "name": name, "arguments": arguments} for i, (name, arguments) in enumerate(calls)]
    return Plan.model_validate({"steps": [{"description": "", "tools": tools}], "final": None})


SNPS = (
    "What is the type of the genetic mutation that has the SNP ID 'rs123456' in the species 'Homo sapiens' and the "
    "SNP ID 'rs7891011' in the species 'Canis lupus familiaris' (Dog)?"
)
CURVES = (
    "The area under the curve for the polynomial with coefficients [3, -2, 1] within the interval [-1, 2], and then "
    "for the polynomial with coefficients [1, 0, -1] within the interval [0, 3]?"
)


def test_quoted_texts_and_literal_lists_are_set_apart_but_not_apostrophes() -> None:
    assert [s.value for s in set_apart_values(SNPS)] == [
        "rs123456",
        "Homo sapiens",
        "rs7891011",
        "Canis lupus familiaris",
    ]
    assert [s.value for s in set_apart_values(CURVES)] == [[3, -2, 1], [-1, 2], [1, 0, -1], [0, 3]]
    assert [s.value for s in set_apart_values("Adriel's projects and Anna's „Bericht“ [see above]")] == ["Bericht"]


def test_a_call_taking_one_set_is_copied_for_each_further_set_in_the_question() -> None:
    first = plan(("mutation_type_find", {"snp_id": "rs123456", "species": "Homo sapiens"}))
    completed = further_value_sets(first, SNPS)
    assert completed is not None
    assert [c["arguments"] for c in completed["steps"][0]["tools"]] == [
        {"snp_id": "rs123456", "species": "Homo sapiens"},
        {"snp_id": "rs7891011", "species": "Canis lupus familiaris"},
    ]
    found = further_sets(first, SNPS)
    assert found is not None and found.values == ["rs7891011", "Canis lupus familiaris"]
    curve = plan(("area_under_curve", {"polynomial": [3, -2, 1], "limits": [-1, 2]}))
    completed = further_value_sets(curve, CURVES)
    assert completed is not None
    assert completed["steps"][0]["tools"][1] == {
        "id": "c0_2",
        "name": "area_under_curve",
        "arguments": {"polynomial": [1, 0, -1], "limits": [0, 3]},
    }


def test_nothing_is_copied_unless_the_rest_repeats_the_set_shape_of_one_reading_call() -> None:
    first = plan(("mutation_type_find", {"snp_id": "rs123456", "species": "Homo sapiens"}))
    assert further_value_sets(first, SNPS, fixed={"mutation_type_find"}) is None  # a tool that changes something
    both = plan(
        ("mutation_type_find", {"snp_id": "rs123456", "species": "Homo sapiens"}),
        ("mutation_type_find", {"snp_id": "rs7891011", "species": "Canis lupus familiaris"}),
    )
    assert further_value_sets(both, SNPS) is None  # nothing left over
    one_value = plan(("find", {"pattern": "error"}))
    assert further_value_sets(one_value, "Search 'error' in 'app.log', then 'warn' in 'db.log'.") is None
    mixed = plan(("area_under_curve", {"polynomial": [3, -2, 1], "limits": [-1, 2]}))
    assert further_value_sets(mixed, "Curves [3, -2, 1] on [-1, 2], then 'x squared' on [0, 3]") is None
