"""Writers: the run model into the site's files; analysis/paths.py says where each file goes.

- data files: datafiles (`_data` YAML and CSV), the view blocks includes print, one module per
  family of includes (load_curve_views, overload_views, methodology_views with load_tool_views
  and generator_views, jvm_views, flame_views, page_views; cell_text the cell's printed
  figures they share), summary (the scenario x target table), jmh_views (a JMH run's),
  yaml_text (deterministic YAML);
- a run's files as data, for the pipeline to write: run_files (RunFiles), load_files (a load
  test's);
- charts/: every chart, as SVG and (where used) PNG;
- pages: pages (report front matter), liquid_pages (pages rendered with the site's Liquid),
  corpus_pages (what needs every run at once: indexes, comparisons, history), post (a drafted
  methodology post)."""
