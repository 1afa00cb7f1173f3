"""The `python -m analysis` commands: each parses its arguments and calls the stages."""
