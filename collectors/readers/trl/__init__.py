"""TRL: an output folder (trainer_state.json, training_args.bin, launches) and a console log."""
