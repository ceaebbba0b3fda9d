"""The compiled run engine, built with the system's C compiler at ``pip install .``.

Everything else about the package is in ``pyproject.toml``; setuptools reads only the extension
from here. It uses the Stable ABI (``Py_LIMITED_API`` 3.11, set in the source), so one wheel per
platform serves every CPython >= 3.11.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "ef.evaluation._kernel",
            ["src/ef/evaluation/_kernel.c"],
            depends=["src/ef/evaluation/_columns.c"],  # included by _kernel.c (and shipped in the sdist)
            py_limited_api=True,
            # Without a C compiler the install still succeeds: ef then runs the kernel's pure-Python
            # twin (ef/evaluation/_reference.py) and says so on stderr.
            optional=True,
            # Sanitizer builds (.ci/sanitize) pass their flags through CFLAGS/LDFLAGS.
        )
    ],
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
