"""Task generators for the tool domains: unlimited, varied tasks whose worlds and answers are computed, never typed.

A domain's generator (a ``TaskGenerator`` subclass in ``domains/<name>/generator.py``, named by its environment's
``task_generator`` attribute) makes task ``i`` of seed ``s`` as a pure function of ``(s, i)``: a ``Draft`` holding
the ``Task`` and the records it needs (patients, studies, questions, ...). ``generate(n, seed, split)`` assembles
the drafts into one database (the domain's catalogues from its bundled database, with the bundled patients and
other generated collections replaced by the drafts' records) and returns it with the tasks.

Ids and splits: task ``i`` of seed ``s`` has the id ``<id_prefix>-<s>-<i>`` and its split is the hash of that id
(``clinical_gym.cases.split_of``, 20% test), the rule every task set follows. A generator draws each task from
the pool of its split: the test pool holds task kinds, presentations, conditions or classes that the train pool
never shows (``held_out`` says which, per domain), so the test split measures generalisation rather than recall.
``generate(n, split="train")`` gives the first ``n`` train tasks of the seed, so a smaller set is a prefix of a
larger one.

Where the tasks come from for an environment (``gym.make(ENV, tasks=...)``, ``clinical-gym bench --tasks``):

* ``"generated:N"``: N generated tasks of ``task_seed`` (default 0) and ``split``;
* a folder holding ``tasks.json`` and optionally ``db.json`` (what ``clinical-gym tasks generate`` and
  ``clinical-gym tools convert`` write; ``clinical_gym.tool_env.task_folder``);
* a task file (JSON) read by the environment's ``load_task_file``.

``validate_generated`` checks a generated set: the framework's checks (ids and splits, patients, options, tools
and arguments, rule-graded assertions, no ticket naming its answer), the domain's ``check`` hook (values inside
physiological ranges, flags agreeing with reference ranges, answers recomputed from the record), and the scripted
expert (``ExpertToolPolicy``) scoring exactly 1.0 with no safety violation.

``Wording`` and the helpers below give several phrasings per task kind, so a policy cannot key on one template.
"""

from __future__ import annotations

import hashlib
import importlib
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from clinical_gym.cases.loading import SPLITS, split_of
from clinical_gym.tool_env.database import DomainDB, canonical_json
from clinical_gym.tool_env.tasks import Task

if TYPE_CHECKING:
    from clinical_gym.tool_env.env import ToolDomainEnv

GENERATED = "generated"
MAX_TASKS = 100_000  # per generated set: ids of the domains' records have room for this many
_SPEC = re.compile(r"^generated:(?P<n>.*)$")


# -- arguments ---------------------------------------------------------------------------------------------------------
def parse_generated(spec: str) -> int | None:
    """N from a ``"generated:N"`` task spec; None when ``spec`` is not one; ValueError (one line) for a bad N."""
    found = _SPEC.match(spec.strip())
    if found is None:
        return None
    return check_count(found["n"], f"in {spec.strip()!r}")


def check_count(n: Any, where: str = "") -> int:
    """``n`` as a task count from 1 to ``MAX_TASKS``; ValueError saying what is wrong otherwise."""
    text = str(n).strip()
    where = f" {where}" if where else ""
    if isinstance(n, bool) or not re.fullmatch(r"[+-]?\d+", text):
        raise ValueError(f"the number of tasks{where} must be a whole number, got {text!r}")
    value = int(text)
    if not 1 <= value <= MAX_TASKS:
        raise ValueError(f"the number of tasks{where} must be from 1 to {MAX_TASKS:,}, got {value}")
    return value


def check_seed(seed: Any) -> int:
    """``seed`` as a task seed (an integer >= 0, or its decimal text); ValueError saying what is wrong otherwise."""
    if isinstance(seed, bool) or isinstance(seed, float) or not re.fullmatch(r"\+?\d+", str(seed).strip()):
        raise ValueError(f"the task seed must be a whole number >= 0, got {seed!r}")
    return int(str(seed).strip())


