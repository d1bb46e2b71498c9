"""Goldens: recorded data, check ops, FileCheck, comparisons.

PYTEST_DONT_REWRITE"""
