"""mkdocs hooks (``hooks:`` in mkdocs.yml): a page's ``<!-- include: FILE -->`` line is
replaced by FILE (relative to the repository root) at build time, so the site's short tour
is README.md itself, one source for GitHub and the site. The included file's links into
``docs/`` are written relative to the site's pages (``docs/goldens.md#tolerances`` becomes
``goldens.md#tolerances``, ``docs/`` the home page); any other relative link is left as
it is, and ``mkdocs build --strict`` fails on it if it does not resolve."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r"^<!-- include: (\S+) -->$", re.MULTILINE)
DOCS_LINK = re.compile(r"\]\(docs/([^)]*)\)")


def included(name: str) -> str:
    """FILE's text, its links into docs/ made links between the site's pages."""
    text = (ROOT / name).read_text()
    return DOCS_LINK.sub(lambda m: f"]({m.group(1) or 'index.md'})", text)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return INCLUDE.sub(lambda m: included(m.group(1)), markdown)