def check_split(split: str | None) -> str | None:
    """``split`` if it is None, "train" or "test"; ValueError otherwise."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)} (or None for both)")
    return split


# -- what a generator makes --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Draft:
    """One generated task and the records its world needs: ``records`` maps a database collection (one of the
    generator's ``collections``) to the items to add. ``ids`` are the identifiers and personal names minted for
    it (patient id, name, accession, ...): left out when tasks are compared by content."""

    task: Task
    records: Mapping[str, Sequence[Any]]
    ids: tuple[str, ...] = ()

    def content_hash(self) -> str:
        """SHA-256 of the task and its records with the task id, ``ids`` and the split removed: two drafts that
        differ only in who and where are the same task."""
        text = canonical_json({"task": self.task.model_dump(mode="json", exclude={"id"}),
                               "records": {k: [r.model_dump(mode="json") for r in v]
                                           for k, v in sorted(self.records.items())}})
        for name in sorted({self.task.id, *self.ids}, key=len, reverse=True):
            if name:
                text = text.replace(name, "#")
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class GeneratedTasks:
    """A generated task set: the tasks, the database holding their records, and how it was made."""

    env_id: str
    n: int
    seed: int
    split: str | None
    db: DomainDB
    tasks: list[Task]
    drafts: list[Draft] = field(repr=False, default_factory=list)

    @property
    def meta(self) -> dict[str, Any]:
        """What ``clinical-gym tasks generate`` records next to the tasks (``generation.json``)."""
        return {"env": self.env_id, "generated": self.n, "seed": self.seed, "split": self.split or "all"}


class TaskGenerator(ABC):
    """The generator of one tool domain (see the module docstring).

    Subclasses set ``env_id``, ``id_prefix``, ``held_out`` (what the test split holds that train never shows),
    ``collections`` (the database collections whose bundled content the generated records replace: name -> the
    item attribute that keys a dict collection, or None for a list), and implement ``draft``; ``check`` is the
    domain's validator hook.
    """

    env_id: ClassVar[str]
    id_prefix: ClassVar[str]
    held_out: ClassVar[str]
    collections: ClassVar[Mapping[str, str | None]]

    @abstractmethod
    def draft(self, rng: np.random.Generator, index: int, task_id: str, split: str) -> Draft:
        """Task ``index`` (id ``task_id``) of the ``split`` pool, drawn with ``rng`` only."""

    def check(self, task: Task, db: DomainDB) -> list[str]:
        """The domain's validation of one task in its world: problems found (empty: valid)."""
        return []

    @abstractmethod
    def pool_key(self, task: Task) -> str:
        """What the split pools are made of, for this task (its presentation, condition, kind, ...): no key of a
        test task is ever the key of a train task."""

    # -- the bundled catalogues ----------------------------------------------------------------------------------------
    def base_db(self) -> DomainDB:
        """The bundled database (the generated world keeps its catalogues and replaces ``collections``)."""
        return _env_class(self.env_id).default_db()

    # -- ids and indices -----------------------------------------------------------------------------------------------
    def task_id(self, seed: int, index: int) -> str:
        return f"{self.id_prefix}-{seed}-{index}"

    def indices(self, n: int, seed: int, split: str | None) -> list[int]:
        """The first ``n`` task indices of ``seed`` whose ids fall in ``split`` (all indices for None)."""
        if split is None:
            return list(range(n))
        found: list[int] = []
        index = 0
        while len(found) < n:
            if split_of(self.task_id(seed, index)) == split:
                found.append(index)
            index += 1
        return found

    def drafts(self, n: int, seed: int = 0, split: str | None = None) -> list[Draft]:
        """The drafts of the first ``n`` tasks of ``seed`` in ``split``."""
        n, seed, split = check_count(n), check_seed(seed), check_split(split)
        drafts = []
        for index in self.indices(n, seed, split):
            task_id = self.task_id(seed, index)
            drafts.append(self.draft(np.random.default_rng([seed, index]), index, task_id, split_of(task_id)))
        return drafts

    def generate(self, n: int, seed: int = 0, split: str | None = None) -> GeneratedTasks:
        """``n`` tasks of ``seed`` in ``split`` ("train", "test" or None for both) with the database they run on."""
        drafts = self.drafts(n, seed, split)
        return GeneratedTasks(self.env_id, n, check_seed(seed), split, self.world(drafts), [d.task for d in drafts],
                              drafts)

    def world(self, drafts: Iterable[Draft]) -> DomainDB:
        """The base database with ``collections`` holding the drafts' records instead of the bundled ones (the
        database's own validators run on the result)."""
        base = self.base_db()
        merged: dict[str, Any] = {name: ({} if key else []) for name, key in self.collections.items()}
        for draft in drafts:
            for name, items in draft.records.items():
                key = self.collections[name]
                if key is None:
                    merged[name].extend(items)
                    continue
                for item in items:
                    item_key = getattr(item, key)
                    if item_key in merged[name]:
                        raise ValueError(f"{self.env_id} generator: two records share {name} key {item_key!r}")
                    merged[name][item_key] = item
        fields = {name: getattr(base, name) for name in type(base).model_fields}
        return type(base)(**{**fields, **merged})


# -- finding a domain's generator --------------------------------------------------------------------------------------
def _env_class(env_id: str) -> type[ToolDomainEnv]:
    import gymnasium as gym

    import clinical_gym  # noqa: F401  (registers the ids)

    try:
        entry = gym.spec(env_id).entry_point
    except gym.error.Error:
        raise ValueError(f"unknown environment {env_id!r}") from None
    if not isinstance(entry, str):
        return entry  # type: ignore[return-value]
    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def generator_for(env: str | type[ToolDomainEnv]) -> TaskGenerator:
    """The task generator of an environment (an id or its class); ValueError naming the ones that have one."""
    cls = _env_class(env) if isinstance(env, str) else env
    path = getattr(cls, "task_generator", None)
    if not path:
        name = env if isinstance(env, str) else getattr(cls, "__name__", str(cls))
        raise ValueError(f"{name} has no task generator; generators exist for {', '.join(generator_env_ids())}")
    return _generator(path)


@lru_cache(maxsize=None)
def _generator(path: str) -> TaskGenerator:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)()  # type: ignore[no-any-return]


