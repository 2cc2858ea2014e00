"""``clinical-gym kb build`` writes a knowledge base (the bundled corpus or your passages); ``kb search`` queries one."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from clinical_gym.cli.errors import CLIError


def _progress_bar(desc: str):
    from tqdm import tqdm

    return tqdm(desc=desc, unit=" passages", unit_scale=True, file=sys.stderr, dynamic_ncols=True)


def cmd_build(args: argparse.Namespace) -> int:
    from clinical_gym.knowledge_base import KnowledgeBase
    from clinical_gym.knowledge_base.corpus import build_bundled, default_db_path
    from clinical_gym.knowledge_base.fast_index import fast_backend_available
    from clinical_gym.knowledge_base.ingest import build_from_source, read_rows

    if args.source and not args.out:
        raise CLIError("--out is required with --from")
    out = Path(args.out).expanduser() if args.out else default_db_path()
    try:
        if args.source:
            read_rows(args.source)  # a bad source fails here, before the progress bar starts
        with _progress_bar("building") as bar:
            if args.source:
                report = build_from_source(args.source, out, on_progress=bar.update)
            else:
                report = build_bundled(out, on_progress=bar.update)
    except (ValueError, OSError) as e:
        raise CLIError(str(e)) from None
    print(report.summary())
    if report.written and fast_backend_available():  # index for the fast backend now: the first search won't wait
        start = time.perf_counter()
        KnowledgeBase(out, backend="fast")
        print(f"fast search index cached beside it in {time.perf_counter() - start:.1f} s")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from clinical_gym.knowledge_base import KnowledgeBase, KnowledgeBaseError, open_bundled

    if args.k < 1:
        raise CLIError("-k must be at least 1")
    try:
        if args.db:
            kb = KnowledgeBase(Path(args.db).expanduser(), args.backend)
        else:
            with _progress_bar("building the bundled knowledge base (first use)") as bar:
                kb = open_bundled(backend=args.backend, on_progress=bar.update)
    except KnowledgeBaseError as e:
        raise CLIError(str(e)) from None
    if args.category is not None and args.category not in kb.categories():
        raise CLIError(f"unknown category {args.category!r}; choose one of {', '.join(sorted(kb.categories()))}")
    hits = kb.search(args.query, args.k, args.category)
    if not hits:
        print("no passages match")
    for rank, hit in enumerate(hits, 1):
        print(f"{rank}. [{hit.category}] {hit.title}  ({hit.doc_id}, score {hit.score:.2f})")
        print(f"   {hit.snippet}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    kb = sub.add_parser("kb", help="build or search the medical knowledge base")
    kb_sub = kb.add_subparsers(dest="kb_command", parser_class=type(kb), required=True)
    build = kb_sub.add_parser("build", help="build a knowledge base database")
    build.add_argument("--from", dest="source", metavar="SOURCE",
                       help="passages to index: a .jsonl file or a Hugging Face dataset saved with save_to_disk "
                            "(default: the bundled corpus)")
    build.add_argument("--out", metavar="PATH", help="database file to write (default for the bundled corpus: the user cache)")
    build.set_defaults(func=cmd_build)
    search = kb_sub.add_parser("search", help="search a knowledge base")
    search.add_argument("query", help="what to look up, in plain words")
    search.add_argument("-k", type=int, default=5, help="number of passages (default 5)")
    search.add_argument("--category", help="only passages of this category, e.g. drug, guideline, icd10cm")
    search.add_argument("--db", metavar="PATH", help="database file (default: the bundled corpus, built on first use)")
    search.add_argument("--backend", choices=("auto", "fast", "fts5"), default="auto",
                        help="auto: in-memory bm25s index when installed, else SQLite FTS5")
    search.set_defaults(func=cmd_search)
