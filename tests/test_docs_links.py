"""Every relative link in README.md and docs/*.md leads to a file of the repository.

The README links its details out to docs/ (issue 26), so a moved or renamed document would
leave a newcomer at a dead link; GitHub shows those files, not the built site, so the site's own
link check does not see them.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# [text](target) and ![alt](target); the target ends at whitespace or the closing parenthesis
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)[^)]*\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def relative_links(text: str) -> list[str]:
    """The link targets outside code, without their #anchor; web and mail links are left out."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = [m.group(1) for m in LINK.finditer(prose)]
    return [t.split("#", 1)[0] for t in targets
            if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def test_links_are_found_outside_code_only():
    text = ("[a](docs/a.md) ![b](docs/b.png#x) [web](https://x.org/y) [top](#z)\n"
            "`[no](code.md)`\n```\n[no](fence.md)\n```\n[c](c.md \"title\")\n")
    assert relative_links(text) == ["docs/a.md", "docs/b.png", "c.md"]


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(doc):
    missing = [t for t in relative_links(doc.read_text(encoding="utf-8"))
               if not (doc.parent / t).exists()]
    assert missing == [], f"{doc.relative_to(REPO)} links to missing files: {missing}"


def test_the_readme_links_its_details_out():
    links = set(relative_links((REPO / "README.md").read_text(encoding="utf-8")))
    assert {"docs/report.png", "docs/architecture.md", "docs/performance.md",
            "docs/reliability.md"} <= links
