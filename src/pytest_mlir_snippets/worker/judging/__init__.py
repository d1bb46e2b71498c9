"""Judging a run: the golden check (judge.py), the choice of golden and its basis
(goldens.py; another target's worker as reference: reference.py; StableHLO's interpreter:
interpreter.py), and which results the code under test computed (dataflow.py, valueflow.py)."""
