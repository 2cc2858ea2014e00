"""Text processing shared by every search backend: words, stems, safe query terms and snippets.

Words follow SQLite's ``unicode61`` tokenizer (letters and digits; case folded; diacritics removed) and stems
follow its ``porter`` tokenizer (Porter's C implementation, applied to words of 3 to 64 characters), so the
in-memory indexes rank like the FTS5 table; they agree token for token on the bundled corpus (words with
letters outside ASCII after folding, such as ß, may stem differently). Passages are indexed with every word;
queries drop English stopwords, repeated words and anything that is not a word, so any user text becomes a plain
OR of terms.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

import Stemmer

TOKENIZER_VERSION = 1  # bump when words or stems change: cached in-memory indexes are rebuilt
MAX_QUERY_TERMS = 32
SNIPPET_WORDS = 24  # FTS5 snippet() length, in tokens
SNIPPET_CHARS = 180  # snippet length of the in-memory backends
SNIPPET_LEAD = 40  # characters of context before the first hit
HIGHLIGHT = ("**", "**")
ELLIPSIS = "…"

_WORD = re.compile(r"[^\W_]+")
# ASCII fast path of ``words``: upper case to lower, everything but letters and digits to a space
_ASCII_FOLD = str.maketrans({chr(c): chr(c).lower() if chr(c).isalnum() else " " for c in range(128)})
_STEMMER = Stemmer.Stemmer("porter")

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both but
by can could did do does doing down during each few for from further had has have having he her here hers herself
him himself his how i if in into is it its itself just me more most my myself nor of off on once only or other our
ours ourselves out over own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves please tell explain describe give show find search
""".split())


def _fold(text: str) -> str:
    """Lower-case and strip diacritics (é -> e), as unicode61 with remove_diacritics does."""
    text = text.lower()
    if text.isascii():
        return text
    text = text.replace("\u00b5", "\u03bc")  # micro sign -> Greek mu, as unicode61 folds it
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")


def words(text: str) -> list[str]:
    """The folded words of ``text``, in order, stopwords included."""
    if text.isascii():
        return text.translate(_ASCII_FOLD).split()
    return _WORD.findall(_fold(text))


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Porter stem of one folded word; words shorter than 3 or longer than 64 characters pass through."""
    return _c_porter_rules(_STEMMER.stemWord(word)) if 3 <= len(word) <= 64 else word


def _measure(stem_: str) -> int:
    """Porter's m: the number of vowel-consonant sequences (y is a vowel after a consonant)."""
    kinds = []
    for i, ch in enumerate(stem_):
        vowel = ch in "aeiou" or (ch == "y" and i > 0 and kinds[-1] == "c")
        kinds.append("v" if vowel else "c")
    return "".join(kinds).count("vc")


def _c_porter_rules(s: str) -> str:
    """Apply the two step-2 rules of Porter's C implementation (SQLite's) that Snowball's 'porter' lacks.

    'logi' -> 'log' and 'bli' -> 'ble' (the latter then meets step 4 'ible' and step 5 'e' removal), e.g.
    ontology -> ontolog, assembly -> assembl, irreversibly -> irrevers, as FTS5 stores them.
    """
    if s.endswith("logi") and _measure(s[:-4]) > 0:
        return s[:-1]
    if not (s.endswith("bli") and _measure(s[:-3]) > 0):
        return s
    s = s[:-1] + "e"
    if s.endswith("ible") and _measure(s[:-4]) > 1:
        return s[:-4]
    m = _measure(s[:-1])
    cvc = len(s) >= 4 and s[-4] not in "aeiou" and s[-3] in "aeiouy" and s[-2] not in "aeiouwxy"
    return s[:-1] if m > 1 or (m == 1 and not cvc) else s


def stems(text: str) -> list[str]:
    """The stems of every word of ``text`` (what the indexes store)."""
    return [stem(w) for w in words(text)]


def query_terms(query: str) -> list[str]:
    """Safe search terms from any user text: folded words, stopwords and repeats dropped, at most 32.

    Quotes, FTS operators (AND/OR/NOT/NEAR are ordinary words here), ``*``, ``^``, ``:``, brackets and emoji all
    vanish; an empty list means there is nothing to search for.
    """
    seen: dict[str, None] = {}
    for w in words(query):
        if w not in STOPWORDS and w not in seen:
            seen[w] = None
            if len(seen) == MAX_QUERY_TERMS:
                break
    return list(seen)


def fts_match_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH expression that ORs the terms, each quoted (FTS5 stems them itself)."""
    return " OR ".join(f'"{t}"' for t in terms)


def _fold_keeping_positions(text: str) -> str:
    """``text`` folded like ``words`` does, character for character, so positions match the original."""
    if text.isascii():
        return text.lower()
    out = []
    for ch in text:
        folded = _fold(ch)
        out.append(folded if len(folded) == 1 else " " if not folded else ch)
    return "".join(out)


def _occurrences(text: str, word: str) -> Iterator[int]:
    """Where ``word`` occurs in ``text`` as a whole word."""
    i = text.find(word)
    while i != -1:
        j = i + len(word)
        if (i == 0 or not text[i - 1].isalnum()) and (j == len(text) or not text[j].isalnum()):
            yield i
        i = text.find(word, j)


def make_snippet(text: str, query_stems: Iterable[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around the most distinct query terms, hits marked **like this**."""
    wanted = frozenset(query_stems)
    folded = _fold_keeping_positions(text)
    found = set(folded.translate(_ASCII_FOLD).split() if folded.isascii() else _WORD.findall(folded))
    # a Porter stem minus its last letter begins its word: only such words are stemmed and compared
    prefixes = tuple({s[:-1] if len(s) > 1 else s for s in wanted})
    hit_words = {w: s for w in found if w.startswith(prefixes) and (s := stem(w)) in wanted}
    hits = sorted(((a, a + len(w)), s) for w, s in hit_words.items() for a in _occurrences(folded, w))
    anchor = max((span for span, _ in hits), default=(0, 0),
                 key=lambda h: (len({s for (a, _), s in hits if h[0] <= a < h[0] + width}), -h[0]))
    begin = max(0, anchor[0] - SNIPPET_LEAD)
    if begin:
        space = text.find(" ", begin, anchor[0])
        begin = space + 1 if space != -1 else anchor[0]
    end = min(len(text), begin + width)
    if end < len(text):
        space = text.rfind(" ", anchor[1], end)
        end = space if space != -1 else max(end, anchor[1])
    out, pos = [], begin
    for (a, b), _ in hits:
        if begin <= a and b <= end:
            out += [text[pos:a], HIGHLIGHT[0], text[a:b], HIGHLIGHT[1]]
            pos = b
    out.append(text[pos:end])
    return (ELLIPSIS if begin else "") + "".join(out).strip() + (ELLIPSIS if end < len(text) else "")
