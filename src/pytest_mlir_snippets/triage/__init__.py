"""Triage on the pytest side: a failure's reproduce.sh (reproducer.py, execrepro.py,
litexport.py), --mlir-bisect (bisection.py), a crashed compile's failing pass (crashtriage.py),
`mlir-snippets reduce` (reduce.py, opdeletion.py, interesting.py) and `export-lit`
(export_lit.py, subject.py).

PYTEST_DONT_REWRITE"""
