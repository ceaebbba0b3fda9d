"""Text handling shared by the answer, overlap and claim measures: normalization, words, sentences.

Two tokenizations live here, on purpose:

- :func:`normalize` / :func:`squad_tokens` are the official SQuAD v1.1 script's (whitespace
  tokens after dropping ASCII punctuation and articles); :func:`~ef.measures.answers.exact_match`
  and :func:`~ef.measures.answers.token_f1` must stay equal to that script.
- :func:`words` is ROUGE's tokenization made Unicode-aware: lower case, maximal runs of letters
  and digits, each CJK ideograph, kana or Hangul syllable a word of its own (those scripts do not
  separate words with spaces). On ASCII text it gives exactly ``rouge_score``'s tokens.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections.abc import Sequence

__all__ = ["check_contexts", "check_str", "normalize", "sentences", "squad_tokens", "words"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normalize(text: str) -> str:
    """Lower case, drop ASCII punctuation and the articles a/an/the, collapse white space.

    The exact order of SQuAD v1.1's ``normalize_answer``: punctuation goes before articles, so
    ``"the-end"`` becomes ``"theend"`` and keeps its letters.

    >>> normalize('  The Eiffel-Tower, a landmark!')
    'eiffeltower landmark'
    """
    if not isinstance(text, str):  # None or bytes would fail inside, on .lower()
        raise TypeError(f"'text' must be a str (got {type(text).__name__})")
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def squad_tokens(text: str) -> list[str]:
    """The SQuAD tokens of `text`: :func:`normalize`, then split on white space."""
    return normalize(text).split()


# Scripts written without spaces between words: CJK ideographs (and their extensions and
# compatibility forms), hiragana, katakana, Hangul syllables. Each character is one word.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"


# Combining marks (Unicode M*) are written on the letter before them: Devanagari and Thai vowel
# signs, Hebrew and Arabic points, decomposed Latin accents ('e' + U+0301), the dot of 'İ'.lower().
# Python's \w holds no mark, so words were cut at each one ('हिन्दी' read as 'ह', 'न', 'द'). Every
# mark lies in planes 0-1 or among the variation selectors E0100-E01EF.
_MARK_PLANES = (range(0x300, 0x20000), range(0xE0100, 0xE01F0))


def _marks() -> str:
    """The combining marks as the body of a regex character class (ranges of code points)."""
    ranges: list[list[int]] = []
    for plane in _MARK_PLANES:
        for code in plane:
            if unicodedata.category(chr(code))[0] == "M":
                if ranges and ranges[-1][1] == code - 1:
                    ranges[-1][1] = code
                else:
                    ranges.append([code, code])
    return "".join(rf"\U{low:08x}-\U{high:08x}" for low, high in ranges)


@functools.cache
def _word() -> re.Pattern[str]:
    """The word pattern, compiled when first used: its ranges take ~40 ms (the marks are read from
    unicodedata), which a process that reads no text (``ef trec-eval``) need not pay."""
    marks = _marks()
    return re.compile(rf"[{_CJK}][{marks}]*|(?![{_CJK}])[^\W_](?:(?![{_CJK}])[^\W_]|[{marks}])*")


def words(text: str) -> list[str]:
    """Lower-cased words of `text`: runs of letters and digits; a CJK character is a word alone.

    A combining mark (a vowel sign, an accent) stays with the letter it follows. Punctuation,
    ``_`` and white space separate words and are dropped. On ASCII text these are
    exactly the tokens of ``rouge_score`` (without stemming).

    >>> words("Don't PANIC: it's 42!")
    ['don', 't', 'panic', 'it', 's', '42']
    >>> words('東京は日本の首都です')
    ['東', '京', 'は', '日', '本', 'の', '首', '都', 'で', 'す']
    >>> words('Москва — столица России.')
    ['москва', 'столица', 'россии']
    """
    return _word().findall(text.lower())


# A sentence ends at ., ! or ? followed by white space (or the text's end), at a CJK full stop,
# exclamation or question mark, or at a line break. A period after a single capital or a short
# abbreviation of the list below does not end one.
_ABBREVIATION_TEXT = "e.g i.e etc vs cf al mr mrs ms dr prof st jr sr no fig eq approx inc ltd co u.s"
_ABBREVIATIONS = frozenset(_ABBREVIATION_TEXT.split())
_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"')\]])\s+|(?<=[。！？])|\n+")


def sentences(text: str) -> list[str]:
    """Split `text` into sentences (the claims of the claim measures), stripped, none empty.

    A rule, not a model: a sentence ends at ``.``, ``!`` or ``?`` followed by white space, at a
    CJK ``。！？`` and at every line break (so list items and headings are claims of their own). A
    period after a single letter (``J. Smith``), a common abbreviation (``e.g.``, ``Dr.``) or a
    list number that opens a line (``1.``) does not end a sentence. Text without any word
    (``'**'``, ``'--'``) is not a sentence.

    >>> sentences('Paris is in France. It has 2.1 million people!  Dr. Smith agrees.')
    ['Paris is in France.', 'It has 2.1 million people!', 'Dr. Smith agrees.']
    >>> sentences('東京は首都です。大阪は都市です。')
    ['東京は首都です。', '大阪は都市です。']
    >>> sentences('Steps:\\n1. Mix.\\n2. Bake.')
    ['Steps:', '1. Mix.', '2. Bake.']
    """
    out: list[str] = []
    pending = ""
    start = 0
    for match in _BREAK.finditer(text):
        piece = text[start : match.start()]
        start = match.end()
        candidate = pending + piece
        if "\n" not in match.group() and _ends_in_abbreviation(candidate, text[start:]):
            pending = candidate + match.group()
            continue
        pending = ""
        _add_sentence(out, candidate)
    _add_sentence(out, pending + text[start:])
    return out


def _ends_in_abbreviation(text: str, following: str) -> bool:
    if not text.endswith("."):
        return False
    last = text[:-1].rsplit(None, 1)[-1] if text[:-1].strip() else ""
    last = last.lstrip("([\"'").lower()
    if last == "no":  # "No. 5" abbreviates "number"; "The answer is no." ends a sentence
        return following[:1].isdigit()
    # "1." opening a list item is a number, not a sentence.
    enumerator = last.isdigit() and len(last) <= 3 and text.split("\n")[-1].strip() == last + "."
    return (len(last) == 1 and last.isalpha()) or last in _ABBREVIATIONS or enumerator


def _add_sentence(out: list[str], text: str) -> None:
    text = text.strip()
    if words(text):
        out.append(text)


def check_str(value: object, name: str) -> str:
    """`value` if it is a ``str``; else a ``TypeError`` naming `name`."""
    if not isinstance(value, str):
        raise TypeError(f"'{name}' must be a str (got {type(value).__name__})")
    return value


def check_contexts(value: object, label: str) -> Sequence[str]:
    """Check a list of passages; `label` is how errors name it (``'retrieved_contexts'``)."""
    # A bare str is a sequence too: iterating it would score single characters as contexts.
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{label} must be a list of str (got {type(value).__name__})")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise TypeError(f"{label}[{i}] must be a str (got {type(item).__name__})")
    return value
