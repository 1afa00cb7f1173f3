"""The build: which runs changed (cache), one build at a time (lock), and the stage sequence
of one run (stages: read -> model -> data files, pages, charts)."""
