"""Where Jekyll's time goes with N run reports (issue 15's plan for per-run detail): one report
page of a built corpus copied N times, laid out four ways, and only Jekyll run on each:

A  today: _data/runs/<id>.yml (the run's whole document) + a front-matter-only page that
   _layouts/report.html renders through the includes;
B  the same _data/, pages with the default layout and no body: the cost of parsing _data/ alone;
D  no per-run _data/, the document in the page's front matter (`report:`), no body;
C  no per-run _data/, the page = front matter + the report body as HTML (what Python/Jinja2
   would write), wrapped by the default layout.

    .venv/bin/python bench/perf/site_scale_jekyll.py [--runs 300] [--base DIR] [A B C D]

The base (default bench/perf/out/scale-base) is built by `site_scale.py --runs 3 --keep` when
missing. The pages link charts that are not copied; no analysis runs.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = "scale-0001"


def layout(base: Path, dest: Path, variant: str, runs: int) -> None:
    html = (base / "_site" / "reports" / SAMPLE / "index.html").read_text()
    body = html[html.index('<article class="report">'):html.rindex("</article>") + 10]
    front = (base / "_reports" / f"{SAMPLE}.md").read_text()
    data = (base / "_data" / "runs" / f"{SAMPLE}.yml").read_text()
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(base, dest, ignore=lambda src, names: [
        n for n in names if n == "charts" or (Path(src) == base and n in (
            "_site", ".jekyll-cache", "runs", ".cache"))])
    for i in range(runs):
        run_id = f"x-{i:04d}"
        page = front.replace(SAMPLE, run_id)
        suffix = ".md"
        if variant in "AB":
            (dest / "_data" / "runs" / f"{run_id}.yml").write_text(data.replace(SAMPLE, run_id))
        if variant != "A":
            page = page.replace("layout: report", "layout: default")
        if variant == "D":
            doc = "".join(f"  {line}\n" for line in data.replace(SAMPLE, run_id).splitlines())
            page = page.replace("generated_by: loadcurve\n",
                                f"generated_by: loadcurve\nreport:\n{doc}")
        if variant == "C":   # HTML: no Markdown conversion
            page += body.replace(SAMPLE, run_id) + "\n"
            suffix = ".html"
        (dest / "_reports" / f"{run_id}{suffix}").write_text(page)


def jekyll(dest: Path) -> tuple[float, float, int]:
    started = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-v", "bash", "scripts/jekyll.sh", "build"], cwd=dest,
                         capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if out.returncode:
        raise SystemExit(f"error: jekyll failed in {dest}:\n{out.stderr[-1500:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1))
    return seconds, rss / 1024, len(list((dest / "_site" / "reports").glob("x-*/index.html")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="report pages (default 300)")
    parser.add_argument("--base", type=Path, default=HERE / "out" / "scale-base")
    parser.add_argument("variants", nargs="*", default=["A", "B", "D", "C"])
    args = parser.parse_args()
    base = args.base.resolve()
    if not (base / "_site" / "reports" / SAMPLE / "index.html").is_file():
        subprocess.run([sys.executable, str(HERE / "site_scale.py"), "--runs", "3",
                        "--keep", str(base)], check=True)
    for variant in args.variants:
        dest = base.parent / f"{base.name}-{variant}"
        layout(base, dest, variant, args.runs)
        seconds, rss_mb, pages = jekyll(dest)
        data_mb = sum(p.stat().st_size for p in (dest / "_data").rglob("*") if p.is_file()) / 1e6
        print(f"{variant} {args.runs} reports: jekyll {seconds:6.1f} s, peak RSS {rss_mb:5.0f} MB, "
              f"_data/ {data_mb:6.1f} MB, {pages} pages   "
              f"[load {' '.join('%.2f' % x for x in os.getloadavg())}]", flush=True)
        shutil.rmtree(dest, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
