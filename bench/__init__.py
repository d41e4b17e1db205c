"""Reproducible benchmarks for basedb (`python -m bench`, or `bench/run`).

See bench/runner.py for the options and bench/registry.py for how to add a benchmark.
"""
