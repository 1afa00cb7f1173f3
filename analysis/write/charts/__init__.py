"""The charts: chartset (which charts a run has), run_jobs (a run's charts as picklable jobs,
and their pixel sizes), render (jobs -> SVG and, where used, matplotlib's PNG), svgcharts ->
chartspec -> chartlayout -> svgdraw (each chart as data, laid out, written as SVG), plots (house
style), comparison_charts, history_plot, png_use (which charts get a PNG)."""