def generator_env_ids() -> list[str]:
    """The registered tool environments that have a task generator."""
    from clinical_gym.registration import ENVIRONMENTS

    return [e.id for e in ENVIRONMENTS if e.family == "tool" and getattr(_env_class(e.id), "task_generator", None)]


def generated_tasks(tasks: Any, db: DomainDB | None, env_class: type[ToolDomainEnv], *, split: str | None = None,
                    seed: Any = None) -> tuple[list[Task], DomainDB] | None:
    """The tasks and database of an environment's ``tasks="generated:N"`` (``seed`` default 0), or None when
    ``tasks`` is something else (then ``seed`` must be None). ValueError (one line) for a bad N or seed, a ``db``
    given with generated tasks, or an environment without a generator. A set is generated once per process and
    shared by every env that asks for it (nothing changes it: episodes work on copies)."""
    n = parse_generated(tasks) if isinstance(tasks, str) else None
    if n is None:
        if seed is not None:
            raise ValueError("task_seed applies only to tasks='generated:N'")
        return None
    if db is not None:
        raise ValueError("db cannot be given with generated tasks: they come with the records they need")
    generator = generator_for(env_class)
    generated = cached_generation(f"{type(generator).__module__}:{type(generator).__name__}", n,
                                  0 if seed is None else check_seed(seed), None if split == "all" else check_split(split))
    return list(generated.tasks), generated.db


@lru_cache(maxsize=16)
def cached_generation(generator: str, n: int, seed: int, split: str | None) -> GeneratedTasks:
    """``generate(n, seed, split)`` of the generator at ``"module:Class"``, made once per process."""
    return _generator(generator).generate(n, seed, split)


