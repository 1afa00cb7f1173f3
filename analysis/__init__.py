"""loadcurve's analysis package: raw benchmark runs in, Jekyll data, charts and pages out.

Stages, one module each: hlog/histogram (read .hlog, Java-exact statistics), jfr (read JFR),
manifest (run.yml), aggregate (load-curve rows), datafiles (_data YAML), charts, pages.
Run it as `python -m analysis COMMAND --help`.
"""
