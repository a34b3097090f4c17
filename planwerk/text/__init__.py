"""Reading text, below everything that reads it: words, places, dates, numbers with units, follow-ups.

Pure (its only reads are its packaged word lists, ``words/<language>.toml``, and the gazetteer's PyPI data, in
:mod:`planwerk.text.gazetteer`) and importing nothing else of planwerk: the plan checks and repairs (``core``), the
answer checks (``checks``) and the prompts read text with the same readers. Change it when a reader itself is wrong
(a date format, a unit, a place rule); a language's words are data in ``words/``.
"""
