"""The code examples of the user documentation run as doctests."""
import doctest
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "doc"
PAGES = sorted(DOC.glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_documentation_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS,
                              raise_on_error=False, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {page.name}"
