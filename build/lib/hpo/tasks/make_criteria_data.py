"""Write the synthetic criteria data set and the tiny model's WordPiece vocabulary.

Run ``python -m hpo.tasks.make_criteria_data`` to regenerate ``hpo/tasks/data/criteria.jsonl``
and ``hpo/tasks/tiny_tokenizer/vocab.txt``; the output depends only on ``--seed`` and ``--n``.

Every example pairs a clinical-trial style eligibility criterion with a short patient summary;
``label`` is 1 when the patient meets the criterion. The data is SYNTHETIC: patients are drawn
from a simple generative model (age, sex, conditions, medications, labs, history), the relevant
fact is always stated, and one to four unrelated facts surround it. About 30% of negatives are
hard (an age one year short, type 1 instead of type 2 diabetes, a drug started six weeks ago
instead of three months, an infarction inside the exclusion window), and 2% of the labels
disagree with the patient, so a pretrained encoder beats the majority class clearly but does not
reach F1 = 1 (TF-IDF + logistic regression: about 0.74 macro-F1; MiniLM fine-tuned for two
epochs: about 0.8; always "meets": 0.44).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA_PATH = HERE / "data" / "criteria.jsonl"
VOCAB_PATH = HERE / "tiny_tokenizer" / "vocab.txt"

N_EXAMPLES = 2000
NEG_PER_POS = 1 / 3.8  # one negative for 3.8 positives
LABEL_NOISE = 0.02  # share of examples whose label disagrees with the generated patient
HARD_NEGATIVE = 0.3  # share of negatives that sit next to the boundary or are a look-alike

CONDITIONS = [
    "hypertension", "hyperlipidemia", "obesity", "osteoarthritis", "hypothyroidism",
    "gastroesophageal reflux disease", "atrial fibrillation", "asthma", "chronic back pain",
    "obstructive sleep apnea", "anemia", "gout", "migraine", "benign prostatic hyperplasia",
    "iron deficiency", "allergic rhinitis",
]  # fmt: skip
BACKGROUND_MEDS = [
    "amlodipine 5 mg daily", "lisinopril 10 mg daily", "atorvastatin 40 mg at night",
    "omeprazole 20 mg daily", "levothyroxine 75 mcg daily", "aspirin 81 mg daily",
    "vitamin D supplements", "hydrochlorothiazide 25 mg daily", "cetirizine as needed",
    "acetaminophen as needed", "allopurinol 300 mg daily", "tamsulosin 0.4 mg daily",
]  # fmt: skip

# (diagnosis named by the criterion, look-alike diagnoses that do NOT satisfy it)
DIAGNOSES: list[tuple[str, list[str]]] = [
    ("type 2 diabetes mellitus", ["type 1 diabetes mellitus", "prediabetes", "gestational diabetes"]),
    ("rheumatoid arthritis", ["osteoarthritis of both knees", "psoriatic arthritis"]),
    ("heart failure with reduced ejection fraction", ["heart failure with preserved ejection fraction"]),
    ("non-small cell lung cancer", ["small cell lung cancer", "a benign pulmonary nodule"]),
    ("chronic obstructive pulmonary disease", ["moderate persistent asthma", "bronchiectasis"]),
    ("major depressive disorder", ["bipolar I disorder", "generalized anxiety disorder"]),
    ("moderate-to-severe plaque psoriasis", ["mild plaque psoriasis", "atopic dermatitis"]),
    ("ulcerative colitis", ["Crohn's disease", "irritable bowel syndrome"]),
    ("Parkinson's disease", ["essential tremor", "drug-induced parkinsonism"]),
    ("relapsing multiple sclerosis", ["primary progressive multiple sclerosis"]),
]  # fmt: skip
HISTORY = [
    "stroke", "myocardial infarction", "seizures", "hepatitis B infection", "HIV infection",
    "pancreatitis", "solid organ transplantation", "deep vein thrombosis", "bariatric surgery",
]  # fmt: skip
EVENTS = ["myocardial infarction", "stroke", "major surgery", "hospitalization for heart failure"]
STABLE_MEDS: list[tuple[str, str, list[str]]] = [
    ("metformin", "1000 mg twice daily", ["sitagliptin", "glipizide"]),
    ("methotrexate", "15 mg weekly", ["hydroxychloroquine", "sulfasalazine"]),
    ("sertraline", "100 mg daily", ["bupropion", "mirtazapine"]),
    ("levodopa", "100 mg three times daily", ["pramipexole", "ropinirole"]),
    ("mesalamine", "2.4 g daily", ["budesonide", "azathioprine"]),
]
DRUG_CLASSES: dict[str, list[str]] = {
    "anticoagulants": ["warfarin", "apixaban", "rivaroxaban", "dabigatran"],
    "systemic corticosteroids": ["prednisone", "dexamethasone", "methylprednisolone"],
    "insulin": ["insulin glargine", "insulin aspart", "insulin detemir"],
    "strong CYP3A4 inhibitors": ["clarithromycin", "ketoconazole", "itraconazole"],
}


@dataclass
class Example:
    criterion: str
    facts: list[str]  # sentences about the relevant attribute (always shown)
    kind: str
    noise: list[str] = field(default_factory=list)  # unrelated sentences


def _pick(rng: random.Random, options: list[str]) -> str:
    return options[rng.randrange(len(options))]


def _years_ago(rng: random.Random, lo: int, hi: int) -> str:
    n = rng.randint(lo, hi)
    return f"{n} years ago" if n > 1 else "a year ago"


# Each family returns the criterion and the relevant sentences for a patient with label ``y``.
# ``hard`` asks for a negative next to the boundary (or a positive that looks like a negative).


def fam_age_min(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    n = rng.choice([18, 40, 50, 60, 65])
    crit = _pick(
        rng,
        [f"Age {n} years or older", f"Adults aged at least {n} years at screening",
         f"Patients must be >= {n} years of age", f"Male or female, aged {n} years or above"],
    )  # fmt: skip
    if y:
        age = rng.randint(n, n + 2) if hard else rng.randint(n, 85)
    else:
        age = rng.randint(max(16, n - 3), n - 1) if hard else rng.randint(max(16, n - 25), n - 1)
    p["age"] = age
    return Example(crit, [], "age_min")


def fam_age_range(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    a, b = rng.choice([(18, 65), (18, 75), (40, 80), (30, 70), (50, 85)])
    crit = _pick(rng, [f"Aged {a} to {b} years inclusive", f"Age between {a} and {b} years"])
    if y:
        age = rng.choice([a, a + 1, b - 1, b]) if hard else rng.randint(a, b)
    elif rng.random() < 0.7:
        age = rng.randint(b + 1, b + 3) if hard else rng.randint(b + 1, min(b + 20, 95))
    else:
        age = rng.randint(max(16, a - 3), a - 1) if hard else rng.randint(max(16, a - 15), a - 1)
    p["age"] = age
    return Example(crit, [], "age_range")


def fam_diagnosis(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    name, lookalikes = DIAGNOSES[rng.randrange(len(DIAGNOSES))]
    crit = _pick(
        rng,
        [f"Confirmed diagnosis of {name}", f"Documented {name} for at least 6 months",
         f"Diagnosis of {name} according to established criteria",
         f"Patients with {name}"],
    )  # fmt: skip
    if y:
        dx = name
    elif hard:
        dx = _pick(rng, lookalikes)
    else:
        other = [d for d, _ in DIAGNOSES if d != name]
        dx = _pick(rng, other)
    year = rng.randint(2008, 2023)
    fact = _pick(
        rng,
        [f"Diagnosed with {dx} in {year}.", f"Known {dx}, followed in clinic since {year}.",
         f"Past medical history significant for {dx}.", f"Referred for management of {dx}."],
    )  # fmt: skip
    return Example(crit, [fact], "diagnosis")


def fam_no_history(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    cond = _pick(rng, HISTORY)
    crit = _pick(
        rng,
        [f"No history of {cond}", f"Patients without prior {cond}",
         f"Must not have a history of {cond}"],
    )  # fmt: skip
    if y:
        # Explicit negations mention the word too: a bag of words cannot tell them apart.
        facts = (
            [_pick(rng, [f"Denies any history of {cond}.", f"No prior {cond}."])]
            if hard or rng.random() < 0.4
            else []
        )
    else:
        facts = [
            _pick(
                rng,
                [
                    f"History of {cond} {_years_ago(rng, 2, 15)}.",
                    f"Past medical history includes {cond}.",
                    f"Remote {cond} without residual complications.",
                ],
            )  # fmt: skip
        ]
    return Example(crit, facts, "no_history")


def fam_recent_event(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    event = _pick(rng, EVENTS)
    m = rng.choice([3, 6, 12])
    crit = _pick(
        rng,
        [f"No {event} within {m} months prior to screening",
         f"No {event} in the past {m} months"],
    )  # fmt: skip
    if y:
        if hard:
            months = rng.randint(m + 1, m + 4)
            facts = [f"{event.capitalize()} {months} months ago."]
        elif rng.random() < 0.5:
            facts = [f"{event.capitalize()} {_years_ago(rng, 2, 10)}."]
        else:
            facts = []
    else:
        months = rng.randint(max(1, m - 2), m) if hard else rng.randint(1, m)
        when = (
            f"{months * 4} weeks ago"
            if months <= 2 and rng.random() < 0.5
            else f"{months} months ago"
        )
        facts = [_pick(rng, [f"{event.capitalize()} {when}.", f"Recovering from {event} {when}."])]
    return Example(crit, facts, "recent_event")


def _lab(
    rng: random.Random, y: int, hard: bool, lo: float | None, hi: float | None,
    span: tuple[float, float], step: float,
) -> float:  # fmt: skip
    """A value inside [lo, hi] when y, else outside; ``hard`` puts it within a few steps of a bound."""
    lo_v = span[0] if lo is None else lo
    hi_v = span[1] if hi is None else hi
    if y:
        if hard:
            v = rng.choice([b for b in (lo, hi) if b is not None])
            v = v + rng.randint(0, 2) * step * (1 if v == lo else -1)
        else:
            v = rng.uniform(lo_v, hi_v)
    else:
        sides = []
        if lo is not None:
            sides.append((max(span[0], lo - (3 * step if hard else lo - span[0])), lo - step))
        if hi is not None:
            sides.append((hi + step, min(span[1], hi + (3 * step if hard else span[1] - hi))))
        a, b = rng.choice(sides)
        v = rng.uniform(a, b)
    return round(round(v / step) * step, 6)


def fam_lab(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    which = rng.randrange(6)
    if which == 0:
        lo, hi = rng.choice([(7.0, 10.5), (7.5, 11.0), (6.5, 9.0)])
        crit = f"HbA1c between {lo}% and {hi}% at screening"
        v = _lab(rng, y, hard, lo, hi, (5.0, 13.5), 0.1)
        fact = _pick(rng, [f"HbA1c {v:.1f}%.", f"Most recent HbA1c was {v:.1f}%."])
    elif which == 1:
        t = rng.choice([30, 45, 60])
        crit = _pick(
            rng,
            [
                f"eGFR >= {t} mL/min/1.73 m2",
                f"Estimated glomerular filtration rate of at least {t} mL/min/1.73 m2",
            ],
        )
        v = _lab(rng, y, hard, t, None, (12, 115), 1)
        fact = f"eGFR {v:.0f} mL/min/1.73 m2."
    elif which == 2:
        lo, hi = rng.choice([(18.5, 35.0), (18.5, 40.0), (25.0, 45.0)])
        crit = f"Body mass index between {lo} and {hi} kg/m2"
        v = _lab(rng, y, hard, lo, hi, (16.0, 52.0), 0.1)
        fact = _pick(rng, [f"BMI {v:.1f} kg/m2.", f"Body mass index {v:.1f} kg/m2."])
    elif which == 3:
        t = rng.choice([35, 40])
        crit = f"Left ventricular ejection fraction <= {t}%"
        v = _lab(rng, y, hard, None, t, (15, 70), 1)
        fact = _pick(
            rng, [f"LVEF {v:.0f}% on echocardiogram.", f"Ejection fraction estimated at {v:.0f}%."]
        )
    elif which == 4:
        t = rng.choice([75, 100])
        crit = f"Platelet count >= {t} x 10^9/L"
        v = _lab(rng, y, hard, t, None, (20, 420), 5)
        fact = f"Platelets {v:.0f} x 10^9/L."
    else:
        hb = rng.choice([9.0, 10.0])
        crit = f"Hemoglobin >= {hb} g/dL"
        v = _lab(rng, y, hard, hb, None, (6.0, 16.5), 0.1)
        fact = f"Hemoglobin {v:.1f} g/dL."
    return Example(crit, [fact], "lab")


def fam_stable_med(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    drug, dose, others = STABLE_MEDS[rng.randrange(len(STABLE_MEDS))]
    crit = _pick(
        rng,
        [f"On a stable dose of {drug} for at least 3 months",
         f"Receiving {drug} at a stable dose for 12 weeks or longer"],
    )  # fmt: skip
    if y:
        facts = [f"Takes {drug} {dose}, unchanged for {rng.randint(4, 30)} months."
                 if rng.random() < 0.5 else f"Has been on {drug} {dose} since {rng.randint(2012, 2022)}."]  # fmt: skip
    elif hard:
        facts = [
            _pick(
                rng,
                [
                    f"Started {drug} {dose} {rng.randint(2, 10)} weeks ago.",
                    f"{drug.capitalize()} dose increased to {dose} last month.",
                    f"Stopped {drug} {rng.randint(2, 8)} months ago because of side effects.",
                ],
            )  # fmt: skip
        ]
    else:
        facts = [f"Takes {_pick(rng, others)} daily."]
    return Example(crit, facts, "stable_med")


def fam_no_drug(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    cls = rng.choice(sorted(DRUG_CLASSES))
    crit = _pick(rng, [f"No current treatment with {cls}", f"Not receiving {cls}"])
    drug = _pick(rng, DRUG_CLASSES[cls])
    if y:
        facts = (
            [f"Stopped {drug} {_years_ago(rng, 2, 6)}."]
            if hard
            else ([] if rng.random() < 0.6 else [f"Not on {drug}."])
        )
    else:
        facts = [_pick(rng, [f"Currently on {drug}.", f"Medications include {drug}."])]
    return Example(crit, facts, "no_drug")


def fam_pregnancy(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    crit = _pick(
        rng,
        ["Not pregnant or breastfeeding",
         "Women of childbearing potential must not be pregnant or lactating"],
    )  # fmt: skip
    p["sex"] = "female" if (not y or rng.random() < 0.6) else "male"
    if p["sex"] == "female":
        p["age"] = rng.randint(19, 44)
    if y:
        facts = (
            [
                _pick(
                    rng,
                    [
                        "Negative urine pregnancy test at screening.",
                        "Postmenopausal.",
                        "Status post hysterectomy.",
                    ],
                )
            ]  # fmt: skip
            if p["sex"] == "female" and (hard or rng.random() < 0.5)
            else []
        )
    else:
        facts = [
            _pick(
                rng,
                [
                    f"Currently pregnant at {rng.randint(8, 34)} weeks gestation.",
                    f"Breastfeeding her {rng.randint(2, 10)}-month-old son.",
                    "Positive serum pregnancy test at screening.",
                ],
            )  # fmt: skip
        ]
    return Example(crit, facts, "pregnancy")


def fam_ecog(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    mx = rng.choice([1, 2])
    crit = _pick(
        rng,
        [f"ECOG performance status of 0 to {mx}", f"ECOG performance status <= {mx}"],
    )  # fmt: skip
    ecog = (
        (rng.randint(max(0, mx - 1), mx) if hard else rng.randint(0, mx))
        if y
        else (mx + 1 if hard else rng.randint(mx + 1, 4))
    )
    fact = _pick(rng, [f"ECOG performance status {ecog}.", f"ECOG {ecog}."])
    return Example(crit, [fact], "ecog")


def fam_smoking(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    if rng.random() < 0.5:
        crit = _pick(rng, ["Current non-smoker", "Must not currently smoke tobacco"])
        if y:
            facts = [
                _pick(
                    rng,
                    [
                        f"Former smoker, quit in {rng.randint(2000, 2021)}.",
                        "Former smoker with a 20 pack-year history.",
                    ],
                )  # fmt: skip
                if hard
                else _pick(rng, ["Never smoker.", "Does not use tobacco."])
            ]
        else:
            facts = [
                _pick(
                    rng,
                    [
                        f"Current smoker, {rng.randint(5, 40)} pack-years.",
                        "Smokes half a pack of cigarettes per day.",
                    ],
                )  # fmt: skip
            ]
    else:
        t = rng.choice([10, 20, 30])
        crit = f"Current or former smoker with at least {t} pack-years"
        if y:
            py = rng.randint(t, t + 3) if hard else rng.randint(t, t + 40)
            facts = [f"{_pick(rng, ['Current', 'Former'])} smoker, {py} pack-years."]
        elif hard:
            facts = [
                f"{_pick(rng, ['Current', 'Former'])} smoker, {rng.randint(max(1, t - 5), t - 1)} pack-years."
            ]
        else:
            facts = ["Never smoker."]
    return Example(crit, facts, "smoking")


def fam_consent(rng: random.Random, y: int, hard: bool, p: dict[str, object]) -> Example:
    crit = _pick(
        rng,
        ["Able to understand and sign written informed consent",
         "Capable of giving signed informed consent"],
    )  # fmt: skip
    if y:
        facts = (
            [
                _pick(
                    rng,
                    [
                        "Alert and oriented, lives independently.",
                        "Mild hearing loss; uses hearing aids.",
                    ],
                )
            ]
            if hard or rng.random() < 0.4
            else []
        )
    else:
        facts = [
            _pick(
                rng,
                [
                    "Advanced dementia; decisions are made by a legal guardian.",
                    "Severe cognitive impairment after traumatic brain injury.",
                    "Unable to communicate after a large stroke; a daughter holds power of attorney.",
                ],
            )  # fmt: skip
        ]
    return Example(crit, facts, "consent")


FAMILIES: list[tuple[Callable[[random.Random, int, bool, dict[str, object]], Example], float]] = [
    (fam_age_min, 0.6), (fam_age_range, 0.4), (fam_diagnosis, 2.0), (fam_no_history, 1.5),
    (fam_recent_event, 0.8), (fam_lab, 0.8), (fam_stable_med, 1.2), (fam_no_drug, 1.2),
    (fam_pregnancy, 0.8), (fam_ecog, 0.5), (fam_smoking, 1.0), (fam_consent, 0.6),
]  # fmt: skip


def _background(rng: random.Random, kind: str, sex: str) -> list[str]:
    """One to four unrelated facts, so the model has to find the relevant one."""
    out: list[str] = []
    pool = [c for c in CONDITIONS if sex == "male" or c != "benign prostatic hyperplasia"]
    conds = rng.sample(pool, rng.randint(1, 2))
    out.append(
        _pick(rng, ["Other history: ", "Comorbidities include ", "Also has "])
        + ", ".join(conds)
        + "."
    )
    if rng.random() < 0.5 and kind not in ("stable_med", "no_drug"):
        meds = rng.sample(BACKGROUND_MEDS, rng.randint(1, 2))
        out.append("Medications: " + " and ".join(meds) + ".")
    if rng.random() < 0.35 and kind != "lab":
        out.append(_pick(rng, [f"Blood pressure {rng.randint(110, 165)}/{rng.randint(65, 98)} mmHg.",
                               f"Creatinine {rng.uniform(0.6, 1.3):.1f} mg/dL.",
                               f"LDL cholesterol {rng.randint(70, 190)} mg/dL."]))  # fmt: skip
    if rng.random() < 0.2 and kind not in ("smoking",):
        out.append(_pick(rng, ["Never smoker.", "Drinks alcohol socially.", "Walks daily.",
                               "Works as a teacher.", "Lives with spouse."]))  # fmt: skip
    return out


def make_example(rng: random.Random, y_text: int) -> tuple[str, str, str]:
    """(criterion, text, kind) for a patient who meets the criterion iff ``y_text``."""
    fams, weights = zip(*FAMILIES, strict=True)
    fam = rng.choices(fams, weights=weights)[0]
    p: dict[str, object] = {"age": rng.randint(22, 84), "sex": rng.choice(["male", "female"])}
    hard = rng.random() < HARD_NEGATIVE
    ex = fam(rng, y_text, hard, p)
    noun = {"male": _pick(rng, ["man", "male"]), "female": _pick(rng, ["woman", "female"])}[
        str(p["sex"])
    ]
    head = _pick(rng, [f"{p['age']}-year-old {noun}.", f"{p['age']} year old {noun} presenting for screening.",
                       f"Patient is a {p['age']}-year-old {noun}."])  # fmt: skip
    body = ex.facts + _background(rng, ex.kind, str(p["sex"]))
    rng.shuffle(body)
    return ex.criterion, " ".join([head, *body]), ex.kind


def generate(seed: int = 0, n: int = N_EXAMPLES) -> list[dict[str, object]]:
    """``n`` examples, exactly round(n * 1/4.8) negatives, deterministic in ``seed``."""
    rng = random.Random(seed)
    n_neg = round(n * NEG_PER_POS / (1 + NEG_PER_POS))
    labels = [0] * n_neg + [1] * (n - n_neg)
    rng.shuffle(labels)
    noisy = set(rng.sample(range(n), round(n * LABEL_NOISE)))
    rows: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()
    for i, y in enumerate(labels):
        while True:
            crit, text, kind = make_example(rng, 1 - y if i in noisy else y)
            if (crit, text) not in seen:
                seen.add((crit, text))
                break
        rows.append({"id": i, "criterion": crit, "text": text, "label": y, "kind": kind})
    return rows


def build_vocab(rows: list[dict[str, object]]) -> list[str]:
    """BERT special tokens, single characters (so unseen words still split), then data words."""
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    norm, pre = BertNormalizer(lowercase=True), BertPreTokenizer()
    words: dict[str, int] = {}
    for r in rows:
        for col in ("criterion", "text"):
            for w, _ in pre.pre_tokenize_str(norm.normalize_str(str(r[col]))):
                words[w] = words.get(w, 0) + 1
    chars = [chr(c) for c in range(33, 127) if not chr(c).isupper()]
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = special + chars + ["##" + c for c in chars if c.isalnum()]
    known = set(vocab)
    vocab += [w for w in sorted(words, key=lambda w: (-words[w], w)) if w not in known]
    return vocab


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=N_EXAMPLES)
    ap.add_argument("--out", type=Path, default=DATA_PATH)
    ap.add_argument("--vocab", type=Path, default=VOCAB_PATH)
    args = ap.parse_args(argv)
    rows = generate(args.seed, args.n)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    vocab = build_vocab(rows)
    args.vocab.parent.mkdir(parents=True, exist_ok=True)
    args.vocab.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    pos = sum(r["label"] == 1 for r in rows)
    print(f"wrote {len(rows)} examples ({pos} positive, {len(rows) - pos} negative) to {args.out}")
    print(f"wrote {len(vocab)} tokens to {args.vocab}")


if __name__ == "__main__":
    main()
