"""The toolkits every tool domain mounts next to its own: the clinical scoring instruments and the knowledge-search
tools. This is the one place where the knowledge base is merged into the domains' toolkits.

``knowledge`` (a domain env's constructor argument): ``"bundled"`` (default) searches the bundled knowledge base,
opened (and built in the user cache if missing) on the first search, so making an env costs nothing when the agent
never searches; a ``knowledge_base.PassageSearch`` (e.g. a ``SmallCorpusIndex``) searches that index; None mounts
no knowledge tools.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Union

from clinical_gym.knowledge_base import KnowledgeTools, open_bundled
from clinical_gym.tools import ToolKind, Toolkit, tool
from clinical_gym.tools.instruments import InstrumentsToolkit

if TYPE_CHECKING:
    from clinical_gym.tool_env.database import DomainDB
    from clinical_gym.tool_env.tasks import Task
    from clinical_gym.domains.bundled import BundledData
    from clinical_gym.knowledge_base import Passage, PassageSearch, SearchHit

KnowledgeSource = Union["PassageSearch", Literal["bundled"], None]


_OPEN_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _bundled_index() -> PassageSearch:
    return open_bundled()


class BundledIndexOnDemand:
    """The bundled knowledge base, opened on first use (a ``PassageSearch``); one index per process, shared by every
    env (searches are thread-safe; the first open is serialised, so threads never load it twice at once)."""

    def _open(self) -> PassageSearch:
        with _OPEN_LOCK:
            return _bundled_index()

    def search(self, query: str, k: int = 5, category: str | None = None) -> list[SearchHit]:
        return self._open().search(query, k, category)

    def get(self, doc_id: str) -> Passage | None:
        return self._open().get(doc_id)

    def categories(self) -> dict[str, int]:
        return self._open().categories()


class KnowledgeToolkit(Toolkit, KnowledgeTools):
    """``KnowledgeTools`` (search_knowledge, get_passage, search_by_category) mounted as READ tools."""

    search_knowledge = tool(kind=ToolKind.READ)(KnowledgeTools.search_knowledge)
    get_passage = tool(kind=ToolKind.READ)(KnowledgeTools.get_passage)
    search_by_category = tool(kind=ToolKind.READ)(KnowledgeTools.search_by_category)


class BundledDomain:
    """Mixin for a bundled tool domain (list it before ``ToolDomainEnv``): the ``knowledge`` constructor argument, the
    system prompt's policy from the ``policy.md`` of the env's package, the shared toolkits over ``knowledge``, and
    the default database and tasks from the env's ``bundled`` data (``clinical_gym.domains.bundled.BundledData``)."""

    bundled: ClassVar[BundledData[Any]]

    def __init__(self, *args: Any, knowledge: KnowledgeSource = "bundled", **kwargs: Any) -> None:
        self.knowledge = knowledge
        super().__init__(*args, **kwargs)

    @classmethod
    def default_db(cls) -> DomainDB:
        return cls.bundled.bundled_db()

    @classmethod
    def default_tasks(cls) -> list[Task]:
        return list(cls.bundled.tasks())

    @classmethod
    def load_db_file(cls, path: Any) -> DomainDB:
        return cls.bundled.db_type.load(path)

    @classmethod
    def policy_text(cls) -> str:
        package = cls.__module__.rpartition(".")[0]
        return (resources.files(package) / "policy.md").read_text(encoding="utf-8")

    def shared_toolkits(self) -> list[Toolkit]:
        return shared_toolkits(self.knowledge)


def shared_toolkits(knowledge: KnowledgeSource = "bundled") -> list[Toolkit]:
    """The instruments toolkit and, unless ``knowledge`` is None, the knowledge toolkit over ``knowledge``."""
    toolkits: list[Toolkit] = [InstrumentsToolkit()]
    if knowledge is not None:
        index = BundledIndexOnDemand() if knowledge == "bundled" else knowledge
        toolkits.append(KnowledgeToolkit(index))
    return toolkits
