"""Reports written from the items' records: run reports, benchmark tables, HTML columns, shards.

PYTEST_DONT_REWRITE"""
