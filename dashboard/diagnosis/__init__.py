"""The diagnosis engine: from a run's metrics, samples and config to findings with evidence and the checks
of the notes' section 7. Pure Python (numpy/pandas); no streamlit. Used by the dashboard and grpo-diagnose."""

from dashboard.diagnosis.engine import Diagnosis, diagnose
from dashboard.diagnosis.findings import Check, Evidence, Finding, Link, NotJudged, sort_findings
from dashboard.diagnosis.registry import RULES

__all__ = ["RULES", "Check", "Diagnosis", "Evidence", "Finding", "Link", "NotJudged", "diagnose", "sort_findings"]
