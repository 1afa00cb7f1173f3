"""_data/report_pages.yml (scripts/report_index.py) holds what the list pages print of the
report pages, as Jekyll holds it, and _data/report_runs.json each run's pages a post links: the runs index, /tags/, the tag feeds and the posts' run links
read it instead of site.reports, so that a local build can leave unchanged reports unread.
Jekyll itself is the reference: one build prints both lists, field by field, in order."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.sitebuild import REPO, tag_feeds

pytestmark = pytest.mark.site

CONFIG = """\
timezone: Etc/UTC
collections:
  reports:
    output: true
    permalink: /reports/:name/
"""
FIELDS = ("url", "id", "title", "run", "scenario", "description", "systems_text", "loads_text",
          "author", "collection")
ROW = ("{{ d.date | date_to_xmlschema }}|{{ d.date | date: '%s' }}|{{ d.tags | jsonify }}|"
       + "|".join(f"{{{{ d.{f} | jsonify }}}}" for f in FIELDS) + "\n")
RUN_IDS = '{% assign ids = "two_generators,many,nothing" | split: "," %}'
TAGS = '{% assign tags = "jvm,http,spaced,b & <c>,single,2026,true,none" | split: "," %}'
# (tag, page) pairs of those tags: jvm 4, one each for the others but `none`; after the change
# below: late.md's jvm and `b & <c>` and early.html's `single` gone
TAGGED, TAGGED_AFTER = 10, 7
LISTS = ("---\n---\n{% for d in site.reports %}" + ROW + "{% endfor %}"
         # a post's run links (_includes/post-runs.html): before, then from report_runs.json
         + RUN_IDS + "{% for id in ids %}{% for d in site.reports %}{% if d.run == id and "
         "d.scenario == nil %}{{ id }} {{ d.url }} {{ d.title }}\n{% endif %}{% endfor %}"
         "{% endfor %}"
         # a tag's reports (tags.html): before by `where`, then from report_tags.json
         + TAGS + "{% for t in tags %}{% assign w = site.reports | where: 'tags', t %}"
         "{% for d in w %}{{ t }} {{ d.url }}\n{% endfor %}{% endfor %}"
         "=====\n{% for d in site.data.report_pages %}" + ROW + "{% endfor %}"
         + RUN_IDS + "{% for id in ids %}{% for d in site.data.report_runs[id] %}{{ id }} "
         "{{ d.url }} {{ d.title }}\n{% endfor %}{% endfor %}"
         + TAGS + "{% for t in tags %}{% assign k = t | append: '' %}"
         "{% for at in site.data.report_tags[k] %}{% assign d = site.data.report_pages[at] %}"
         "{{ t }} {{ d.url }}\n{% endfor %}{% endfor %}")
PAGES = {
    # the collection's permalink; a run id with `_` (slugified in the URL, not in the id)
    "two_generators.html": "title: Two generators\ndate: '2026-11-24'\ntags: [jvm, http]\n"
                           "run: two_generators\nsystems_text: 'a, b'\nloads_text: x\n",
    # a scenario page: its own permalink; no tags
    "many/sleep.html": "title: Sleep\ndate: '2026-11-24'\nrun: many\nscenario: sleep\n"
                       "permalink: /reports/many/sleep/\n",
    "many.html": "title: 'Many: \"quoted\" & <b>'\ndate: '2026-11-24'\nrun: many\n"
                 "description: \"line\\u2028break \\u00e9\"\ntags: spaced   tags jvm\n",
    # a date with a time and an offset, an unquoted date, the singular `tag:`, an author
    "late.md": "title: Late\ndate: 2026-11-25 23:30:00 -02:00\ntags: [b & <c>, jvm, jvm]\n",
    "early.html": "title: Early\ndate: 2026-01-02\ntag: single\nauthor: Ann O'Neil\n",
    # tags YAML reads as a number and a boolean: `where` compares them as text
    "slugged.html": "title: Slugged\ndate: '2026-11-24'\nslug: other-name\n"
                    "tags: [2026, true, jvm]\n",
}
NOT_LISTED = {
    "hidden/_draft.html": "---\ntitle: x\ndate: '2026-01-01'\n---\n",
    ".dot.html": "---\ntitle: x\ndate: '2026-01-01'\n---\n",
    "backup.html~": "---\ntitle: x\ndate: '2026-01-01'\n---\n",
    "unpublished.html": "---\ntitle: x\ndate: '2026-01-01'\npublished: false\n---\n",
    "static.txt": "no front matter: a static file of the collection\n",
}


def lists(src: Path, tmp_path: Path) -> tuple[list[str], list[str]]:
    result = subprocess.run(["bash", str(REPO / "scripts" / "jekyll.sh"), "build", "--source",
                             str(src), "--destination", str(tmp_path / "site")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    jekyll, index = (tmp_path / "site" / "lists.html").read_text().split("=====\n")
    return jekyll.split("\n")[:-1], index.split("\n")[:-1]   # (U+2028 is no line end here)


def test_the_index_lists_the_reports_as_jekyll_reads_them(tmp_path):
    src = tmp_path / "src"
    (src / "_reports").mkdir(parents=True)
    (src / "_config.yml").write_text(CONFIG)
    (src / "lists.html").write_text(LISTS)
    for name, front in PAGES.items():
        (src / "_reports" / name).parent.mkdir(parents=True, exist_ok=True)
        (src / "_reports" / name).write_text(f"---\n{front}---\n<p>{name}</p>\n")
    for name, text in NOT_LISTED.items():
        (src / "_reports" / name).parent.mkdir(parents=True, exist_ok=True)
        (src / "_reports" / name).write_text(text)
    assert tag_feeds().write(src)[-3:] == ["wrote _data/report_pages.yml",
                                           "wrote _data/report_runs.json",
                                           "wrote _data/report_tags.json"]
    jekyll, index = lists(src, tmp_path)
    # the runs two_generators and many link a page each
    assert len(jekyll) == len(PAGES) + 2 + TAGGED
    assert index == jekyll
    # a page changed, one removed, one added: the index follows; unchanged, it is not written
    (src / "_reports" / "early.html").write_text("---\ntitle: Earlier\ndate: 2025-12-31\n---\n")
    (src / "_reports" / "late.md").unlink()
    (src / "_reports" / "new.html").write_text("---\ntitle: New\ndate: '2026-11-24'\n---\n")
    tag_feeds().write(src)
    jekyll, index = lists(src, tmp_path)
    assert index == jekyll and len(index) == len(PAGES) + 2 + TAGGED_AFTER
    assert tag_feeds().write(src) == []


def test_a_url_the_index_cannot_make_is_refused_with_the_page_named(tmp_path):
    (tmp_path / "_reports").mkdir()
    (tmp_path / "_config.yml").write_text(CONFIG)
    (tmp_path / "_reports" / "odd.html").write_text(
        "---\ntitle: x\ndate: '2026-01-01'\npermalink: /:year/odd/\n---\n")
    with pytest.raises(SystemExit, match=r"_reports/odd.html: its URL needs a permalink"):
        tag_feeds().write(tmp_path)


def test_a_tag_the_index_cannot_key_as_ruby_would_is_refused(tmp_path):
    (tmp_path / "_reports").mkdir()
    (tmp_path / "_config.yml").write_text(CONFIG)
    (tmp_path / "_reports" / "odd.html").write_text(
        "---\ntitle: x\ndate: '2026-01-01'\ntags: [1.5]\n---\n")
    with pytest.raises(SystemExit, match=r"_reports/odd.html: tag 1.5 is not text"):
        tag_feeds().write(tmp_path)
