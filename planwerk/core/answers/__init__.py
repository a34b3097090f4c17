"""Answers by reference: the answer model names result values as placeholders, planwerk writes them.

:mod:`.slots` names every scalar of a run's successful results (``<call id>.<path>``, the paths ``$ref`` walks),
:mod:`.render` writes a placeholder's value into the answer (numbers with their unit, dates and times in the
question's language), :mod:`.grammar` builds the EBNF an answer is decoded under: free text without digits,
placeholders that can only name existing slots, and the numbers the question, the conversation or the retrieved
context hold. Pure: no I/O, no model.
"""
