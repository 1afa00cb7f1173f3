"""The build pipeline: which runs changed (cache, corpus_cache), one build at a time (lock),
the stage sequence of one run (stages: read -> model -> data files, pages, charts), and the
runner that maps the stages over the runs and then reduces across them (workers for the
processes)."""
