#!/usr/bin/env python3
"""Check the course glossary: course/zh/glossary.toml and course/en/glossary.toml.

Run from anywhere: python3 course/check_glossary.py
Exit status 0 when clean, 1 when any error was found (each one is printed).

What is checked:
- both files parse (tomllib) and hold a list of [[term]] tables with the keys
  id, name, text, chapters, see and optionally refs (nothing else);
- ids are unique, well formed (lowercase a-z0-9 and single hyphens), and the two files
  have the same ids in the same order, sorted by the English name;
- every `see` id exists (and is not the term itself), every `chapters` id is one of the
  chapter ids given by the file names in course/zh/chapters (the same set as in
  course/en/chapters), and chapters/see/refs are identical in both languages;
- every /glossary#ID linked anywhere under course/ (chapters, lessons, labs, the
  glossary itself) names an existing term;
- every text is non-empty and 2 to 5 sentences (a crude count), carries no {{...}}
  figure placeholder, and the English text has no CJK characters;
- the Chinese text has no run of 4 or more consecutive English words outside
  `code` spans and [links](...) (a crude "English sentence" detector), and does not use
  对端 (the course says 远端).
"""

import re
import sys
import tomllib
from pathlib import Path

COURSE = Path(__file__).resolve().parent
LANGS = ("zh", "en")
KEYS_REQUIRED = ("id", "name", "text", "chapters", "see")
KEYS_OPTIONAL = ("refs",)
ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LINK_RE = re.compile(r"/glossary#([A-Za-z0-9_-]*)")
CODE_RE = re.compile(r"`[^`]*`")
MDLINK_RE = re.compile(r"\[[^\]]*\]\([^)]*\)")
CJK_RE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_'’./+-]*")
FORBIDDEN_ZH = {"对端": "use 远端 (remote) as the chapters do"}
MIN_SENTENCES, MAX_SENTENCES = 2, 5
MIN_ENGLISH_RUN = 4

errors = []


def err(msg):
    errors.append(msg)


def sort_key(name):
    return re.sub(r"[^a-z0-9]", "", name.lower())


def strip_markup(text):
    """The text without `code` spans and [links](...), for the prose checks."""
    return MDLINK_RE.sub(" ", CODE_RE.sub(" ", text))


def count_sentences(text, lang):
    prose = strip_markup(text).strip()
    if lang == "zh":
        n = len(re.findall(r"[。！？]", prose))
        # a final sentence without its full stop still counts
        if prose and prose[-1] not in "。！？":
            n += 1
    else:
        n = len(re.findall(r"[.!?](?=\s|$)", prose))
        if prose and prose[-1] not in ".!?":
            n += 1
    return n


def english_runs(text):
    """Runs of MIN_ENGLISH_RUN or more English words separated only by spaces."""
    prose = strip_markup(text)
    runs = []
    pattern = re.compile(r"%s(?:[ \t]+%s){%d,}" % (WORD_RE.pattern, WORD_RE.pattern, MIN_ENGLISH_RUN - 1))
    for m in pattern.finditer(prose):
        runs.append(m.group(0))
    return runs


def load(lang):
    path = COURSE / lang / "glossary.toml"
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        err(f"{path}: missing")
        return None
    except tomllib.TOMLDecodeError as e:
        err(f"{path}: does not parse: {e}")
        return None
    extra = set(data) - {"term"}
    if extra:
        err(f"{lang}/glossary.toml: unexpected top-level keys {sorted(extra)}")
    terms = data.get("term")
    if not isinstance(terms, list) or not terms:
        err(f"{lang}/glossary.toml: no [[term]] entries")
        return None
    return terms


def chapter_ids():
    ids = {}
    for lang in LANGS:
        d = COURSE / lang / "chapters"
        ids[lang] = {p.stem for p in d.glob("*.toml")}
    if ids["zh"] != ids["en"]:
        err(f"chapter files differ: zh only {sorted(ids['zh'] - ids['en'])}, en only {sorted(ids['en'] - ids['zh'])}")
    return ids["zh"]


