"""``python -m benchmarks``: the benchmark commands (see BENCHMARKS.md); run from the checkout's root."""

from benchmarks.cli import bench_app

if __name__ == "__main__":
    bench_app(prog_name="python -m benchmarks")
