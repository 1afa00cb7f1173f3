"""Report pages rendered by Python, with the site's own Liquid templates (issue 15).

Jekyll parses all of `_data/` for every page of every build; at 1,000 runs that is most of a
build. So each run's report (and scenario) page is rendered here, once, when the run changes:
the same `_layouts/report.html` (scenario.html, jmh-report.html) and `_includes/*.html` Jekyll
would use, run by python-liquid with Jekyll's include tag and the few Jekyll filters they use.
The page written to `_reports/` is front matter plus that HTML; `_data/runs/<id>.yml` is then
needed only by runs a post names (png_use.runs_in_posts). tests/test_liquid_pages.py renders
the same runs both ways and compares the HTML with Jekyll's.

Two things differ from Jekyll on purpose, both invisible in the built page:
- absolute_url gives the same root-relative URL as relative_url (`baseurl` from _config.yml +
  the path, percent-encoded as Jekyll's Addressable does): a report page is read only on the
  site (the feeds carry posts' content, never a report's), and root-relative links work on the
  published site, under `jekyll serve` and whatever `make site URL=...` says. So the page holds
  no Liquid at all: 1,000 reports cost Jekyll seconds, not the ~30 s its URL filters took;
- every `{` and `}` of the HTML is written as `&#123;` / `&#125;`, so no manifest string can
  become Liquid where Jekyll still runs Liquid on the page (3.10, GitHub Pages: 4.x skips it,
  `render_with_liquid: false`); the templates print no <script> or <style>, where an entity
  would not be decoded.
"""
from __future__ import annotations

import functools
import re
import unicodedata
import weakref
from pathlib import Path
from typing import Any
from urllib.parse import quote

from liquid import Environment
from liquid.ast import BlockNode, Node
from liquid.builtin.content import ContentNode
from liquid.builtin.expressions import BooleanExpression, FilteredExpression
from liquid.builtin.expressions.logical import is_truthy
from liquid.builtin.expressions import Path as LiquidPath
from liquid.builtin.expressions._tokenize import tokenize
from liquid.builtin.loaders.caching_file_system_loader import CachingFileSystemLoader
from liquid.builtin.output import Output, OutputNode
from liquid.exceptions import LiquidError, LiquidSyntaxError
from liquid.filter import with_context
from liquid.stream import TokenStream
from liquid.tag import Tag
from liquid.token import TOKEN_EXPRESSION, TOKEN_TAG

from analysis.errors import BuildError
from analysis.write.site_templates import baseurl, layout_file, template_root

# Jekyll's include parameters: name=value, value a quoted string or a variable path
# (Jekyll::Tags::IncludeTag's VALID_SYNTAX / params matcher).
PARAM = re.compile(r"""([\w-]+)\s*=\s*(?:"([^"\\]*(?:\\.[^"\\]*)*)"|'([^'\\]*(?:\\.[^'\\]*)*)'|([\w.\[\]-]+))""")


class _JekyllIncludeNode(Node):
    __slots__ = ("file", "params")

    def __init__(self, token, file: str, params: list[tuple[str, Any]]):
        super().__init__(token)
        self.file = file
        self.params = params
        self.blank = False

    def render_to_output(self, context, buffer) -> int:
        template = context.env.get_template(self.file, context=context, tag="include")
        if template not in _FAST_BLOCKS:      # (parsed again when the file changes)
            fast_blocks(template)
        values = {name: value.evaluate(context) if isinstance(value, LiquidPath) else value
                  for name, value in self.params}
        # Jekyll: context.stack { context["include"] = params; partial.render }. Assigns inside
        # still reach the page's scope, as in Liquid.
        with context.extend({"include": values}, template=template):
            template.render_with_context(context, buffer, partial=True)
        return True


