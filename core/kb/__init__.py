"""The knowledge base: a folder of documents read (``readers``), chunked on sentence boundaries
(``chunking``) and kept in a persisted hybrid index (``index``); the knowledge graph is built per
question from the passages retrieved (``KnowledgeBase.graph_of``).

Re-indexing reuses the passages and embeddings of files whose bytes, chunk settings and embedder
are unchanged, so editing one file re-embeds only that file. The new index is written in a
sibling temp directory and swapped in with renames, so a crash mid-build keeps the old one and
the next build resumes from the batches embedded before it.
"""
from core.kb.chunking import chunk_document
from core.kb.index import EMBED_BATCH, INDEX_DIR, KnowledgeBase, index_settings
from core.kb.readers import SUFFIXES, Document, KnowledgeBaseError, read_documents

__all__ = ["EMBED_BATCH", "INDEX_DIR", "SUFFIXES", "Document", "KnowledgeBase", "KnowledgeBaseError",
           "chunk_document", "index_settings", "read_documents"]