# -- validation --------------------------------------------------------------------------------------------------------
def validate_generated(generated: GeneratedTasks, generator: TaskGenerator | None = None, *, play: bool = True,
                       env: ToolDomainEnv | None = None) -> list[str]:
    """Every problem found in a generated set, as ``"<task id>: <problem>"`` (empty: valid). See the module
    docstring for the checks; ``play=False`` skips the scripted expert's episode."""
    from clinical_gym.rewards.episode import contains_term
    from clinical_gym.tool_env.policies import ExpertToolPolicy, run_episode

    generator = generator or generator_for(generated.env_id)
    if env is None:
        env = _env_class(generated.env_id)(db=generated.db, tasks=generated.tasks, knowledge=None)  # type: ignore[call-arg]
    problems: list[str] = []
    seen: set[str] = set()
    patients = getattr(generated.db, "patients", None)
    if isinstance(patients, list):
        patients = {getattr(p, "patient_id", None) for p in patients}
    for task in generated.tasks:
        found: list[str] = []
        if task.id in seen:
            found.append("duplicate task id")
        seen.add(task.id)
        if generated.split is not None and task.split != generated.split:
            found.append(f"in split {task.split}, not {generated.split}")
        if task.patient_id is not None and patients is not None and task.patient_id not in patients:
            found.append(f"patient {task.patient_id} is not in the database")
        if not any(a.rule is not None for a in task.assertions) or any(a.rule is None for a in task.assertions):
            found.append("every assertion needs a rule (and there must be one)")
        gold = [task.options[task.answer]] if task.options else [task.answer, *task.answer_aliases]
        found += [f"the ticket names the answer {g!r}" for g in gold if contains_term(task.ticket, g)]
        env.reset(options={"task_id": task.id})
        for action in task.expected_actions:
            if action.name not in env.tool_kinds:
                found.append(f"expected action {action.name!r} is not a tool")
                continue
            try:
                env.toolkit.spec(action.name).arguments.validate_python(action.arguments)
            except ValueError as e:
                found.append(f"expected action {action.name!r}: {str(e).splitlines()[0]}")
        found += generator.check(task, generated.db)
        if play and not found:
            reward, info = run_episode(env, ExpertToolPolicy(task), options={"task_id": task.id})
            outcome = info["outcome"]
            if abs(reward - 1.0) > 1e-9 or outcome["violation_names"]:
                failed = [c["name"] for c in outcome["tool_calls"] if not c["ok"]]
                found.append(f"the scripted expert scores {reward:.3f} (scores {outcome['scores']}, violations "
                             f"{outcome['violation_names']}, failed calls {failed})")
        problems += [f"{task.id}: {p}" for p in found]
    return problems


# -- wording -----------------------------------------------------------------------------------------------------------
def pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    """One of ``options``, uniformly."""
    return options[int(rng.random() * len(options))]


def chance(rng: np.random.Generator, p: float) -> bool:
    """True with probability ``p``."""
    return bool(rng.random() < p)


def between(rng: np.random.Generator, low: float, high: float, decimals: int = 0) -> float | int:
    """A value uniform in ``[low, high]``: an int for ``decimals=0`` (both ends included), else rounded."""
    if decimals == 0:
        return int(low) + int(rng.random() * (int(high) - int(low) + 1))
    return round(low + (high - low) * rng.random(), decimals)


def sample(rng: np.random.Generator, items: Sequence[Any], k: int) -> list[Any]:
    """``k`` distinct items of ``items`` (all of them when fewer), in a random order (a partial Fisher-Yates shuffle
    drawing ``k`` uniforms)."""
    pool = list(items)
    k = min(k, len(pool))
    for i in range(k):
        j = i + int(rng.random() * (len(pool) - i))
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


class Wording:
    """Several phrasings per task kind: ``say(rng, kind, **fields)`` picks one of the kind's templates (``str.format``
    fields; a phrasing may leave some of them out) and fills it. Each kind needs at least two phrasings."""

    def __init__(self, **templates: Sequence[str]) -> None:
        for kind, options in templates.items():
            if len(options) < 2 or len(set(options)) < len(options):
                raise ValueError(f"wording {kind!r} needs at least two different phrasings")
        self.templates = {k: tuple(v) for k, v in templates.items()}

    def fields(self, kind: str) -> set[str]:
        """Every field the phrasings of ``kind`` use."""
        return {name for template in self.templates[kind] for name in _fields(template)}

    def say(self, rng: np.random.Generator, kind: str, **fields: Any) -> str:
        return pick(rng, self.templates[kind]).format(**fields)

    def kinds(self) -> list[str]:
        return list(self.templates)


