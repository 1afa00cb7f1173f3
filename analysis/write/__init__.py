"""Writers: the run model into the site's files; paths.py says where each file goes.

- data files: datafiles (`_data` YAML and CSV), views (the view blocks includes print), summary
  (the scenario x target table), jmh_views (a JMH run's), yaml_text (deterministic YAML);
- charts: charts (chart jobs, matplotlib for the PNGs), chartset (which charts a run has),
  svgcharts -> chartspec -> chartlayout -> svgdraw (each chart as data, laid out, written as
  SVG), plots (house style), comparison_charts, history_plot, png_use (which charts get a PNG);
- pages: pages (report front matter), liquid_pages (pages rendered with the site's Liquid),
  corpus_pages (what needs every run at once: indexes, comparisons, history), post (a drafted
  methodology post);
- hlog_writer: intervals -> `.hlog` as Java's HistogramLogWriter writes it."""
