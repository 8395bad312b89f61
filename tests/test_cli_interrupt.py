"""Ctrl-C: exit 130 with one line saying what was kept and how to resume."""

import pytest


def test_ctrl_c_says_what_was_kept_and_how_to_resume(monkeypatch, capsys):
    import inferqa.cli as cli

    def interrupted(**_):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "app", interrupted)
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 130 and len(err) == 1
    assert err[0].startswith("inferqa: interrupted:") and "resumes" in err[0] and "half-written" in err[0]
