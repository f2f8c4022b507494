"""The ``recordseal`` command line as an operator meets it: ``--version``, help on every
option, ``--json`` on every command that prints a result, usage errors, file modes."""

from __future__ import annotations

import argparse
import json
import os
import stat
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from recordseal import __version__
from recordseal.cli import parser
from tests.servers import ROOT

#: Commands that run instead of printing a result.
LONG_RUNNING = {("serve",), ("witness", "serve")}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=120, check=False,
    )  # fmt: skip


def commands(
    command: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every leaf command with its parser, by its words (``("token", "create")``)."""
    children = [
        action for action in command._actions if isinstance(action, argparse._SubParsersAction)
    ]
    if not children:
        yield path, command
    for action in children:
        for name, child in action.choices.items():
            yield from commands(child, (*path, name))


def test_version_is_the_package_version() -> None:
    done = run("--version")
    assert done.returncode == 0
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert done.stdout.strip() == f"recordseal {project['version']}" == f"recordseal {__version__}"


def test_every_option_and_argument_of_every_command_has_help() -> None:
    leaves = dict(commands(parser()))
    assert len(leaves) >= 11
    for words, command in leaves.items():
        for action in command._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"recordseal {' '.join(words)}: {action.dest} has no help text"
            # Words, not only a default in parentheses such as "(<data-dir>/transparency)".
            said = action.help.split("(")[0].strip()
            assert said, f"recordseal {' '.join(words)}: {action.dest}'s help says nothing"


def test_help_is_plain_text_without_restructuredtext_markup() -> None:
    """Descriptions taken from docstrings lose their ``literal`` markup on a terminal."""
    for words, command in commands(parser()):
        shown = command.format_help()
        assert "``" not in shown, f"recordseal {' '.join(words)} --help shows ``markup``"


def test_every_command_that_prints_a_result_takes_json() -> None:
    for words, command in commands(parser()):
        if words in LONG_RUNNING:
            continue
        options = {option for action in command._actions for option in action.option_strings}
        assert "--json" in options, f"recordseal {' '.join(words)} has no --json"


@pytest.mark.parametrize(
    "args", [["nonsense"], ["token", "create"], ["serve", "--port", "many"], ["verify"]]
)
def test_usage_errors_exit_64(args: list[str]) -> None:
    done = run(*args)
    assert done.returncode == 64, done.stderr
    assert "usage:" in done.stderr and "Traceback" not in done.stderr


def parsers(command: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser and every parser under it, leaves and groups alike."""
    yield command
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from parsers(child)


def test_no_parser_takes_an_abbreviated_option(tmp_path: Path) -> None:
    """``--key`` is not silently ``--keys``, nor ``--keys`` ``--keys-out``: an option is
    spelt out or refused, on every parser of the command line."""
    every = list(parsers(parser()))
    assert len(every) > len(dict(commands(parser())))
    assert [command.prog for command in every if command.allow_abbrev] == []
    for args in (
        ["verify", "bundle.json", "--key", "keys.json"],
        ["keys", "export", "--keys", "keys.json"],
        ["token", "list", "--ten", "acme"],
    ):
        done = run(*args, cwd=tmp_path)
        assert done.returncode == 64, (args, done.stderr)
        assert f"unrecognized arguments: {args[-2]}" in done.stderr
        assert not (tmp_path / "keys.json").exists()


def test_json_results_of_the_commands(tmp_path: Path) -> None:
    data = tmp_path / "data"
    token = json.loads(
        run(
            "token", "create", "--data-dir", str(data), "--tenant", "acme", "--json",
            "--create-data-dir",
        ).stdout
    )  # fmt: skip
    assert token["tenant"] == "acme" and token["token"].startswith("rs_")
    exported = run("keys", "export", "--data-dir", str(data), "--json", cwd=tmp_path)
    summary = json.loads(exported.stdout)
    assert summary["witnesses"] == [] and summary["quorum"] == 1
    assert (summary["logs"], summary["log_keys"], summary["header_keys"]) == (0, 0, 0)
    assert "has not started" in summary["source"]
    link = json.loads(run("panel", "link", "--data-dir", str(data), "--json").stdout)
    assert link["role"] == "operator" and "/login/register?token=" in link["url"]
    witness = run(
        "witness", "key", "--data-dir", str(tmp_path / "w"), "--name", "w.example", "--json"
    )
    assert json.loads(witness.stdout)["vkey"].startswith("w.example+")
    written = run(
        "transparency", "write", "--data-dir", str(data), "--date", "2026-01-01", "--json"
    )
    assert json.loads(written.stdout) == {"date": "2026-01-01", "files": []}
    manifest = tmp_path / "fleets.toml"
    manifest.write_text('version = 1\n[[fleet]]\nid = "edge"\ntenant_id = "acme"\n')
    checked = run("fleet", "check", str(manifest), "--json")
    assert json.loads(checked.stdout)["fleets"][0]["id"] == "edge", checked.stderr
    missing = run("transparency", "replay", str(tmp_path / "none.log"), "--any-name", "--json")
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["replayed"] is False


def test_the_data_directory_is_0700_and_its_files_0600(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "keys").mkdir(parents=True, mode=0o755)
    data.chmod(0o755)
    (data / "keys").chmod(0o755)
    old = data / "audit.jsonl"
    old.write_text("")
    old.chmod(0o644)  # left by an older version
    assert run("token", "create", "--data-dir", str(data), "--tenant", "acme").returncode == 0
    assert run("panel", "link", "--data-dir", str(data)).returncode == 0
    assert run("keys", "export", "--data-dir", str(data), cwd=tmp_path).returncode == 0
    modes = {
        path.relative_to(data).as_posix(): stat.S_IMODE(path.stat().st_mode)
        for path in [data, *data.rglob("*")]
    }
    # (the panel's state is in recordseal.sqlite3 since issue 16: no panel.sqlite3)
    assert {"recordseal.sqlite3", "keys/log-signing.ed25519"} <= set(modes)
    for name, mode in modes.items():
        wanted = 0o700 if (data / name).is_dir() else 0o600
        assert mode == wanted, f"{name} is {mode:o}"
    # The exports are public material.
    for name in ("recordseal-keys.json", "recordseal-trust.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644


def test_help_lists_every_family_on_one_line() -> None:
    done = run("--help")
    assert done.returncode == 0
    top = parser()
    [families] = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    listed = done.stdout.split("\n  COMMAND\n", 1)[1].split("\n\noptions:")[0].splitlines()
    assert [line.split()[0] for line in listed] == list(families.choices)
    for line in listed:  # a name, then its help, on the one line
        said = line.split(maxsplit=1)[1]
        assert said and line.startswith("    ") and len(line) <= 100, line
    assert {"stream", "records", "subject", "restore", "recover", "keys", "token"} <= set(
        families.choices
    )
