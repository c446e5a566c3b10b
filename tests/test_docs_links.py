"""Every relative link in the Markdown documentation points at something that exists.

Covers README.md, docs/**/*.md and the migration examples' READMEs: inline links
`[text](target)`, reference definitions `[label]: target` and images; links inside
code (fenced blocks, inline code) are text, not links. A `#fragment` on a Markdown
target must name one of its headings, slugged as GitHub does.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

from buildkit_testing.paths import REPO

DOCS = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "examples" / "migration").rglob("*.md")])

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_HTML_LINK = re.compile(r"""<(?:a|img)\s[^>]*?(?:href|src)=["']([^"']+)["']""", re.I)
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def prose_lines(text: str, blank_code: bool = True):
    """(line number, line) outside fenced code blocks, with inline code blanked (or not)."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(2)[0] * len(match.group(2))
            continue
        if fence is not None:
            if line.strip().startswith(fence) and set(line.strip()) <= {fence[0]}:
                fence = None
            continue
        yield number, _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line) if blank_code else line


def links(path: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        targets = [m.group(1) for m in _INLINE_LINK.finditer(line)] + [m.group(1) for m in _HTML_LINK.finditer(line)]
        if reference := _REFERENCE.match(line):
            targets.append(reference.group(1))
        found += [(number, t) for t in targets if not _EXTERNAL.match(t)]
    return found


def github_slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # punctuation (backticks, dots, slashes...) goes
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    result = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8"), blank_code=False):
        if match := re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line):
            slug = github_slug(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            result.add(slug if count == 0 else f"{slug}-{count}")
    return frozenset(result)


def _show(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def broken_links(path: Path) -> list[str]:
    problems = []
    for number, target in links(path):
        location, _, fragment = target.partition("#")
        resolved = (path.parent / unquote(location)).resolve() if location else path
        where = f"{_show(path)}:{number}: {target}"
        if not resolved.exists():
            problems.append(f"{where} (no such file: {resolved})")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            problems.append(f"{where} (no heading #{fragment} in {_show(resolved)})")
    return problems


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(path):
    assert not broken_links(path), "\n".join(broken_links(path))


def test_the_checker_sees_links_and_skips_code(tmp_path):
    (tmp_path / "there.md").write_text("# A `code` heading: yes\n\n## Two words\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [anchor](there.md#a-code-heading-yes) [self](#local) ![img](missing.png)\n"
        "`[not a link](nowhere.md)` <https://example.com> [web](https://example.com/x.md)\n"
        "```\n[in a fence](nowhere.md)\n```\n"
        "[bad anchor](there.md#three-words)\n[ref]: gone/file.md\n"
        '<a href="also-missing.md">x</a>\n# Local\n')
    problems = broken_links(page)
    assert len(problems) == 4, problems
    assert any("missing.png" in p for p in problems) and any("#three-words" in p for p in problems)
    assert any("gone/file.md" in p for p in problems) and any("also-missing.md" in p for p in problems)
