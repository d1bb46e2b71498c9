"""The README stays a short tour, and says what every option is; the docs site's nav, its
index and the README's documentation list name every page (``mkdocs build --strict`` in
``.ci/run`` checks the links inside the site)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pytest_mlir_snippets.settings import OPTIONS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
MAX_README_LINES = 300


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= MAX_README_LINES


def _options_table() -> str:
    section = README.split("\n## Options\n", 1)[1].split("\n## ", 1)[0]
    return "\n".join(line for line in section.splitlines() if line.startswith("|"))


def test_every_option_of_the_mlir_group_is_in_the_readme_table() -> None:
    table = _options_table()
    missing = [o.flag for o in OPTIONS if f"`{o.flag}`" not in table]
    missing += [o.ini for o in OPTIONS if o.ini and f"`{o.ini}`" not in table]
    assert not missing, f"not in the README's options table: {missing}"


def test_the_readme_links_to_docs_pages_that_exist() -> None:
    links = re.findall(r"\]\((docs/[^)#]*)", README)
    assert links
    broken = [link for link in links if not (ROOT / link).exists()]
    assert not broken, broken


def _nav_pages(nav: object) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_nav_pages(entry) for entry in nav))
    if isinstance(nav, dict):
        return set().union(*(_nav_pages(entry) for entry in nav.values()))
    return set()


def test_the_nav_has_every_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    nav = _nav_pages(config["nav"])
    assert pages == nav, (sorted(pages - nav), sorted(nav - pages))


def test_the_index_and_the_readme_link_every_page() -> None:
    """docs/index.md is the site's table of contents, the README's documentation list the
    repository's: a reader of either finds every page (the generated figures included)."""
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md", "tour.md"}
    index = set(re.findall(r"\]\(([\w-]+\.md)", (ROOT / "docs" / "index.md").read_text()))
    listed = set(re.findall(r"\]\(docs/([\w-]+\.md)", README.split("\n## Documentation\n", 1)[1]))
    assert pages <= index, f"not linked from docs/index.md: {sorted(pages - index)}"
    assert pages <= listed, f"not in the README's documentation list: {sorted(pages - listed)}"


def test_the_site_builds_strictly_with_the_readme_as_its_short_tour(tmp_path: Path) -> None:
    """What ``.ci/run`` runs: a broken link or a page missing from the nav fails (not with
    ``--quiet``, which hides the warnings that strict mode counts). The short tour page is
    the README, from its one source (an include, no copy), its links into docs/ resolved
    in the site."""
    pytest.importorskip("mkdocs", reason="the docs extra (mkdocs, mkdocs-material) is not installed")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ROOT / "docs" / "tour.md").read_text().strip() == "<!-- include: README.md -->"
    assert 'href="tour/"' in (site / "index.html").read_text()  # the home page links the short tour
    tour = (site / "tour" / "index.html").read_text()
    missing = [o.flag for o in OPTIONS if o.flag not in tour]
    assert not missing, f"the options table is not on the site: {missing}"
    assert 'href="../goldens/#tolerances"' in tour and 'href="docs/' not in tour
    # the optimization-run table's item names (first column) never wrap mid-word
    page = (site / "optimization-runs" / "index.html").read_text()
    assert "<td><code>v3[contract]</code></td>" in page and 'href="../stylesheets/extra.css"' in page
    css = re.sub(r"/\*.*?\*/", "", (site / "stylesheets" / "extra.css").read_text(), flags=re.S)
    rule = re.search(r"\.md-typeset td:first-child code\s*\{([^}]*)\}", css)
    assert rule is not None and "white-space: nowrap" in rule.group(1), css
