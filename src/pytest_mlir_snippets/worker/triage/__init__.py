"""Triage in the worker: which pass failed and the IR it received (failingpass.py, marked
on every compile, and a crash's progress file), --mlir-bisect (bisect.py: the search;
cpu_bisect.py, iree_bisect.py: the cuts per target), a failed execute's reproducer
(driver.py, cpu_driver.py, iree_driver.py, iree_repro.py), by target (dispatch.py)."""
