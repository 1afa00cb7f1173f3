"""loadcurve's analysis package: raw benchmark runs in, Jekyll data, charts and pages out.

Stages, in pipeline order; a stage imports only the ones above it and the shared leaves
(tests/test_imports.py holds it):
- read/: each input format into plain objects (hdr/ for .hlog with Java-exact statistics, jfr/,
  jmh/, loadtools/ for other load tools' results, manifest.py for run.yml);
- derive/: one run's numbers: analyse, aggregate (the run model, model.py), overload, gc_tail,
  jmh_report; imported (other tools' results as .hlog);
- corpus/: what spans runs: cell_table (the corpus-wide cell table), compare, history;
- write/: the data files, pages, and charts/;
- pipeline/: the stages of a build, its cache and lock;
- commands/: the `python -m analysis` commands (cli.py dispatches to them);
- shared leaves, importable by every stage: errors, atomic, vocabulary, model, paths, kinds
  (the kinds of run, load and jmh: each one's steps through the stages), native_build (the
  compiled C of read/, pipeline/ and write/, built and loaded with its fallback).
Run it as `python -m analysis COMMAND --help`.
"""
