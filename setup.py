"""Builds the solver's compiled core; everything else is in pyproject.toml.

The extension is optional: where it cannot be compiled, ``accordion.solver`` runs its
pure-Python path with the same verdicts, only slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "accordion.solver._csolver",
            sources=["service/accordion/solver/_csolver.c"],
            extra_compile_args=["-O2", "-std=c99"],
            optional=True,
        )
    ]
)
