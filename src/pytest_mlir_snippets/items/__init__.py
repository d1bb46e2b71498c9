"""pytest items: snippet files and functions, optimization runs, RUN lines, expectations.

PYTEST_DONT_REWRITE"""
