"""loadcurve's analysis package: raw benchmark runs in, Jekyll data, charts and pages out.

Stages, in pipeline order:
- read/: each input format into plain objects (hdr/ for .hlog with Java-exact statistics, jfr/,
  jmh.py, loadtools/ for other load tools' results, manifest.py for run.yml);
- one run's numbers: analyse, aggregate (the run model, model.py), overload, gc_tail,
  jmh_report; imported (other tools' results as .hlog);
- across runs: corpus, compare, history;
- write/: the data files, charts and pages;
- build/: the stages of a build, its cache and lock; commands/: the `python -m analysis`
  commands (cli.py dispatches to them);
- shared leaves: errors, atomic, vocabulary, native_build.
Run it as `python -m analysis COMMAND --help`.
"""
