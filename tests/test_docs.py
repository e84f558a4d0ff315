"""The documentation keeps up with the code: the command reference, the public API, and a
wheel that carries the shipped models."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import ragctl

ROOT = Path(__file__).resolve().parents[1]


def _reference() -> object:
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  ROOT / "docs" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_command_is_in_the_cli_reference() -> None:
    ref = _reference()
    from ragctl.app.cli import cli

    text = (ROOT / "docs" / "cli.md").read_text()
    names = [name for name, _ in ref.commands(cli)]  # type: ignore[attr-defined]
    assert {"ragctl ask", "ragctl train filter", "ragctl models use"} <= set(names)
    missing = [n for n in names if f"## `{n}`" not in text]
    assert not missing, f"undocumented commands {missing}: run make docs"
    assert text == ref.render(), "docs/cli.md is out of date: run make docs"  # type: ignore[attr-defined]


def test_the_public_api_resolves_and_is_documented() -> None:
    api = (ROOT / "docs" / "api.md").read_text()
    for name in ragctl.__all__:
        assert getattr(ragctl, name) is not None
        if name != "__version__":
            assert f"`{name}`" in api, f"{name} is not in docs/api.md"
    with pytest.raises(AttributeError):
        _ = ragctl.no_such_name  # type: ignore[attr-defined]


@pytest.mark.real
def test_a_wheel_carries_the_shipped_models_and_finds_them_outside_the_checkout(
        tmp_path: Path) -> None:
    if not (ROOT / "models" / "minilm-re" / "manifest.json").exists():
        pytest.skip("the shipped models are not in this checkout")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp_path / "dist"), str(ROOT)],
                   check=True, capture_output=True)
    wheel = next((tmp_path / "dist").glob("ragctl-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert {"ragctl/shipped/minilm-re/model.bin", "ragctl/shipped/minilm-filter/manifest.json",
            "ragctl/py.typed"} <= names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(target), str(wheel)], check=True, capture_output=True)
    out = subprocess.run(
        [sys.executable, "-m", "ragctl", "models", "--json"], cwd=tmp_path, check=True,
        capture_output=True, text=True,
        env={"PYTHONPATH": str(target), "RAGCTL_HOME": str(tmp_path / "home"),
             "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    rows = {(r["kind"], r["name"]): r for r in json.loads(out.stdout)}
    assert rows[("relevance", "minilm-re")]["location"].startswith(str(target))
    assert rows[("relevance", "minilm-re")]["default"]
