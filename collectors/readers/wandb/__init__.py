"""wandb: the offline `.wandb` record file, an online run's folder, and their shared history decoding."""
