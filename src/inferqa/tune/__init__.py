"""Tuning a stage's free parameters on a dev split: `diversify` chooses the adaptive
diversification margin. The union_freq weight search (`tune_union` in `inferqa.reading.run`)
belongs here too, as `tune/union.py`."""
