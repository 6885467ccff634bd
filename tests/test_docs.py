"""The code examples of the user documentation run as doctests; the prose speaks of the product only."""
import ast
import doctest
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "doc"
PAGES = sorted(DOC.glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_documentation_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS,
                              raise_on_error=False, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {page.name}"


# Words about how the work was organised (numbered work periods, reviews, briefs, helpers, issue
# numbers), which belong in the git history, not in the product's text. Deliberately not matched:
# "session" alone (onnxruntime's InferenceSession, pytest's session scope), "helper" alone (onnx.helper,
# "the HDF5 helpers"), "issue" alone ("issues a warning"), "brief" as an adjective ("a brief summary")
# and "review" as a verb ("review the thresholds").
PROCESS_WORDS = re.compile("|".join([
    r"(?<![a-z])sessions?[\s_-]*#?\d",                              # session 33, sessions 31 and 32, lut_session33
    r"\b(?:this|that|earlier|later|previous|next|another|helper|review|work)\s+sessions?\b",
    r"(?<![a-z])issues?[\s_-]*#?\d",                                # issue 19, issue #12, issue-16
    r"\bissue(?:'s|s'?)\s+(?:targets?|goals?)\b",                 # the targets
    r"\btargets?\s+of\s+the\s+(?:[\w-]+\s+){0,2}issues?\b",        # the targets of the (two) issue(s)
    r"\b(?:the|this|that)\s+issue\s+(?:states?|says|asks|requires|lists|names)\b",
    r"\b(?:by|in|from|after|during|a|the|two|one|second|first|code)\s+reviews?\b",
    r"\breview\s+(?:fix(?:es)?|findings?|comments?|rounds?)\b",
    r"\breview(?:ed|ers?)\b",
    r"\bbrief(?:'s|s)\b",                                         # the brief's, briefs
    r"\b(?:the|this|that|each|every|my|your|our)\s+brief\b(?!\s+(?:description|summary|note|overview|"
    r"look|pause|moment|explanation|example|introduction|list|history|comparison|table))",
    r"\bhelpers?\s+(?:sessions?|agents?|engineers?)\b",
    r"\b(?:written|found|run|made|measured|done)\s+by\s+(?:a|the)\s+helpers?\b",
    r"\bwork\s+periods?\b",
    r"\b(?:previous|earlier|last|this|that)\s+stop's\b",          # the previous stop's run
]), re.IGNORECASE)
PROSE_FILES = [ROOT / "README.md", *PAGES, *sorted((ROOT / "bench").glob("*.py"))]


def _hits(text: str) -> list[str]:
    return [match.group(0) for match in PROCESS_WORDS.finditer(text)]


def _comments_and_docstrings(path: Path):
    """(line, text) of every comment and docstring of a Python file."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                yield node.body[0].lineno, docstring


@pytest.mark.parametrize("path", PROSE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_prose_speaks_of_the_product(path):
    text = path.read_text(encoding="utf-8")
    hits = _hits(" ".join(text.split()))  # a phrase may break across lines
    lines = [f"line {number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1) if _hits(line)]
    assert not hits, f"{path.relative_to(ROOT)} speaks of how the work was organised: {hits}\n" + "\n".join(lines)


def test_result_file_names_speak_of_the_product():
    names = sorted(path.name for path in (ROOT / "bench" / "results").iterdir())
    assert not [name for name in names if _hits(name.replace("_", " "))], names


def test_code_comments_speak_of_the_product():
    hits = []
    for path in sorted((ROOT / "bob_boost").rglob("*.py")):
        for line, text in _comments_and_docstrings(path):
            hits += [f"{path.relative_to(ROOT)}:{line}: {hit!r}" for hit in _hits(" ".join(text.split()))]
    assert not hits, "comments or docstrings speak of how the work was organised:\n" + "\n".join(hits)


def test_benchmarks_page_is_short():
    lines = (DOC / "benchmarks.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 420, f"doc/benchmarks.md has {lines} lines"
