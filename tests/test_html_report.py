"""``hpo report``: the HTML page and its figures, on hpo studies and on studies hpo did not make.

The end-to-end test runs a real chaos study on the simulated GPU backend, writes the report with
the CLI, renders the page in headless Chromium (Debian's ``chromium`` package) and checks from the
rendered DOM that every expected figure is there and was decoded by the browser, and that each
image is a non-blank PNG; the screenshot is kept in the test's ``tmp_path``. The other tests build
studies in-process with plain Optuna (no tags, all failed, multi-objective, empty, hostile names)
and check where the report lands without an explicit folder.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import TrialState

from hpo import html_report
from hpo import storage as st
from hpo.html_report import figures as report_figures
from tests.conftest import ROOT, run_hpo, write_config

CHROMIUM = Path("/usr/bin/chromium")
NO_CHROMIUM = "Debian's chromium package is not installed (apt-get install chromium)"

ALL_FIGURES = set(html_report.FIGURES)
# What the simulated chaos study must show: every figure of a single-objective study.
CHAOS_FIGURES = ALL_FIGURES - {"pareto-front"}

OBJECTIVE = """
import math
import time

from hpo.devices import simulated

BASE_MB = {"small": 1500, "base": 4000}
PER_SAMPLE_MB = {"small": 60, "base": 150}


def objective(trial):
    model = trial.suggest_categorical("model", ["small", "base"])
    batch = trial.suggest_categorical("batch_size", [8, 16, 32, 64])
    lr = trial.suggest_float("lr", 1e-5, 1e-2, log=True)
    # base x 64 needs 13.6 GB on a 12 GB simulated card: a real OOM in the worker.
    with simulated.allocate(BASE_MB[model] + batch * PER_SAMPLE_MB[model]):
        time.sleep(0.05)
    return (math.log10(lr) + 3.5) ** 2 + 0.01 * batch
