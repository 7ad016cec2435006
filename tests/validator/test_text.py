"""validator/text.py: where a snippet's text sits in a file, against a brute-force line compare."""
from __future__ import annotations

import random

import pytest

from codevouch.validator.text import MAX_HITS, MAX_PROBE_MISSES, PROBE, find_lines


def brute_force(needle: str, hay: str) -> list[tuple[int, int]]:
    """Every (start, end) line range of `hay` whose lines are exactly `needle`'s lines."""
    want, lines = needle.split("\n"), hay.split("\n")
    return [(i + 1, i + len(want)) for i in range(len(lines) - len(want) + 1)
            if lines[i:i + len(want)] == want][:MAX_HITS]


LONG = "\n".join(f"    value_{n} = compute(value_{n - 1}, {n})  # step {n}" for n in range(1, 8))
assert len(LONG) > PROBE   # searched by its probe


@pytest.mark.parametrize("hay", [
    LONG,                                                    # the whole file
    "x = 1\n" + LONG + "\ny = 2\n" + LONG + "\n",           # twice, at different lines
    "z" + LONG + "\n" + LONG,                                # first not at a line start
    LONG + "tail\n" + LONG + "\n",                           # first not at a line end
    LONG + "\n" + LONG + "\n" + LONG,                        # back to back
    (LONG[:PROBE] + "\n") * (MAX_PROBE_MISSES * 3) + LONG,   # the probe alone, many times first
    "\n".join([LONG[:PROBE + 5]] * 50 + [LONG]),             # more than the probe, still not it
    "nothing here\n" * 40,
])
def test_long_text_found_at_exactly_the_lines_a_line_compare_finds(hay: str) -> None:
    assert find_lines(LONG, hay) == brute_force(LONG, hay)


def test_overlapping_occurrences_of_a_long_text_are_all_found() -> None:
    # The needle's tail is its head: occurrences overlap, as a plain find from pos + 1 finds them.
    unit = "\n".join(f"line {n} " + "=" * 30 for n in range(5))
    needle = unit + "\n" + unit
    hay = "\n".join([unit] * 6)
    assert len(needle) > PROBE
    assert find_lines(needle, hay) == brute_force(needle, hay) == [(1, 10), (6, 15), (11, 20), (16, 25), (21, 30)]


def test_random_files_agree_with_the_line_compare() -> None:
    rng = random.Random(7)
    words = ["def f(x):", "    return x", "", "    pass", "class A:", "# note", "    y = x + 1" * 3]
    for _ in range(300):
        lines = [rng.choice(words) for _ in range(rng.randint(1, 60))]
        start = rng.randrange(len(lines))
        needle = "\n".join(lines[start:start + rng.randint(1, 12)])
        hay = "\n".join(lines)
        if needle:      # an empty text is never looked for (it would be every empty line)
            assert find_lines(needle, hay) == brute_force(needle, hay)


def test_crlf_file_still_matches_an_lf_text() -> None:
    hay = "a = 1\r\n" + LONG.replace("\n", "\r\n") + "\r\nb = 2\r\n"
    assert find_lines(LONG, hay) == [(2, 8)]
