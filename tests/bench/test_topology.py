"""The topology benchmark at tiny sizes: its cases are valid plans, both topologies compute the same thing, and the
report has the structure BENCHMARKS.md reads. Timings are not asserted (this machine is shared)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks import topology
from planwerk.core.checking import check_plan
from planwerk.core.plan import Plan


@pytest.mark.parametrize("sizes", [{}, {"chain": 2, "width": 3, "time_scale": 0.02}])
def test_every_case_passes_the_plan_check(sizes: dict[str, Any]) -> None:
    specs = topology.bench_tools().specs
    cases = topology.make_cases(**sizes)
    assert [case.kind for case in cases] == ["chain", "wide", "uneven", "three_steps"]
    for case in cases:
        assert check_plan(Plan.model_validate(case.plan), specs) == [], case.name


def test_floors_of_the_uneven_dag_show_what_the_barrier_costs() -> None:
    cases = {case.kind: case for case in topology.make_cases()}
    assert cases["uneven"].floors_ms() == (500.0, 600.0)  # b alone; then max(a, b) + c + e under barriers
    assert cases["three_steps"].floors_ms() == (300.0, 300.0)
    assert cases["chain"].floors_ms() == (0.0, 0.0)
    assert (cases["chain"].steps, cases["wide"].calls, cases["wide"].steps) == (8, 64, 1)


@pytest.mark.parametrize("saver", topology.SAVERS)
async def test_both_topologies_compute_the_same_results_and_log(saver: topology.SaverKind) -> None:
    tools = topology.bench_tools()
    for case in topology.make_cases(chain=3, width=5, time_scale=0.02):
        async with topology.open_saver(saver) as old_saver, topology.open_saver(saver) as new_saver:
            old = await topology.run_once(topology.build_old_graph(tools, old_saver), case.plan)
            new = await topology.run_once(topology.build_new_graph(tools, new_saver), case.plan)
        assert topology.comparable(old) == topology.comparable(new), case.name
        assert all(record["status"] == "ok" for record in new.calls)
        expected = {
            "chain": {"c1": 1, "c2": 2, "c3": 3},
            "wide": {f"w{i}": i + 1 for i in range(5)},
            "uneven": {"a": 1, "b": 101, "c": 2, "e": 3},
            "three_steps": {"s1": 1, "s2": 2, "s3": 3},
        }[case.kind]
        assert new.results == {call_id: {"value": value} for call_id, value in expected.items()}
        # The old node checkpoints once for the whole plan; the new one twice per step (resolver, calls).
        assert old.checkpoints == 4
        assert new.checkpoints == old.checkpoints + 2 * case.steps


def test_the_command_prints_the_tables_and_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    topology.main(["--repeats", "2", "--chain", "2", "--width", "3", "--time-scale", "0.02", "--json"])
    out = capsys.readouterr().out
    assert "new: resolver + Send" in out and "Per step" in out
    report = json.loads(out.strip().splitlines()[-1])
    assert report["benchmark"] == "topology"
    assert report["repeats"] == 2
    assert report["sizes"] == {"chain": 2, "width": 3, "time_scale": 0.02}
    assert report["all_same_results"] is True
    assert [(row["kind"], row["saver"]) for row in report["rows"]] == [
        (kind, saver) for saver in topology.SAVERS for kind in ("chain", "wide", "uneven", "three_steps")
    ]
    for row in report["rows"]:
        for side in ("old", "new"):
            timing = row[side]
            assert len(timing["samples_ms"]) == 2
            assert timing["min_ms"] <= timing["median_ms"] <= timing["max_ms"]
        assert row["ratio_new_old"] == pytest.approx(row["new"]["median_ms"] / row["old"]["median_ms"], abs=0.01)
    assert set(report["per_step"]) == set(topology.SAVERS)
    for figures in report["per_step"].values():
        assert figures["steps"] == 2 and figures["extra_supersteps"] == 4
    assert {"cpu_count", "python", "date"} <= set(report["machine"])


def test_the_command_rejects_a_plan_wider_than_the_check_allows() -> None:
    with pytest.raises(SystemExit):
        topology.main(["--width", "65"])
