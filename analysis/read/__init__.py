"""Readers: each input format into plain Python objects (hdr/ for HdrHistogram interval logs,
jfr/ for JDK Flight Recorder recordings, manifest.py for run.yml)."""
