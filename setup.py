"""Package layout: the top-level folders install and import inside the ``clinical_gym`` namespace.

``tools/``, ``domains/``, ``trainers/``, ``benchmarks/`` and ``knowledge_base/`` stay at the repository's root but
become ``clinical_gym.tools``, ``clinical_gym.domains``, ... so that a user's own folder of the same name never
shadows them. Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

NAMESPACED = ("tools", "domains", "trainers", "benchmarks", "knowledge_base")

package_dir = {"clinical_gym": "clinical_gym"}
packages = find_packages(include=["clinical_gym", "clinical_gym.*"])
for folder in NAMESPACED:
    package_dir[f"clinical_gym.{folder}"] = folder
    packages += [f"clinical_gym.{folder}"] + [f"clinical_gym.{folder}.{sub}" for sub in find_packages(where=folder)]

# verifiers loads an environment package by the top-level module its id names (vf-eval clinical-gym-verifiers)
package_dir["clinical_gym_verifiers"] = "clinical_gym_verifiers"
packages.append("clinical_gym_verifiers")

setup(package_dir=package_dir, packages=packages)
