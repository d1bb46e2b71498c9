"""The sandbox: worker processes, their pool and the compile cache.

PYTEST_DONT_REWRITE"""
