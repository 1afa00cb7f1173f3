"""What spans runs: cell_table (the corpus-wide cell table every run adds its rows to),
compare (run against run, with significance), history (a series' values over its versions).
write/corpus_pages.py writes their files and pages."""
