"""Score the diagnosis on every labelled corpus and print recall, precision, false criticals and the confusion.

    python scripts/score_diagnosis.py [--write-doc] [--real-runs PATH]

Corpora: sample_runs/ (manifest.json), tests/fixtures/trl_corpus/ (manifest.json) and the real runs'
labels.json (default ../shared/fixtures/real-runs; left out when absent). With --write-doc the report replaces
the text between the accuracy markers of docs/diagnosis.md (the rest of the file is left as it is).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashboard.diagnosis.accuracy.corpora import REAL_RUNS, ROOT, score_all
from dashboard.diagnosis.accuracy.scoring import report_markdown

DOC = ROOT / "docs" / "diagnosis.md"
BEGIN = "<!-- accuracy: begin (written by scripts/score_diagnosis.py --write-doc) -->"
END = "<!-- accuracy: end -->"


def replace_between(text: str, body: str) -> str:
    """`text` with what lies between BEGIN and END replaced by `body`; ValueError when a marker is missing."""
    if BEGIN not in text or END not in text or text.index(BEGIN) > text.index(END):
        raise ValueError(f"{DOC}: the accuracy markers are missing or out of order ({BEGIN} ... {END})")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{body}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write-doc", action="store_true", help=f"rewrite the accuracy section of {DOC.name}")
    p.add_argument("--real-runs", type=Path, default=REAL_RUNS, help="folder with labels.json")
    args = p.parse_args(argv)
    scores = score_all(args.real_runs)
    report = report_markdown(scores)
    print(report)
    if args.write_doc:
        try:
            DOC.write_text(replace_between(DOC.read_text(), report))
        except ValueError as e:
            print(f"score_diagnosis: {e}", file=sys.stderr)
            return 2
        print(f"wrote the accuracy section of {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
