"""The rules, one module per family of symptoms; importing this package registers every rule with
`dashboard.diagnosis.registry`. `config_questions` answers the notes' configuration questions (section 6)
from a run's config: diagnosis too, but of the setup rather than the curves."""

from dashboard.diagnosis.rules import (  # noqa: F401 - importing a rules module registers its rules
    batch,
    config,
    first_step,
    grouping,
    kl,
    learning,
    length,
    policy,
    resume,
    reward,
    samples,
    schedule,
)
