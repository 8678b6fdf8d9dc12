"""Words whole-project questions search every file of a scan for, known before any file is read.

Some questions are asked of the whole tree on behalf of every analysed file -- which modules
could serve requests (the web index), which import langgraph (the checkpointed-node claims) --
and each is a byte search of every file's text. In a pool every analysis worker asked them
again: two workers on a 5,000-file tree each spent ~0.6 s on the same 55 searches. The words
are declared here, importing nothing heavy, so the reader processes answer them for their chunk
while they hold its bytes (:func:`resume_audit.reading.readers.read_files`) and the scan hands the
answers to its workers (:meth:`resume_audit.reading.sourcebytes.Mentions.remember`): the same answers a
search of the whole text gives, found once.

The analyses that ask these questions take their words from here, so the two cannot drift apart.
"""

from __future__ import annotations

from resume_audit.handlers.packages import SERVING_WORDS
from resume_audit.reading.prefilter import FRAMEWORK_PACKAGES, import_words

#: the text of a module that imports langgraph
LANGGRAPH_IMPORT_WORDS = import_words(FRAMEWORK_PACKAGES["langgraph"])

#: every word above, once
WHOLE_TREE_WORDS: tuple[str, ...] = tuple(dict.fromkeys((*SERVING_WORDS, *LANGGRAPH_IMPORT_WORDS)))