"""


# ------------------------------------------------------------------ helpers
class _Images(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.imgs: dict[str, dict[str, str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "img" and a.get("id", "").startswith("fig-"):
            self.imgs[a["id"][len("fig-") :]] = a


def figures_in(page: str) -> dict[str, dict[str, str]]:
    """``name -> attributes`` of every ``<img id="fig-<name>">`` in the page."""
    parser = _Images()
    parser.feed(page)
    return parser.imgs


def skipped_in(page: str) -> dict[str, str]:
    """``name -> reason`` of the "Skipped figures" list."""
    out: dict[str, str] = {}
    for part in page.split('<li data-figure="')[1:]:
        name, _, rest = part.partition('"')
        text = rest.split("</li>", 1)[0]
        out[name] = text.split("</code>):", 1)[-1].strip()
    return out


def png_of(img: dict[str, str]) -> bytes:
    src = img.get("src", "")
    prefix = "data:image/png;base64,"
    assert src.startswith(prefix), f"figure {img.get('id')} is not a PNG data URI: {src[:40]!r}"
    data = base64.b64decode(src[len(prefix) :], validate=True)
    assert data, f"figure {img.get('id')} has an empty data URI"
    return data


def assert_drawn_png(data: bytes, what: str) -> None:
    """A real PNG with something drawn on it (not a blank canvas)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{what}: not a PNG"
    assert len(data) > 5000, f"{what}: only {len(data)} bytes"
    try:
        from PIL import Image
    except ImportError:  # the header and size checks above must do
        return
    im = Image.open(io.BytesIO(data)).convert("RGB")
    w, h = im.size
    assert w >= 400 and h >= 150, f"{what}: {w}x{h}"
    import numpy as np

    pixels = np.asarray(im.resize((max(1, w // 4), max(1, h // 4)))).reshape(-1, 3)
    inked = float((pixels.min(axis=1) < 235).mean())
    colours = len(np.unique(pixels, axis=0))
    assert inked > 0.01, f"{what}: {inked:.1%} of the image is not white"
    assert colours > 8, f"{what}: only {colours} colours"


def need_chromium() -> str:
    if CHROMIUM.exists():
        return str(CHROMIUM)
    if os.environ.get("HPO_REQUIRE_CHROMIUM") == "1":
        pytest.fail(f"{NO_CHROMIUM}, and HPO_REQUIRE_CHROMIUM=1")
    pytest.skip(NO_CHROMIUM)


def chromium(
    exe: str, profile: Path, *args: str, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    cmd = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return proc


# The report has no script; a copy gets this probe so the dumped DOM says what the browser decoded.
PROBE = """<script>
window.addEventListener("load", () => {
  const seen = [...document.images].map(i => ({id: i.id, complete: i.complete, w: i.naturalWidth, h: i.naturalHeight}));
  const pre = document.createElement("pre");
  pre.id = "hpo-probe";
  pre.textContent = JSON.stringify(seen);
  document.body.appendChild(pre);
});
</script>"""


def rendered_images(dom: str) -> dict[str, dict[str, Any]]:
    start = dom.index('<pre id="hpo-probe">') + len('<pre id="hpo-probe">')
    seen = json.loads(dom[start : dom.index("</pre>", start)].replace("&quot;", '"'))
    return {s["id"]: s for s in seen}


# ------------------------------------------------------------------ the chaos study, end to end
@pytest.fixture(scope="module")
def chaos_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("chaos")
    (base / "objective.py").write_text(OBJECTIVE)
    cfg = write_config(
        base / "study.yaml",
        study="report-chaos",
        objective=f"{base / 'objective.py'}:objective",
        run_dir=str(base / "run"),
        n_trials=30,
        workers=2,
        direction="minimize",
        timeout_per_trial=5,
        max_host_mem_mb=1500,
        max_consecutive_failures=50,
        device_backend="simulated",
        trials_per_gpu=1,
        # GPU 1 starts failing (ECC) after 6 trials: a quarantine in the event log.
        simulated_gpus={"count": 2, "memory_mb": 12000, "failing": {1: 6}},
        sampler={"name": "random", "seed": 1},
    )
    proc = run_hpo("run", str(cfg), "--chaos", "0.3", "--chaos-seed", "1", "--quiet", timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return cfg


@pytest.mark.slow
@pytest.mark.chromium
def test_report_of_chaos_study_renders_in_chromium(chaos_study: Path, tmp_path: Path) -> None:
    exe = need_chromium()
    proc = run_hpo("report", str(chaos_study), timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = Path(proc.stdout.strip().splitlines()[-1])
    assert path == (chaos_study.parent / "run" / "report" / "report.html").resolve()
    page = path.read_text()
    assert (
        "<script" not in page and "http://" not in page and "https://" not in page
    )  # self-contained

    figs = figures_in(page)
    assert set(figs) == CHAOS_FIGURES, (
        f"missing {CHAOS_FIGURES - set(figs)}; skipped: {skipped_in(page)}"
    )
    for name, img in figs.items():
        assert img.get("alt"), f"figure {name} has no alt text"
        assert (path.parent / f"{name}.png").read_bytes() == png_of(img)
    assert 'id="best-trials"' in page and 'id="failure-classes"' in page
    assert "device_quarantined" in page  # the device events table

    # Render in headless Chromium: the DOM it built, and what it decoded.
    probed = tmp_path / "probe.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"))
    dom = chromium(
        exe, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom", probed.as_uri()
    ).stdout
    shown = figures_in(dom)
    assert set(shown) == CHAOS_FIGURES
    decoded = rendered_images(dom)
    for name, img in shown.items():
        assert_drawn_png(png_of(img), f"figure {name}")
        seen = decoded[f"fig-{name}"]
        assert seen["complete"] and seen["w"] >= 400 and seen["h"] >= 150, (
            f"chromium did not draw {name}: {seen}"
        )

    shot = tmp_path / "html-report.png"  # kept with the report for a person to look at
    chromium(
        exe, tmp_path / "profile2", f"--screenshot={shot}", "--window-size=1280,4000", path.as_uri()
    )
    assert_drawn_png(shot.read_bytes(), "screenshot")


@pytest.mark.slow
def test_report_cli_out_and_bad_study(chaos_study: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{chaos_study.parent / 'run' / 'study.db'}"
    out = tmp_path / "elsewhere"
    proc = run_hpo("report", "--storage", url, "-o", str(out), timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == (out / "report.html").resolve()
    page = (out / "report.html").read_text()
    # Without the config, the run folder (and its event log) is found from the trials' owner.
    assert "device_quarantined" in figures_in(page)["timeline"]["alt"]
    assert "events.jsonl" in page

    proc = run_hpo("report", "--storage", url, "--study", "nope", "--out", str(out), timeout=120)
    assert proc.returncode == 3
    assert "no study 'nope'" in proc.stderr and "Traceback" not in proc.stderr

    # Default folder without a config: the run folder, not the working directory.
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    proc = run_hpo("report", "--storage", url, timeout=180, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    run_report = (chaos_study.parent / "run" / "report" / "report.html").resolve()
    assert Path(proc.stdout.strip()) == run_report
    assert list(cwd.iterdir()) == []


# ------------------------------------------------------------------ studies hpo did not make
def _plain_objective(trial: optuna.Trial) -> float:
    model = trial.suggest_categorical("model", ["a", "b"])
    batch = trial.suggest_int("batch", 8, 64, step=8)
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    if batch >= 48 and model == "b":
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    trial.report(lr, 0)
    if lr > 0.05:
        raise optuna.TrialPruned()
    return (math.log10(lr) + 3) ** 2 + batch / 100


@pytest.fixture(autouse=True)
def _quiet_optuna() -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)


def _read(out: Path) -> tuple[str, dict[str, dict[str, str]], dict[str, str]]:
    page = (out / "report.html").read_text()
    return page, figures_in(page), skipped_in(page)


def test_plain_optuna_study_without_tags(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    study = optuna.create_study(
        study_name="plain", storage=url, sampler=optuna.samplers.RandomSampler(seed=0)
    )
    study.optimize(_plain_objective, n_trials=40, catch=(RuntimeError,))
    assert any(t.state == TrialState.FAIL for t in study.trials)
    out = tmp_path / "out"
    out.mkdir()
    (out / "peak-memory.png").write_bytes(b"stale figure of an earlier report")

    path = html_report.write_report(url, None, out, None)
    assert path == out / "report.html"
    page, figs, skipped = _read(out)
    assert set(figs) == {"timeline", "failure-rate", "history", "importance"}
    for name, img in figs.items():
        assert img["alt"]
        assert_drawn_png(png_of(img), name)
        assert (out / f"{name}.png").exists()
    assert set(skipped) == ALL_FIGURES - set(figs)
    assert "none carries a failure_class tag" in skipped["failure-classes"]
    assert "peak_gpu_mem_mb" in skipped["peak-memory"]
    assert "no trial was retried" in skipped["retries"]
    assert "single-objective" in skipped["pareto-front"]
    # Optuna's own plots, and hpo's addition to the history: the failed trials.
    n_failed = sum(t.state == TrialState.FAIL for t in study.trials)
    assert f"{n_failed} failed trial(s) marked" in figs["history"]["alt"]
    assert f"best {study.best_value:.6g}" in figs["history"]["alt"]
    assert "plot_optimization_history" in page and "plot_timeline" in page
    assert "most important lr" in figs["importance"]["alt"]
    assert not (out / "peak-memory.png").exists()  # a skipped figure leaves no stale PNG
    # The failing region is the one drawn: model b with batch >= 48.
    assert "model" in figs["failure-rate"]["alt"] and "batch" in figs["failure-rate"]["alt"]
    assert "100%" in figs["failure-rate"]["alt"] and "model=b" in figs["failure-rate"]["alt"]
    assert "Best trials (top 10 of" in page


def test_all_failed_study_with_hpo_tags(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'failed.db'}"
    study = optuna.create_study(study_name="failed", storage=url)
    dists = {
        "batch_size": CategoricalDistribution([16, 32, 64]),
        "lr": FloatDistribution(1e-5, 1e-2, log=True),
    }
    for i in range(12):
        batch = [16, 32, 64][i % 3]
        oom = batch == 64
        study.add_trial(
            optuna.create_trial(
                state=TrialState.PRUNED if oom else TrialState.FAIL,
                params={"batch_size": batch, "lr": 10 ** (-5 + i * 0.25)},
                distributions=dists,
                user_attrs={
                    "failure_class": "oom" if oom else "cuda_context_corrupted",
                    "failure_action": "prune" if oom else "retry",
                    "error_msg": "CUDA out of memory. Tried to allocate 2.00 GiB"
                    if oom
                    else "CUDA error: device-side assert triggered",
                    "device": i % 2,
                    "peak_gpu_mem_mb": 0.0 if oom else 1000.0 + 100 * batch + i,
                    # trials 9, 10, 11 retry 6, 7, 8
                    **(
                        {"retry_of": i - 3, "retry_reason": "cuda_context_corrupted"}
                        if i >= 9
                        else {}
                    ),
                },
            )
        )
    # A quarantine recorded on the study (no run folder): the device timeline still has it.
    started = min(t.datetime_start for t in study.trials if t.datetime_start)
    study.set_user_attr(
        f"{st.QUARANTINE_PREFIX}gpu-box:GPU-1",
        {"gpu": 1, "time": started.timestamp(), "reason": "ECC errors", "host": "gpu-box"},
    )
    out = tmp_path / "out"
    html_report.write_report(url, "failed", out, None)
    page, figs, skipped = _read(out)
    assert {
        "timeline",
        "failure-classes",
        "failure-rate",
        "retries",
        "peak-memory",
    } <= set(figs)
    assert (
        "3 retries by reason: cuda_context_corrupted 3; outcome: FAIL 2, PRUNED 1"
        in (figs["retries"]["alt"])
    )
    assert "device_quarantined 1" in figs["timeline"]["alt"] and "study attrs" in page
    for name, img in figs.items():
        assert_drawn_png(png_of(img), name)
    assert "fewer than 2 complete trials" in skipped["history"]
    assert "fewer than 2 complete trials" in skipped["importance"]
    assert "No complete trial" in page
    assert (
        "oom" in figs["failure-classes"]["alt"]
        and "cuda_context_corrupted" in figs["failure-classes"]["alt"]
    )
    assert "4 OOM trial(s)" in figs["peak-memory"]["alt"]


def test_multi_objective_study(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'mo.db'}"
    study = optuna.create_study(
        study_name="mo",
        storage=url,
        directions=["minimize", "maximize"],
        sampler=optuna.samplers.RandomSampler(seed=0),
    )
    study.optimize(
        lambda t: (t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1) * t.params["x"]),
        n_trials=20,
    )
    study.set_metric_names(["loss", "accuracy"])
    out = tmp_path / "out"
    html_report.write_report(url, None, out, None)
    page, figs, skipped = _read(out)
    assert {"timeline", "importance", "pareto-front"} <= set(figs)
    for name in ("timeline", "importance", "pareto-front"):
        assert_drawn_png(png_of(figs[name]), name)
    assert "multi-objective" in skipped["history"]
    assert "each of the 2 objectives" in figs["importance"]["alt"]
    # The Pareto front: exactly study.best_trials, with their values, in the table and the alt.
    front = sorted(study.best_trials, key=lambda t: t.number)
    assert 0 < len(front) < len(study.trials)
    table = page.split('id="best-trials"', 1)[1].split("</table>", 1)[0]
    rows = [r.split("</td>", 2)[:2] for r in table.split("<tr>")[2:]]
    shown = [(int(n.split(">")[-1]), v.split(">")[-1]) for n, v in rows]
    assert shown == [(t.number, ", ".join(f"{v:.6g}" for v in t.values)) for t in front]
    assert f"Pareto front: {len(front)} non-dominated of 20 complete trials" in page
    assert "values (loss minimize, accuracy maximize)" in page
    numbers = ", ".join(str(t.number) for t in front)
    assert f"the Pareto front is trial(s) {numbers}" in figs["pareto-front"]["alt"]


def test_empty_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    optuna.create_study(study_name="empty", storage=url)
    out = tmp_path / "out"
    assert html_report.main(url, None, str(out), None) == 1
    captured = capsys.readouterr()
    assert "has no trials" in captured.err
    assert captured.out.strip() == str((out / "report.html").resolve())
    page, figs, skipped = _read(out)
    assert not figs and set(skipped) == ALL_FIGURES
    assert 'id="empty"' in page and "no trials" in page


def test_buckets() -> None:
    def trial(n: int, **params: Any) -> optuna.trial.FrozenTrial:
        dists = {
            "lr": FloatDistribution(1e-5, 1e-1, log=True),
            "layers": IntDistribution(1, 100),
            "opt": CategoricalDistribution([f"o{i}" for i in range(20)]),
        }
        t = optuna.create_trial(
            state=TrialState.COMPLETE,
            value=0.0,
            params=params,
            distributions={k: dists[k] for k in params},
        )
        t.number = n
        return t

    trials = [
        trial(i, lr=10 ** (-5 + i * 0.04), layers=i + 1, opt=f"o{i % 20}") for i in range(100)
    ]
    lr = report_figures.bucket(trials, "lr")
    assert lr.is_float and len(lr.labels) == 4
    assert sorted(list(lr.of.values()).count(b) for b in range(4)) == [25, 25, 25, 25]
    layers = report_figures.bucket(trials, "layers")  # an int with many values: quantiles too
    assert layers.is_float and len(layers.labels) == 4
    opt = report_figures.bucket(trials, "opt")  # 20 categories: the 11 most common and "other"
    assert not opt.is_float and len(opt.labels) == 12 and opt.labels[-1] == "other"


# ------------------------------------------------------------------ escaping, location, cost
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_hostile_names_and_attrs_are_escaped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hostile.db'}"
    study = optuna.create_study(study_name=f"s{HOSTILE}", storage=url)
    dists = {HOSTILE: CategoricalDistribution([HOSTILE, "b"]), "lr": FloatDistribution(0.0, 1.0)}
    for i in range(6):
        fail = i % 3 == 0
        study.add_trial(
            optuna.create_trial(
                state=TrialState.FAIL if fail else TrialState.COMPLETE,
                value=None if fail else float(i),
                params={HOSTILE: HOSTILE if i % 2 else "b", "lr": i / 10},
                distributions=dists,
                user_attrs={
                    "hpo:failure_class": HOSTILE,
                    "hpo:error_msg": HOSTILE,
                    "hpo:device": HOSTILE,
                }
                if fail
                else {"hpo:device": HOSTILE},
            )
        )
    out = tmp_path / "out"
    html_report.write_report(url, None, out, None)
    page, figs, _ = _read(out)
    assert "<script" not in page and "<img src=x" not in page  # no markup from the study
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page  # shown, as text
    assert {"timeline", "failure-classes", "failure-rate", "history"} <= set(figs)
    for img in figs.values():  # alt texts carry the names too, escaped inside the attribute
        assert img["src"].startswith("data:image/png;base64,")


def _owned_study(tmp_path: Path, run_dir: Path, host: str) -> str:
    url = f"sqlite:///{tmp_path / 'owned.db'}"
    study = optuna.create_study(study_name="owned/by hpo", storage=url)
    owner = {"host": host, "pid": 1, "ctime": 0.0, "run_dir": str(run_dir), "worker_pid": 2}
    for i in range(3):
        study.add_trial(
            optuna.create_trial(
                value=float(i),
                params={"x": i / 3},
                distributions={"x": FloatDistribution(0.0, 1.0)},
                system_attrs={st.OWNER_KEY: owner},
            )
        )
    return url


def test_report_goes_to_the_run_folder_the_trials_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "runs" / "owned"
    run_dir.mkdir(parents=True)
    (run_dir / "events.jsonl").write_text(
        json.dumps({"ts": 1.0e9, "event": "worker_lost", "slot": 0, "pid": 2, "exit_code": -9})
        + "\n"
    )
    url = _owned_study(tmp_path, run_dir, st.HOST)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert html_report.main(url, None, None, None) == 0
    assert capsys.readouterr().out.strip() == str(run_dir / "report" / "report.html")
    assert list(cwd.iterdir()) == []
    page = (run_dir / "report" / "report.html").read_text()
    assert "worker_lost" in page  # the run's event log was read too


def test_report_without_a_run_folder_says_where_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Owned by another host: its run folder is not this machine's.
    url = _owned_study(tmp_path, tmp_path, "another-host")
    monkeypatch.chdir(tmp_path)
    assert html_report.main(url, None, None, None) == 0
    captured = capsys.readouterr()
    out = tmp_path / "hpo-report-owned_by_hpo"
    assert captured.out.strip() == str((out / "report.html").resolve())
    assert "no run folder on this host" in captured.err and "-o" in captured.err


def test_report_leaves_no_pyplot_state(tmp_path: Path) -> None:
    """Optuna's plots use pyplot and switch the global style to ggplot: neither may leak."""
    import matplotlib
    from matplotlib import pyplot as plt

    url = f"sqlite:///{tmp_path / 'plain.db'}"
    study = optuna.create_study(study_name="plain", storage=url)
    study.optimize(_plain_objective, n_trials=8, catch=(RuntimeError,))
    matplotlib.style.use("default")  # whatever an earlier test left
    before = dict(matplotlib.rcParams)
    html_report.write_report(url, None, tmp_path / "out", None)
    assert plt.get_fignums() == []
    changed = {k for k, v in matplotlib.rcParams.items() if before.get(k) != v}
    changed -= {"backend", "backend_fallback"}  # Agg, chosen on purpose (no display needed)
    assert not changed, f"rcParams changed by the report: {sorted(changed)[:5]}"


def test_cli_report_does_not_import_scikit_learn(tmp_path: Path) -> None:
    """Optuna's importance package imports fANOVA's scikit-learn when installed; the report
    uses PED-ANOVA and must not pay that import (about half of `hpo report`)."""
    pytest.importorskip("sklearn")
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    study = optuna.create_study(study_name="plain", storage=url)
    study.optimize(_plain_objective, n_trials=12, catch=(RuntimeError,))
    code = (
        "import sys; from hpo.html_report import main; "
        f"rc = main({url!r}, None, {str(tmp_path / 'out')!r}, None); "
        "print('sklearn' in sys.modules, rc)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", code]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-2:] == ["False", "0"]
    assert "importance" in figures_in((tmp_path / "out" / "report.html").read_text())


def test_report_package_stays_small() -> None:
    """The report builds on Optuna's plots and a template: its code stays under 700 lines."""
    package = Path(html_report.__file__).parent
    lines = sum(len(p.read_text().splitlines()) for p in package.glob("*.py"))
    assert lines < 700, f"hpo/html_report is {lines} lines"
    assert (package.parent / "templates" / "report.html.j2").is_file()
