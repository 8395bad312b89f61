"""Loading a model prints no "Loading weights" bar of transformers' own, and leaves its switch as it was."""

import pytest


def test_loading_the_bundled_encoder_draws_no_bar_of_its_own(capfd):
    pytest.importorskip("sentence_transformers")
    from transformers.utils import logging as hf_logging

    from inferqa.models import load_sentence_transformer

    hf_logging.enable_progress_bar()
    load_sentence_transformer("minilm")
    assert "Loading weights" not in capfd.readouterr().err
    assert hf_logging.is_progress_bar_enabled()  # restored: the user's own loads keep their bar
