"""codevouch/commands/common.py: what every command shares. Most of it runs through the CLI
(tests/commands/test_cli.py, test_cli_errors.py); here, the message escaping on its own."""
from __future__ import annotations

from codevouch.commands.common import message_line
from codevouch.printable import one_line


def test_a_message_is_one_line_with_every_unprintable_character_escaped() -> None:
    assert message_line("cannot read a\nb.py\t(\x1b[1A)") == "cannot read a\\nb.py\\t(\\x1b[1A)"
    assert message_line("nbsp\xa0zero-width\u200bbidi\u202eline\u2028") == \
        "nbsp\\xa0zero-width\\u200bbidi\\u202eline\\u2028"
    assert message_line("plain text, é and ✓ stay") == "plain text, é and ✓ stay"


def test_messages_escape_more_than_repository_text_does() -> None:
    # Repository text (printable.one_line) keeps non-ASCII spaces and writes \x0a; a message
    # escapes everything str.isprintable rejects, Python's way. Both leave nothing unsafe raw.
    assert one_line("a\nb\xa0c") == "a\\x0ab\xa0c"
    assert message_line("a\nb\xa0c") == "a\\nb\\xa0c"
    for text in ("\x1b]52;c;x\x07", "\u202e", "\u2028", "\r"):
        assert message_line(text).isprintable() and one_line(text).isprintable()
