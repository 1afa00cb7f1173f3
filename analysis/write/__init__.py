"""Writers: the run model into `_data` YAML and CSV (datafiles), charts (charts, plots), report
pages (pages); paths.py says where each file goes."""
