"""A/B of two revisions of hpo in one run: the overhead measurements of ``bench/overhead.py``
(null objective, 1 and 4 workers, worker reuse) on a base revision and on the working tree,
alternating per repeat so that drift of the machine hits both alike. Prints each metric's median
per side and the ratio working tree / base.

Usage: python bench/revisions.py [--base REV] [--head REV] [--repeats 3] [--trials 200]

Each revision is checked out with ``git worktree`` into a scratch folder and run by putting it
first on ``PYTHONPATH`` (same virtualenv, same Python); without ``--head`` the working tree
itself is measured (then do not edit it while the benchmark runs). Used for issue 12's "no regression"
figures; a ratio within about 10% of 1.0 is noise on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common, overhead  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {"reuse_1": 1, "reuse_4": 4}


def _checkout(rev: str, name: str) -> Path:
    where = common.workdir() / "revisions-trees" / name
    subprocess.run(
        ["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, capture_output=True
    )
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(where), rev],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return where


def _measure(tree: Path, workers: int, n: int, tag: str) -> dict[str, Any]:
    """The overhead section's own measurement (``overhead._run_hpo``), run on ``tree``."""
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(tree)
    try:
        return overhead._run_hpo(f"rev-{tag}", {"workers": workers, "n": n}, 0)
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--base", default="HEAD", help="the base revision (default HEAD)")
    ap.add_argument("--head", help="the revision to compare (default: the working tree)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trials", type=int, default=200)
    args = ap.parse_args()
    base = _checkout(args.base, "base")
    head = _checkout(args.head, "head") if args.head else ROOT
    sides = {"base": base, "tree": head}
    raw: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for rep in range(args.repeats):
        order = list(sides) if rep % 2 == 0 else list(reversed(sides))
        for name, workers in CONFIGS.items():
            for side in order:
                r = _measure(sides[side], workers, args.trials, f"{side}-{name}-{rep}")
                if r["rc"] != 0:
                    print(f"{side} {name} rep {rep}: exit {r['rc']}", file=sys.stderr)
                raw.setdefault((side, name), []).append(r)
    print(
        f"base {args.base} vs {args.head or 'the working tree'}; {args.repeats} repeats, "
        f"{args.trials} trials, medians"
    )
    print(f"{'config':10} {'metric':18} {'base':>10} {'tree':>10} {'tree/base':>10}")
    for name in CONFIGS:
        for metric in ("trials_per_s", "overhead_ms_p50", "startup_s"):
            vals = {}
            for side in sides:
                xs = [r[metric] for r in raw[(side, name)] if r.get(metric) is not None]
                vals[side] = statistics.median(xs) if xs else None
            ratio = common.ratio(vals["tree"], vals["base"])
            fmt = lambda v: f"{v:10.2f}" if v is not None else f"{'-':>10}"  # noqa: E731
            print(f"{name:10} {metric:18} {fmt(vals['base'])} {fmt(vals['tree'])} {fmt(ratio)}")
    subprocess.run(
        ["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, capture_output=True
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
