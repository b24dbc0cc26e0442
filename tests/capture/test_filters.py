"""The capture pipeline's text filters: private spans, brief echoes, CAPTURE_EXCLUDE globs."""

from __future__ import annotations

import pytest

from agents_memory.admission.echo import BRIEF_MARKER
from agents_memory.admission.filters import ExcludeMatcher, is_brief_echo, strip_private

# --- strip_private ------------------------------------------------------------------------------


def test_inline_private_span_is_removed_and_words_around_it_keep_one_space() -> None:
    assert strip_private("my key is <private>hunter2</private> ok?") == "my key is ok?"


def test_several_spans_are_all_removed() -> None:
    text = "a <private>1</private> b <private>2</private> c"
    assert strip_private(text) == "a b c"


def test_multiline_span_and_its_line_are_removed() -> None:
    text = "before\n<private>\nline one\nline two\n</private>\nafter"
    assert strip_private(text) == "before\nafter"


def test_tags_are_case_insensitive() -> None:
    assert strip_private("x <PRIVATE>secret</Private> y") == "x y"
    assert strip_private("x <Private >secret</PRIVATE > y") == "x y"


def test_unclosed_private_removes_everything_after_it() -> None:
    assert strip_private("visible <private>the rest\nof the turn") == "visible"


def test_text_that_is_all_private_becomes_empty() -> None:
    assert strip_private("<private>everything</private>") == ""
    assert strip_private("  \n<private>a</private>\n  <private>b</private>  ") == ""


def test_nested_opening_tag_inside_a_span_ends_at_the_first_closing_tag() -> None:
    text = "a <private>x <private>y</private> z</private> b"
    # The first </private> closes the span; the stray closing tag left behind is dropped.
    assert strip_private(text) == "a z b"


def test_stray_closing_tag_is_dropped() -> None:
    assert strip_private("a </private> b <private>c</private>") == "a b"


def test_blank_lines_after_a_removed_block_are_collapsed_only_there() -> None:
    text = "keep  two  spaces\n\n<private>k</private>\n\n\nnext"
    assert strip_private(text) == "keep  two  spaces\n\nnext"


def test_text_without_private_tags_is_returned_unchanged() -> None:
    for text in ("", "plain", "a <b>bold</b> tag", "privately <priv>", "x  y\n\n\n z "):
        assert strip_private(text) == text


def test_span_before_punctuation_leaves_no_space() -> None:
    assert strip_private("the token <private>abc</private>.") == "the token."


# --- is_brief_echo ------------------------------------------------------------------------------


def test_brief_marker_anywhere_marks_an_echo() -> None:
    assert is_brief_echo(BRIEF_MARKER + "\n# Memory brief\n...")
    assert is_brief_echo("<hook_context>\n" + BRIEF_MARKER + "\n</hook_context>")


def test_text_without_the_marker_is_not_an_echo() -> None:
    assert not is_brief_echo("<!-- mcp-agents-memory:brief v2 -->")
    assert not is_brief_echo("ordinary user turn")


# --- ExcludeMatcher -----------------------------------------------------------------------------

HOME = "/home/u"


@pytest.mark.parametrize(
    ("patterns", "cwd", "excluded"),
    [
        (("/home/u/secret",), "/home/u/secret", True),
        (("/home/u/secret",), "/home/u/secret/sub/deeper", True),
        (("/home/u/secret/**",), "/home/u/secret/sub", True),
        (("/home/u/secret/**",), "/home/u/secret", True),
        (("/home/u/secret/",), "/home/u/secret/x", True),
        (("/home/u/secret",), "/home/u/secretive", False),
        (("/home/u/secret",), "/home/u", False),
        (("~/clients/*",), "/home/u/clients/acme/api", True),
        (("~/clients/*",), "/home/u/clients", True),
        (("~",), "/home/u/anything", True),
        (("~/work",), "/home/other/work", False),
        (("*-private",), "/home/u/acme-private", True),
        (("*-private",), "/home/u/acme-private/api/src", True),
        (("*-private",), "/home/u/private", False),
        (("scratch",), "/tmp/scratch/x", True),
        (("/srv/*/keys",), "/srv/app/keys", True),
        (("/srv/*/keys",), "/srv/app/keysmith", False),
        (("/home/u/secret",), "/home/u/../u/secret/./x", True),
        (("", "  "), "/home/u", False),
        ((), "/home/u", False),
    ],
)
def test_exclude_globs_match_the_directory_and_everything_below(
    patterns: tuple[str, ...], cwd: str, excluded: bool
) -> None:
    assert ExcludeMatcher.compile(patterns, home=HOME).excludes(cwd) is excluded


def test_git_root_is_matched_when_the_cwd_is_not() -> None:
    matcher = ExcludeMatcher.compile(["~/secret-repo"], home=HOME)
    assert not matcher.excludes("/tmp/build")
    assert matcher.excludes("/tmp/build", git_root="/home/u/secret-repo")
    assert matcher.excludes(None, git_root="/home/u/secret-repo/")


def test_unknown_directories_are_not_excluded() -> None:
    matcher = ExcludeMatcher.compile(["*"], home=HOME)
    assert not matcher.excludes(None)
    assert not matcher.excludes("", git_root=None)


def test_home_with_trailing_slash_expands_cleanly() -> None:
    matcher = ExcludeMatcher.compile(["~/x"], home="/home/u/")
    assert matcher.excludes("/home/u/x/y")


def test_empty_matcher_is_falsy_and_a_configured_one_is_truthy() -> None:
    assert not ExcludeMatcher.compile([], home=HOME)
    assert ExcludeMatcher.compile(["/a"], home=HOME)
