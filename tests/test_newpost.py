"""`python -m analysis new-post RUN-ID`: a draft with the methodology filled in, includes for the
numbers, never overwriting, and manifest strings that cannot run as Liquid or HTML."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "runs" / "oracle-demo"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))}


def new_post(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", "new-post", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, env=ENV)


def site_with_fixture(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "runs" / "oracle-demo")
    return tmp_path


def test_draft_has_methodology_includes_and_todo(tmp_path):
    site = site_with_fixture(tmp_path)
    out = new_post(site, "oracle-demo")
    assert out.returncode == 0, out.stderr
    draft = site / "_drafts" / "2026-11-21-oracle-demo.md"
    assert out.stdout.strip() == str(Path("_drafts") / draft.name)
    text = draft.read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["title"].startswith("Oracle fixture") and front["run"] == "oracle-demo"
    assert front["description"] and front["tags"] == ["fixture", "synthetic"]
    assert front["image"] == "/assets/charts/oracle-demo/load-curve.png"
    body = text.split("---\n", 2)[2]
    for include in ('{%- assign run_data = site.data.runs["oracle-demo"] -%}',
                    '{% include load-curve-table.html block=run_data %}',
                    '{% include methodology.html block=run_data %}',
                    '{% include ceiling.html block=run_data %}',
                    '{% include percentile-plot.html block=run_data load="r100" %}',
                    '{% include percentile-plot.html block=run_data load="r500" %}'):
        assert include in body
    # methodology from the manifest
    assert "open-loop generator" in body and "15 s" in body and "5 ms" in body
    assert "4 clients × 25/s" in body and "Platform pool (2 threads)" in body
    assert "Cores: 2" in body
    assert body.count("TODO") >= 4
    assert "<<" not in body and "<%" not in body  # no Jinja2 left over


def test_never_overwrites_a_draft(tmp_path):
    site = site_with_fixture(tmp_path)
    assert new_post(site, "oracle-demo").returncode == 0
    draft = site / "_drafts" / "2026-11-21-oracle-demo.md"
    draft.write_text("the author's words\n")
    out = new_post(site, "oracle-demo")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"error: {Path('_drafts') / draft.name}: a draft already exists; not overwriting it "
        f"(edit it, or move it away to draft again)"]
    assert draft.read_text() == "the author's words\n"
    assert [p.name for p in draft.parent.iterdir()] == [draft.name]  # no temp file left


def test_bad_run_ids_are_refused(tmp_path):
    for run_id, message in (("../etc", "is not a run id"), ("nope", "no such run folder")):
        out = new_post(tmp_path, run_id)
        assert out.returncode == 1 and out.stderr.startswith("error: ") and message in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1


def test_manifest_strings_cannot_run_as_liquid_or_html(tmp_path):
    site = site_with_fixture(tmp_path)
    manifest = site / "runs" / "oracle-demo" / "run.yml"
    data = yaml.safe_load(manifest.read_text())
    evil = "<script>alert(1)</script> {{ site.github }} {% include x.html %} {% endraw %}"
    data["title"] = evil
    data["systems"][0]["label"] = evil
    data["systems"][0]["description"] = evil
    data["environment"]["cpu"] = evil
    manifest.write_text(yaml.safe_dump(data, allow_unicode=True))
    assert new_post(site, "oracle-demo").returncode == 0
    text = next((site / "_drafts").iterdir()).read_text()
    head, body = text.split("---\n")[1], text.split("---\n", 2)[2]
    assert yaml.safe_load(head)["title"] == evil           # front matter: a YAML string
    assert "<script>" not in body and "{{ site" not in body and "{% include x" not in body
    assert "{% endraw" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    # the only Liquid tags in the body are the ones the template put there
    tags = re.findall(r"{%.*?%}", body)
    assert tags and all(t.startswith(("{% include ", "{%- assign run_data = site.data.runs[")) for t in tags), tags
    assert json.dumps(evil)  # the manifest value itself is untouched data
