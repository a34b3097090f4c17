"""Device and dtype choice as a pure function of the machine's capabilities."""

from __future__ import annotations

from pathlib import Path

import pytest

from planwerk.models.device import Capabilities, choose_device, cpu_flags, cpu_has_native_bf16, plan_device


@pytest.mark.parametrize(
    ("cuda", "n_gpus", "cpu_bf16", "cuda_bf16", "expected"),
    [
        (True, 1, False, True, ("cuda", "bfloat16", None)),
        (True, 4, True, True, ("cuda", "bfloat16", "auto")),
        (True, 1, True, False, ("cuda", "float16", None)),
        (True, 0, True, True, ("cpu", "bfloat16", None)),  # CUDA runtime but no device visible
        (False, 0, True, True, ("cpu", "bfloat16", None)),
        (False, 0, False, True, ("cpu", "float32", None)),
    ],
)
def test_choose_device(cuda, n_gpus, cpu_bf16, cuda_bf16, expected):
    plan = choose_device(cuda, n_gpus, cpu_bf16, cuda_bf16)
    assert (plan.device, plan.dtype, plan.device_map) == expected
    assert plan.reason


def test_plan_device_logs_its_choice(caplog):
    caplog.set_level("INFO", logger="planwerk.models.device")
    plan = plan_device(Capabilities(cuda_available=False, n_gpus=0, cpu_has_bf16=False))
    assert plan.dtype == "float32"
    assert "cpu" in caplog.text and "float32" in caplog.text
    assert str(plan.torch_dtype()) == "torch.float32"


def test_cpu_flags_from_cpuinfo(tmp_path: Path):
    info = "processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16\nbogomips\t: 1\n"
    assert "avx512_bf16" in cpu_flags(info)
    (tmp_path / "amx").write_text("flags : fpu amx_bf16 amx_tile\n")
    (tmp_path / "old").write_text("flags : fpu sse2 avx2\n")
    assert cpu_has_native_bf16(tmp_path / "amx")
    assert not cpu_has_native_bf16(tmp_path / "old")
    assert not cpu_has_native_bf16(tmp_path / "missing")
