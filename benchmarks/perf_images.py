"""How fast the clinical images are made and served: signal synthesis and rendering per image kind (first render of a
study; later ones come from the process cache), PNG size, and VisualDiagnosis-v0 episodes per second with the
scripted expert in image and describe mode (images rendered on first use, then cached).

    .venv/bin/python benchmarks/perf_images.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from clinical_gym.domains.visual_diagnosis.environment import get_environment, get_tasks
from clinical_gym.imaging import audiogram, ctg, ecg_paper, ecg_rhythms, spirometry
from clinical_gym.tool_env.policies import ExpertToolPolicy, run_episode


def timed(make, repeats: int) -> tuple[float, int]:  # noqa: ANN001
    times, size = [], 0
    for k in range(repeats):
        began = time.perf_counter()
        size = len(make(k))
        times.append(time.perf_counter() - began)
    return statistics.median(times), size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rng = np.random.default_rng

    def ecg(k: int) -> bytes:
        return ecg_paper.twelve_lead(ecg_rhythms.build(ecg_rhythms.sample_params("inferior_stemi", rng(k))), "t", "s")

    def strip(k: int) -> bytes:
        rec = ecg_rhythms.build(ecg_rhythms.sample_params("atrial_fibrillation", rng(k)))
        return ecg_paper.rhythm_strip(rec, "II", "t", "s")

    def tracing(k: int) -> bytes:
        params = ctg.sample_params("absent_late", rng(k), 1)
        return ctg.render(ctg.build(params), params, "t", "s")

    def spiro(k: int) -> bytes:
        return spirometry.render(spirometry.sample_params("obstructive", rng(k), "male", 60), "t", "s")

    def hearing(k: int) -> bytes:
        return audiogram.render(audiogram.sample_params("conductive", rng(k), 60), "t", "s")

    print("| image | sample + draw (median s) | PNG (KiB) |\n|---|---|---|")
    for name, make in (("12-lead ECG", ecg), ("rhythm strip", strip), ("CTG 30 min", tracing),
                       ("spirometry", spiro), ("audiogram", hearing)):
        seconds, size = timed(make, args.repeats)
        print(f"| {name} | {seconds:.3f} | {size / 1024:.0f} |")
    tasks = get_tasks()
    for mode in ("image", "describe"):
        env = get_environment(knowledge=None, image_mode=mode)
        for lap in ("first (renders)", "again (cached)"):
            began = time.perf_counter()
            for task in tasks:
                run_episode(env, ExpertToolPolicy(task), options={"task_id": task.id})
            elapsed = time.perf_counter() - began
            print(f"{mode} mode, {lap}: {len(tasks) / elapsed:.1f} expert episodes/s over {len(tasks)} tasks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