class JekyllIncludeTag(Tag):
    """`{% include file.html a="text" b=page.var %}`, as Jekyll reads it."""
    name = "include"
    block = False

    def parse(self, stream: TokenStream) -> Node:
        token = stream.eat(TOKEN_TAG)
        if stream.current.kind != TOKEN_EXPRESSION:
            raise LiquidSyntaxError("include without a file name", token=token)
        markup = stream.current.value.strip()
        expr_token = stream.current   # (left current: the parser moves past it)
        file, _, rest = markup.partition(" ")
        params: list[tuple[str, Any]] = []
        rest = rest.strip()
        while rest:
            match = PARAM.match(rest)
            if not match:
                raise LiquidSyntaxError(f"include parameters not understood: {rest!r}",
                                        token=token)
            name, dq, sq, var = match.groups()
            if dq is not None:
                params.append((name, dq.replace('\\"', '"')))
            elif sq is not None:
                params.append((name, sq.replace("\\'", "'")))
            else:
                params.append((name, LiquidPath.parse(
                    self.env, TokenStream(tokenize(var, parent_token=expr_token)))))
            rest = rest[match.end():].lstrip()
        return _JekyllIncludeNode(token, file, params)


class _Block(BlockNode):
    """A block of an if, for or unless, rendered as BlockNode does, with two steps fewer per
    node (a report page renders ~8,000 nodes in ~1,400 blocks, half of them static text):
    a ContentNode's text is written here, and each node's render_to_output is called without
    Node.render's check for disabled tags, made once for the block (this module's tags disable
    none; with some disabled, or a blank block to suppress, BlockNode renders it)."""
    __slots__ = ()

    def render_to_output(self, context, buffer) -> int:
        if context.disabled_tags or (context.env.suppress_blank_control_flow_blocks
                                     and self.blank):
            return super().render_to_output(context, buffer)
        write = buffer.write
        count = 0
        for node in self.nodes:
            if type(node) is ContentNode:
                count += write(node.text)
            else:
                count += node.render_to_output(context, buffer)
        return count


class _PathTruth(BooleanExpression):
    """`{% if a.b %}` (unless, elsif), ~1,000 conditions a report page: the path's value
    looked up as Path.evaluate does, without copying its names into a new list each time."""
    __slots__ = ()

    def evaluate(self, context) -> bool:
        return is_truthy(context.get(self.expression.path, token=self.expression.token))


def _plain_path(expression) -> bool:
    return type(expression) is LiquidPath and all(type(s) is str for s in expression.path)


# templates whose blocks are _Block already (the loader's cache keeps each until its file changes)
_FAST_BLOCKS: weakref.WeakSet = weakref.WeakSet()


def fast_blocks(template) -> None:
    """Every BlockNode of a parsed template made a _Block, and every condition that is a path
    of names a _PathTruth (the same slots: their classes swapped)."""
    todo = list(template.nodes)
    while todo:
        node = todo.pop()
        if type(node) is BlockNode:
            node.__class__ = _Block
        for name in ("condition", "expression"):    # (if's and unless's, their alternatives')
            test = getattr(node, name, None)
            if type(test) is BooleanExpression and _plain_path(test.expression):
                test.__class__ = _PathTruth
        todo.extend(node.children(None, include_partials=False))
    _FAST_BLOCKS.add(template)


class _EscapedPathNode(OutputNode):
    """`{{ a.b.c | escape }}`, most of a report page's ~2,000 outputs: the path looked up as
    Path.evaluate does (an undefined one is the environment's Undefined, which prints as ""),
    then _escape, without the filtered expression's generic steps (the filter looked up by
    name, its arguments gathered, the result stringified: _escape returns a str)."""
    __slots__ = ("segments",)

    def __init__(self, token, expression: FilteredExpression, segments: list[str]):
        super().__init__(token, expression)
        self.segments = segments

    def render_to_output(self, context, buffer) -> int:
        return buffer.write(_escape(context.get(self.segments, token=self.expression.token)))