def check_term_shape(lang, i, t, chapters):
    where = f"{lang}/glossary.toml term #{i + 1} ({t.get('id', '?')})"
    for k in KEYS_REQUIRED:
        if k not in t:
            err(f"{where}: missing key `{k}`")
    extra = set(t) - set(KEYS_REQUIRED) - set(KEYS_OPTIONAL)
    if extra:
        err(f"{where}: unexpected keys {sorted(extra)}")
    tid = t.get("id")
    if not isinstance(tid, str) or not ID_RE.match(tid):
        err(f"{where}: id {tid!r} is not lowercase a-z0-9 with single hyphens")
    for k in ("name", "text"):
        v = t.get(k)
        if not isinstance(v, str) or not v.strip():
            err(f"{where}: `{k}` is empty or not a string")
    for k in ("chapters", "see", "refs"):
        v = t.get(k, [])
        if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
            err(f"{where}: `{k}` must be a list of non-empty strings")
        elif len(v) != len(set(v)):
            err(f"{where}: `{k}` has duplicates")
    chs = t.get("chapters", [])
    if isinstance(chs, list):
        if not chs:
            err(f"{where}: `chapters` is empty")
        for c in chs:
            if c not in chapters:
                err(f"{where}: chapter {c!r} is not one of the {len(chapters)} chapter ids")
    text = t.get("text", "")
    if isinstance(text, str) and text.strip():
        n = count_sentences(text, lang)
        if not MIN_SENTENCES <= n <= MAX_SENTENCES:
            err(f"{where}: text has {n} sentences (want {MIN_SENTENCES}-{MAX_SENTENCES})")
        if "{{" in text:
            err(f"{where}: text holds a {{{{...}}}} placeholder; the glossary carries no simulated figures")
        if lang == "en" and CJK_RE.search(strip_markup(text)):
            err(f"{where}: English text holds CJK characters")
        if lang == "zh":
            for run in english_runs(text):
                err(f"{where}: {len(run.split())} English words in a row outside code/links: {run!r}")
            for word, why in FORBIDDEN_ZH.items():
                if word in text or word in t.get("name", ""):
                    err(f"{where}: uses {word}: {why}")
            if not CJK_RE.search(strip_markup(text)):
                err(f"{where}: Chinese text holds no Chinese")


def main():
    chapters = chapter_ids()
    if len(chapters) != 30:
        err(f"expected 30 chapters in course/zh/chapters, found {len(chapters)}")
    files = {lang: load(lang) for lang in LANGS}
    if any(v is None for v in files.values()):
        return report(0)

    for lang, terms in files.items():
        for i, t in enumerate(terms):
            check_term_shape(lang, i, t, chapters)

    ids = {lang: [t.get("id") for t in terms] for lang, terms in files.items()}
    for lang in LANGS:
        dup = sorted({x for x in ids[lang] if ids[lang].count(x) > 1}, key=str)
        if dup:
            err(f"{lang}/glossary.toml: duplicate ids {dup}")
    if ids["zh"] != ids["en"]:
        if set(ids["zh"]) != set(ids["en"]):
            err(f"ids differ: zh only {sorted(set(ids['zh']) - set(ids['en']), key=str)}, "
                f"en only {sorted(set(ids['en']) - set(ids['zh']), key=str)}")
        else:
            first = next(i for i, (a, b) in enumerate(zip(ids["zh"], ids["en"])) if a != b)
            err(f"ids in a different order from position {first + 1}: zh {ids['zh'][first]!r}, en {ids['en'][first]!r}")

    known = set(ids["en"]) & set(ids["zh"])
    by_id = {lang: {t.get("id"): t for t in files[lang]} for lang in LANGS}

    # same metadata in both languages; see ids exist
    for tid in ids["en"]:
        if tid not in known:
            continue
        zh, en = by_id["zh"][tid], by_id["en"][tid]
        for k in ("chapters", "see", "refs"):
            if zh.get(k, []) != en.get(k, []):
                err(f"term {tid}: `{k}` differs between zh {zh.get(k, [])} and en {en.get(k, [])}")
        for s in en.get("see", []):
            if s == tid:
                err(f"term {tid}: `see` lists the term itself")
            elif s not in known:
                err(f"term {tid}: `see` id {s!r} does not exist")

    # alphabetical by English name
    names = [by_id["en"][tid].get("name", "") for tid in ids["en"]]
    keys = [sort_key(n) for n in names]
    for i in range(1, len(keys)):
        if keys[i] < keys[i - 1]:
            err(f"not sorted by English name: {names[i - 1]!r} ({ids['en'][i - 1]}) comes before {names[i]!r} ({ids['en'][i]})")

    # every /glossary#ID linked anywhere under course/
    linked = {}
    outside = set()
    for path in sorted(COURSE.rglob("*")):
        if not path.is_file() or path.suffix not in (".toml", ".md"):
            continue
        for m in LINK_RE.finditer(path.read_text(encoding="utf-8")):
            linked.setdefault(m.group(1), set()).add(str(path.relative_to(COURSE)))
            if path.name != "glossary.toml":
                outside.add(m.group(1))
    for lid, where in sorted(linked.items()):
        if lid not in known:
            err(f"/glossary#{lid} is linked from {', '.join(sorted(where))} but no such term exists")

    return report(len(ids["en"]), len(outside), len(linked))


def report(n_terms, n_outside=0, n_linked=0):
    if errors:
        for e in errors:
            print("ERROR:", e)
        print(f"{len(errors)} error(s)")
        return 1
    print(f"OK: {n_terms} terms in zh and en, same ids and order, sorted by English name; "
          f"{n_outside} distinct /glossary# ids linked from the chapters, lessons and labs "
          f"({n_linked} counting the glossary's own cross-links), all defined")
    return 0


if __name__ == "__main__":
    sys.exit(main())