def _fields(template: str) -> list[str]:
    import string

    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def lettered(rng: np.random.Generator, correct: str, distractors: Sequence[str], letters: str = "ABCDE",
             shuffle: bool = True) -> tuple[dict[str, str], str]:
    """Options from the correct text and its distractors (shuffled unless ``shuffle`` is False: the correct one
    first), lettered from A, and the correct letter."""
    texts = [correct, *distractors]
    if len(set(texts)) != len(texts) or len(texts) > len(letters):
        raise ValueError(f"options must be distinct and at most {len(letters)}: {texts}")
    order = rng.permutation(len(texts)) if shuffle else np.arange(len(texts))
    options = {letters[i]: texts[int(j)] for i, j in enumerate(order)}
    return options, next(k for k, v in options.items() if v == correct)


# -- conditions ----------------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def condition_pools() -> dict[str, tuple[Any, ...]]:
    """The disease knowledge table split into "train" and "test" conditions by a hash of each condition's id (about
    20% test), so that every generator sampling conditions holds out the same ones."""
    from clinical_gym.cases.disease_table import disease_table

    table = disease_table()
    return {split: tuple(d for d in table if split_of(f"condition:{d.id}") == split) for split in SPLITS}


@lru_cache(maxsize=1)
def case_sources() -> dict[str, Any]:
    """A case generator (``clinical_gym.cases.generator.CaseGenerator``) over each pool of ``condition_pools``,
    built once per process and shared by the generators that sample patients from the table."""
    from clinical_gym.cases.generator import CaseGenerator

    return {split: CaseGenerator(diseases) for split, diseases in condition_pools().items()}


# -- people ------------------------------------------------------------------------------------------------------------
FIRST_NAMES: dict[str, tuple[str, ...]] = {
    "female": ("Amara", "Grace", "Priya", "Hannah", "Mei", "Fatima", "Chloe", "Aisha", "Sofia", "Joanna", "Ngozi",
               "Eilidh", "Rosa", "Yasmin", "Helen", "Keiko", "Lucy", "Maryam", "Olga", "Bethan", "Zainab", "Irene",
               "Carmen", "Siobhan", "Anjali", "Freya", "Leila", "Margaret", "Thandiwe", "Ewa"),
    "male": ("Daniel", "Tomasz", "Kwame", "Rahul", "James", "Omar", "Liam", "Wei", "Mohammed", "Callum", "Jorge",
             "Ade", "Graham", "Ibrahim", "Sean", "Hiroshi", "Arjun", "Peter", "Yusuf", "Dylan", "Mateo", "Kofi",
             "Andrew", "Rhys", "Vikram", "Stefan", "Emeka", "Harold", "Luca", "Niall"),
}
SURNAMES: tuple[str, ...] = (
    "Okafor", "Whitfield", "Patel", "Nowak", "Chen", "Hughes", "Mensah", "Murray", "Khan", "Fernandes", "O'Brien",
    "Adeyemi", "Campbell", "Rossi", "Ahmed", "Tanaka", "Evans", "Kowalski", "Singh", "Osei", "MacLeod", "Haddad",
    "Novak", "Byrne", "Gupta", "Lindqvist", "Abara", "Morgan", "Silva", "Yilmaz", "Doherty", "Kaur", "Petrov",
    "Walsh", "Nkemelu", "Baker", "Moreno", "Reid", "Jansen", "Qureshi")


def person_name(rng: np.random.Generator, sex: str) -> str:
    """A first name and surname for a person of ``sex`` ("female" or "male")."""
    return f"{pick(rng, FIRST_NAMES[sex])} {pick(rng, SURNAMES)}"
