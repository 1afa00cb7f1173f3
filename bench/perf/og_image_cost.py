"""What a run's og:image PNG costs with matplotlib's own Agg canvas and with the remembered text
bitmaps (issue 36: analysis/write/charts/png_text.py), in one process, turn by turn.

    .venv/bin/python bench/perf/og_image_cost.py [--run runs/pool-vs-virtual] [--repeat 40]
        [--reverse] [--encoders]

The run is analysed once (hard links in a temporary folder); its PNG chart jobs are then drawn
(figure cleared, the chart drawn, the PNG encoded: what render_job does for a PNG) on two
figures, one per canvas, alternating (`--reverse`: the text-bitmap canvas first), so load from
elsewhere hits both alike. `--encoders`: the text-bitmap canvas both times, the PNG encoded with
the compiled row filter (png_encode) and with Pillow's save (issue 36, png36h). Both must give
the same bytes. Prints the CPU milliseconds a run's
PNGs take (min, first quartile, median) with the 1-minute load average before and after.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("MPLBACKEND", "Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from analysis.pipeline import stages  # noqa: E402
from analysis.write.charts import png_encode, png_text, render, svgcharts  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=REPO / "runs" / "pool-vs-virtual")
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--reverse", action="store_true", help="the second variant first")
    ap.add_argument("--encoders", action="store_true",
                    help="compare the PNG encoders (compiled row filter, Pillow), not the canvases")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        shutil.copytree(args.run.resolve(), runs / args.run.name, copy_function=os.link)
        result = stages.analyse_task(str(runs / args.run.name), str(runs), tmp, False)
    if not result["ok"]:
        print(f"error: {result['error']}", file=sys.stderr)
        return 1
    plots = [svgcharts.BUILDERS[j["kind"]](j["data"]) for j in result["chart_jobs"]
             if j["png"] and j["kind"] in svgcharts.BUILDERS]
    compiled = png_encode.get
    if args.encoders:
        if compiled() is None:
            print(f"error: {png_encode.describe()}", file=sys.stderr)
            return 1
        canvases = {"compiled row filter": png_text.TextBitmapCanvas,
                    "Pillow's save": png_text.TextBitmapCanvas}
    else:
        canvases = {"matplotlib's canvas": FigureCanvasAgg,
                    "text bitmaps": png_text.TextBitmapCanvas}
    encoder = {name: compiled for name in canvases}
    if args.encoders:
        encoder["Pillow's save"] = lambda: None     # (what render does without the helper)
    figures = {}
    for name, canvas in canvases.items():
        render._REUSED.clear()
        render._reused_figure()
        canvas(render._REUSED[0][0])
        figures[name] = render._REUSED[0]
    order = list(canvases)[::-1] if args.reverse else list(canvases)

    def draw(name: str) -> tuple[float, list[bytes]]:
        render._REUSED[:] = [figures[name]]
        png_encode.get = encoder[name]
        start = time.process_time()
        out = []
        for plot in plots:
            fig, ax = render._reused_figure()
            render._draw_plot(fig, ax, plot)
            out.append(render._png_bytes(fig))
        return time.process_time() - start, out

    first = {name: draw(name)[1] for name in order}    # (a worker's first draw: set-up)
    if len(set(map(tuple, first.values()))) != 1:
        print("error: the two variants gave different PNGs", file=sys.stderr)
        return 1
    before = os.getloadavg()[0]
    times: dict[str, list[float]] = {name: [] for name in order}
    for _ in range(args.repeat):
        for name in order:
            times[name].append(draw(name)[0])
    after = os.getloadavg()[0]
    print(f"{args.run.name}: {len(plots)} PNG(s) a run, CPU ms, {args.repeat} turns "
          f"[load {before:.2f} -> {after:.2f}]")
    for name in order:
        t = sorted(times[name])
        print(f"{name:<20} min {t[0] * 1000:6.1f}  q1 {t[len(t) // 4] * 1000:6.1f}  "
              f"median {t[len(t) // 2] * 1000:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
