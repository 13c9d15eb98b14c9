"""The notes' five questions of section 6, answered from a run's flat dotted config. No streamlit here.

Each framework spells the same choices differently, so each has a small reader: a key map from the
question to the config keys it looks at, and the meaning of their values. What a config does not say is
answered "unknown", never guessed from a default the run may not have used.

- questions.py: the questions, `Answer`, `Lookup` and the value readings the readers share;
- core.py, trl.py, verl.py, openrlhf.py: one reader per framework (`READER`, a function per question);
- answering.py: the registry of readers and `answer_questions`;
- diff.py: `config_diff` and `display` for comparing runs' configs.
"""

from dashboard.diagnosis.rules.config_questions.answering import READERS, answer_questions
from dashboard.diagnosis.rules.config_questions.diff import config_diff, display
from dashboard.diagnosis.rules.config_questions.openrlhf import OPENRLHF_SIGNATURE, is_openrlhf
from dashboard.diagnosis.rules.config_questions.questions import (
    QUESTIONS,
    UNKNOWN,
    Answer,
    Lookup,
    Reader,
    truthy,
)
from dashboard.diagnosis.rules.config_questions.verl import is_old_verl_kl

__all__ = ["OPENRLHF_SIGNATURE", "QUESTIONS", "READERS", "UNKNOWN", "Answer", "Lookup", "Reader", "answer_questions",
           "config_diff", "display", "is_old_verl_kl", "is_openrlhf",
           "truthy"]
