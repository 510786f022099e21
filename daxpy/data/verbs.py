"""Verb declarations: what a filter adds to pipelines and to ``daxpy run --step``.

A filter module declares its verb once (:class:`Verb`); ``Node`` methods of
:mod:`daxpy.pipeline`, the step verbs of ``daxpy run`` and their ``--help``
are generated from this registry, so the control layer never names a
specific verb.

Examples
--------
>>> import daxpy.filters
>>> verb = registered_verbs()["bias_add"]
>>> verb.usage, verb.parse("bias_add=1,2", "1,2")
('bias_add=B1[,B2...]', {'bias': [1.0, 2.0]})
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import ArgumentError


def _no_argument(step: str, argument: str) -> dict:
    """The keyword arguments of a verb without a step argument: none.

    Examples
    --------
    >>> _no_argument("magnitude", "")
    {}
    """
    return {}


@dataclass(frozen=True)
class Verb:
    """Declaration of one verb: a pipeline method and a ``daxpy run`` step.

    Attributes
    ----------
    name : str
        The ``Node`` method name and the step's verb (``point_to_cell``).
    method : callable
        The ``Node`` method itself, ``method(node, ...)`` returning a node;
        its signature and docstring are what users see.
    order : int
        Rank in listings (``daxpy run --help``); lower comes first.
    help : str
        One line for ``daxpy run --help``.
    argument : str or None
        Metavar of the step's argument after ``=`` (None: the step takes none).
    required : bool
        Whether the step must have that argument.
    parse : callable
        ``parse(step, argument)`` returns the method's keyword arguments from
        the step's text; it raises :class:`~daxpy.errors.ArgumentError` naming
        the step.
    on : {"node", "pipeline", "pyvista"}
        What the method is attached to: ``"node"`` (a step chained from one
        field, also a ``daxpy run`` step), ``"pipeline"`` (a stage that reads
        several fields by name, such as ``combine``; not a step) or
        ``"pyvista"`` (a method of PyVista's ``mesh.daxpy`` accessor,
        ``method(mesh, ...)`` with the signature of the PyVista filter it
        stands for: :mod:`daxpy.accessor`).
    """

    name: str
    method: Callable
    order: int
    help: str
    argument: str | None = None
    required: bool = False
    parse: Callable[[str, str], dict] = _no_argument
    on: str = "node"

    @property
    def usage(self) -> str:
        """The step as written on the command line (``gradient[=point|cell]``).

        Examples
        --------
        >>> Verb("magnitude", print, 0, "norm").usage
        'magnitude'
        """
        if self.argument is None:
            return self.name
        written = f"={self.argument}"
        return self.name + (written if self.required else f"[{written}]")


_VERBS: dict[tuple[str, str], Verb] = {}


def register_verb(verb: Verb) -> Verb:
    """Add a verb declaration to the registry (called by filter modules).

    Raises
    ------
    ArgumentError
        If another verb already has that name.

    Examples
    --------
    >>> import daxpy.filters
    >>> verb = registered_verbs()["magnitude"]
    >>> register_verb(verb) is verb
    True
    """
    # A node verb and a PyVista method may share a name (contour): one per kind.
    known = _VERBS.get((verb.on, verb.name))
    if known is not None and known != verb:
        raise ArgumentError(f"verb {verb.name!r} is already declared")
    _VERBS[(verb.on, verb.name)] = verb
    return verb


def registered_verbs(on: str = "node") -> dict[str, Verb]:
    """The declared verbs attached to ``on`` (``"node"``: the steps;
    ``"pipeline"``), by name, in listing order (import the filters first).

    Examples
    --------
    >>> import daxpy.filters
    >>> list(registered_verbs())[:2], list(registered_verbs("pipeline"))
    (['gradient', 'magnitude'], ['combine'])
    """
    return {v.name: v for v in sorted(_VERBS.values(), key=lambda v: (v.order, v.name))
            if v.on == on}


def parse_step(step: str) -> tuple[str, dict]:
    """Split a ``VERB[=ARG][:NAME]`` step into its verb and the method's keyword
    arguments; ``:NAME`` names the step's result (``result=NAME``).

    Raises
    ------
    ArgumentError
        For an unknown verb, or a missing, unexpected or malformed argument.

    Examples
    --------
    >>> import daxpy.filters
    >>> parse_step("magnitude:speed")
    ('magnitude', {'result': 'speed'})
    >>> parse_step("magnitude=1")
    Traceback (most recent call last):
    ...
    daxpy.errors.ArgumentError: step 'magnitude=1': magnitude takes no argument
    """
    text, colon, result = step.rpartition(":") if ":" in step else (step, "", "")
    if colon and not result.strip():
        raise ArgumentError(f"step {step!r}: a result name must follow ':' (VERB:NAME)")
    name, equals, argument = text.partition("=")
    verbs = registered_verbs()
    if name not in verbs:
        raise ArgumentError(f"step {step!r}: the verb must be one of {list(verbs)}")
    verb = verbs[name]
    if verb.argument is None and equals:
        raise ArgumentError(f"step {step!r}: {name} takes no argument")
    if verb.required and not argument:
        raise ArgumentError(f"step {step!r}: {name} needs an argument ({name}=...)")
    options = verb.parse(step, argument)
    return name, {**options, "result": result} if colon else options
