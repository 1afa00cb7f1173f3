"""Readers: each input format into plain Python objects (hdr/ for HdrHistogram interval logs,
jfr/ for JDK Flight Recorder recordings, manifest.py and manifest_checks.py for run.yml)."""
