"""TensorBoard: a logdir split into launches, its event files' records (tfrecord) and their decoding (events)."""
