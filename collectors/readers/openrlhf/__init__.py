"""OpenRLHF: the console log its PPO / REINFORCE++ / GRPO trainer writes through Ray (`console`)."""
