"""verl: a console log of `step:N - key:value` lines, and the Hydra config beside it."""
