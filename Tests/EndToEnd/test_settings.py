"""`hearth settings`, as docs/configuration.md shows it: the reference it prints is the docs' table,
and `--check` tells a configuration serve would run on from one it would refuse, naming the
setting and never a secret's value."""

import json
import os
import pathlib
import subprocess

from conftest import BINARY

ROOT = pathlib.Path(__file__).resolve().parents[2]


def settings(*arguments, env=None):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
    return subprocess.run([BINARY, "settings", *arguments], capture_output=True, text=True, timeout=60,
                          env={**clean, **(env or {})})


def test_the_reference_is_the_docs_table():
    printed = settings()
    assert printed.returncode == 0, printed.stderr
    docs = (ROOT / "docs/configuration.md").read_text()
    inside = docs.split("<!-- settings:begin -->\n", 1)[1].split("<!-- settings:end -->", 1)[0]
    assert printed.stdout == inside
    assert "| `cleanupBatchSize` | `HEARTH_CLEANUP_BATCH_SIZE` |" in printed.stdout


def test_check_accepts_the_docs_production_example_and_names_what_it_refuses(tmp_path):
    token_file = tmp_path / "admin-token"
    token_file.write_text("Zq8Rt2Lw5Vn9Xk3Pm7Hs1Jd4Fb6Gc0Ya\n")
    # The minimal production file of docs/configuration.md, with the token file here.
    docs = (ROOT / "docs/configuration.md").read_text()
    example = json.loads(docs.split("```json\n", 1)[1].split("```", 1)[0])
    example["adminTokens"][0]["tokenFile"] = str(token_file)
    config = tmp_path / "hearth.json"
    config.write_text(json.dumps(example))
    checked = settings("--check", "--config", str(config))
    assert checked.returncode == 0, checked.stderr
    assert "configuration valid: production profile on 127.0.0.1:9099" in checked.stdout

    example["adminTokens"] = ["owner"]
    config.write_text(json.dumps(example))
    weak = settings("--check", "--config", str(config))
    assert weak.returncode == 1
    assert "an admin token is a published default" in weak.stderr and "owner" not in weak.stderr

    # The environment is read as serve reads it, over the file.
    config.write_text(json.dumps({"cleanupBatchSize": 10}))
    over = settings("--check", env={"HEARTH_CONFIG": str(config), "HEARTH_LOG_LEVEL": "loud"})
    assert over.returncode == 1 and "invalid logLevel (HEARTH_LOG_LEVEL)" in over.stderr