class _Output(Output):
    """The output statement, with _EscapedPathNode for a path of names piped through our
    escape filter alone; any other output is python-liquid's node."""

    def parse(self, stream: TokenStream) -> Node:
        node = super().parse(stream)
        expr = node.expression
        if (type(expr) is FilteredExpression and _plain_path(expr.left)
                and expr.filters and len(expr.filters) == 1
                and expr.filters[0].name == "escape" and not expr.filters[0].args
                and self.env.filters.get("escape") is _escape):
            return _EscapedPathNode(node.token, expr, list(expr.left.path))
        return node


def _escape(value: Any) -> str:
    """Liquid 4's escape (Ruby's CGI.escapeHTML): nil prints nothing, `"` is &quot;."""
    if value is None:
        return ""
    return (_to_s(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def _to_s(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        raise BuildError(f"a template printed the float {value!r}: Ruby and Python print floats "
                         "differently; give the view block a text field instead")
    return str(value)


def _url_path(value: Any) -> str:
    """The path with a leading slash and percent-encoded as Addressable's normalisation
    would (the characters of our ids and paths pass as they are)."""
    text = _to_s(value)
    if not text.startswith("/"):
        text = "/" + text
    return quote(text, safe="/:@!$&'()*+,;=-._~%#?")


def _relative_url(value: Any, *, context) -> str | None:
    """Jekyll's relative_url: `baseurl` (no trailing slash) + the path; absolute URLs as they are."""
    if value is None:
        return None
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", _to_s(value)):
        return _to_s(value)
    return context.resolve("baseurl_") + _url_path(value)


def _slugify(value: Any) -> str:
    """Jekyll's slugify, default mode: every run of characters other than letters, marks and
    decimal digits becomes one hyphen, none at either end, then lower case."""
    if value is None:
        return ""
    kept = "".join(c if unicodedata.category(c)[0] in "LM" or unicodedata.category(c) == "Nd"
                   else "\0" for c in _to_s(value))
    return re.sub("\0+", "-", kept).strip("-").lower()


@functools.lru_cache(maxsize=4)
def environment(site_root: str) -> Environment:
    # A report page includes ~47 templates: uncached, each was read and parsed again for every
    # page of every run, three quarters of a page's cost. auto_reload: an include edited while
    # the process lives (a test session) is read again (one stat per include).
    env = Environment(loader=CachingFileSystemLoader(Path(site_root) / "_includes",
                                                     auto_reload=True))
    env.add_tag(JekyllIncludeTag)
    env.add_tag(_Output)
    env.add_filter("escape", _escape)
    env.add_filter("relative_url", with_context(_relative_url))
    env.add_filter("absolute_url", with_context(_relative_url))   # root-relative (see above)
    env.add_filter("slugify", _slugify)
    return env


def _layout_body(site_root: str, layout: str) -> str:
    text = (Path(site_root) / "_layouts" / layout_file(layout)).read_text(encoding="utf-8")
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        text = text[end + 5:]
    return text


@functools.lru_cache(maxsize=8)
def _layout_template(site_root: str, layout: str):
    template = environment(site_root).from_string(_layout_body(site_root, layout))
    fast_blocks(template)
    return template


def render_page(site_root: Path, layout: str, page: dict[str, Any], run_id: str,
                doc: dict[str, Any]) -> str:
    """The HTML the layout (report, scenario or jmh-report) gives for this page and run,
    ready to be a page's content in Jekyll: root-relative URLs, every brace an entity."""
    root = template_root(site_root)
    try:
        template = _layout_template(str(root), layout)
        html = template.render(page=page, site={"data": {"runs": {run_id: doc}}}, content="",
                               baseurl_=baseurl(root))
    except LiquidError as exc:   # a broken include or layout: name it, as Jekyll would
        raise BuildError(f"the report page could not be rendered: {str(exc).splitlines()[0]}",
                         path=root / "_layouts" / layout_file(layout),
                         hint="fix the template (the error names the include and line)") from None
    return html.replace("{", "&#123;").replace("}", "&#125;")
