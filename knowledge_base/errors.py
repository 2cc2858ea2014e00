"""The knowledge base's error type."""


class KnowledgeBaseError(Exception):
    """A knowledge base cannot be used (missing, corrupted, built by an incompatible version); says how to rebuild."""


def rebuild_hint(path: object) -> str:
    """The commands that rebuild the database at ``path``."""
    return (f"rebuild it with 'clinical-gym kb build --out {path}' (bundled corpus) "
            f"or 'clinical-gym kb build --from FILE.jsonl --out {path}'")
