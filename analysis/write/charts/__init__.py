"""The charts: chartset (which charts a run has), charts (chart jobs, matplotlib for the PNGs),
svgcharts -> chartspec -> chartlayout -> svgdraw (each chart as data, laid out, written as SVG),
plots (house style), comparison_charts, history_plot, png_use (which charts get a PNG)."""
