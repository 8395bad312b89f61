"""Tuning a stage's free parameters on a dev split: `diversify` chooses the adaptive
diversification margin."""
