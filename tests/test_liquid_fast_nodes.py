"""The report page's shortcuts through python-liquid (analysis/write/liquid_pages.py:
_EscapedPathNode for `{{ a.b | escape }}`, _Block for the blocks of if, for and unless,
_PathTruth for `{% if a.b %}`) print what python-liquid's own nodes print: the same templates
rendered with and without them."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st
from liquid import Environment
from liquid.ast import BlockNode
from liquid.builtin.loaders.caching_file_system_loader import CachingFileSystemLoader

from analysis.write import liquid_pages

INCLUDES = {
    "cell.html": (
        "{%- assign c = include.cell %}<td>{% if c.missing %}none{% else %}"
        "{% for v in c.values %}<i>{{ v | escape }}</i>{% unless forloop.last %}, "
        "{% endunless %}{% if v == 'stop' %}{% break %}{% endif %}{% endfor %}{% endif %}"
        "{% if c.note %} {{ c.note | escape }}{% endif %}</td>"),
    "row.html": "{% for cell in include.row.cells %}{% include cell.html cell=cell %}"
                "{% endfor %}{{ include.row.label }}",
}
PAGE = (
    "<h1>{{ doc.title | escape }}</h1>{{ doc.missing.deeper | escape }}|{{ doc.flag | escape }}"
    "|{{ doc.count | escape }}|{{ doc.nothing | escape }}|{{ doc.title | escape | upcase }}"
    "|{{ doc['title'] | escape }}|{{ doc.items | escape }}|{{ doc.title }}\n"
    "{%- for row in doc.rows %}<tr>{% include row.html row=row %}</tr>{% if forloop.first %}"
    "{% continue %}{% endif %}{{ forloop.index }}{% endfor %}"
    "{% if doc.flag %}   {% endif %}{% unless doc.flag %}not{% else %}{{ c.note }}{% endunless %}"
    "{% if doc.count > 2 %}{% assign shown = doc.count %}{% elsif doc.flag %}x{% endif %}"
    "{{ shown | escape }}{% case doc.count %}{% when 3 %}three{% else %}other{% endcase %}")


def site(tmp_path, fast: bool, monkeypatch) -> Environment:
    includes = tmp_path / ("fast" if fast else "plain") / "_includes"
    includes.mkdir(parents=True)
    for name, text in INCLUDES.items():
        (includes / name).write_text(text, encoding="utf-8")
    if fast:
        return liquid_pages.environment(str(includes.parent))
    env = Environment(loader=CachingFileSystemLoader(includes))
    env.add_tag(liquid_pages.JekyllIncludeTag)
    env.add_filter("escape", liquid_pages._escape)
    return env


def render_both(tmp_path, monkeypatch, doc: dict) -> tuple[str, str]:
    fast_env = site(tmp_path, True, monkeypatch)
    template = fast_env.from_string(PAGE)
    liquid_pages.fast_blocks(template)
    fast = template.render(doc=doc)
    plain_env = site(tmp_path, False, monkeypatch)
    with monkeypatch.context() as m:     # python-liquid's own blocks in the includes too
        m.setattr(liquid_pages, "fast_blocks", lambda template: None)
        plain = plain_env.from_string(PAGE).render(doc=doc)
    return fast, plain


def test_the_page_templates_use_the_shortcuts(tmp_path, monkeypatch):
    env = site(tmp_path, True, monkeypatch)
    template = env.from_string("{% if x %}<b>{{ x.y | escape }}</b>{{ x.y }}{% endif %}")
    liquid_pages.fast_blocks(template)
    consequence = template.nodes[0].consequence
    assert type(consequence) is liquid_pages._Block and isinstance(consequence, BlockNode)
    assert [type(n).__name__ for n in consequence.nodes] == [
        "ContentNode", "_EscapedPathNode", "ContentNode", "OutputNode"]
    assert type(template.nodes[0].condition) is liquid_pages._PathTruth


def test_the_page_prints_what_python_liquid_prints(tmp_path, monkeypatch):
    doc = {"title": "<a & \"b\" 'c'>", "flag": True, "count": 3, "nothing": None,
           "items": ["x", "<y>"],
           "rows": [{"label": "r1", "cells": [{"values": ["1", "<2>", "stop", "4"], "note": "n&"},
                                              {"missing": True}]},
                    {"label": "r2", "cells": [{"values": [], "note": None}]}]}
    fast, plain = render_both(tmp_path, monkeypatch, doc)
    assert fast == plain
    assert "&lt;a &amp; &quot;b&quot; &#39;c&#39;&gt;" in fast and "<i>&lt;2&gt;</i>" in fast


texts = st.one_of(st.none(), st.booleans(), st.integers(-5, 5),
                  st.text(alphabet="ab<>&\"' \n{}", max_size=6))


@settings(max_examples=30, deadline=None)
@given(title=texts, flag=texts, count=st.one_of(st.none(), st.integers(-5, 5)), note=texts,
       values=st.lists(st.text(alphabet="ab<&stop", max_size=5), max_size=4))
def test_any_values_print_alike(tmp_path_factory, title, flag, count, note, values):
    tmp_path = tmp_path_factory.mktemp("fast")
    doc = {"title": title, "flag": flag, "count": count,
           "rows": [{"label": title, "cells": [{"values": values, "note": note}]}]}
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, plain = render_both(tmp_path, monkeypatch, doc)
    assert fast == plain
