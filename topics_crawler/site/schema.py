"""Medium's GraphQL schema, as the local site and the schema test validate operations with it.

``medium-schema.graphql`` beside this file is a copy of ``../shared/medium-schema.graphql``: the
part of Medium's schema that public operations show (``PagingOptions.limit`` is a
``PaginationLimit``, ``Tag.posts`` pages at most 20 edges…). An operation is checked the way a
GraphQL server checks it before running it: the query parses, passes every validation rule
against the schema (graphql-core's ``validate``: fields, arguments, variable types and where
they are used), names an operation the document defines, and its variables coerce to their
declared types. :func:`operation_errors` gives the validator's messages, empty when valid.

``dropped`` names fields Medium has taken out of its schema (``"Post.mediumUrl"``): the
drift a test can ask the site for (``SiteContent.schema_drift``), answered as Medium would
answer an operation that still selects them.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from graphql import (
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    build_schema,
    parse,
    validate,
)
from graphql.execution.values import get_variable_values

SCHEMA_FILE = Path(__file__).with_name("medium-schema.graphql")


@cache
def medium_schema(dropped: frozenset[str] = frozenset()) -> GraphQLSchema:
    """The schema of ``medium-schema.graphql`` (built once), without the ``Type.field``
    names in ``dropped``."""
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    for name in dropped:
        type_name, _, field_name = name.partition(".")
        text = _without_field(text, type_name, field_name)
    return build_schema(text)


def _without_field(text: str, type_name: str, field_name: str) -> str:
    lines = text.splitlines()
    start = lines.index(f"type {type_name} {{")
    end = lines.index("}", start)
    starts = (f"{field_name}:", f"{field_name}(")
    dropped = {i for i in range(start + 1, end) if lines[i].strip().startswith(starts)}
    dropped |= {i - 1 for i in dropped if lines[i - 1].strip().startswith('"')}  # description
    kept = [line for index, line in enumerate(lines) if index not in dropped]
    if len(kept) == len(lines):
        raise ValueError(f"no field {type_name}.{field_name} in {SCHEMA_FILE.name}")
    return "\n".join(kept)


def operation_errors(operation: Any, dropped: frozenset[str] = frozenset()) -> list[str]:
    """Why Medium would refuse ``operation`` (``{"operationName", "variables", "query"}``)
    before running it, one message per problem, as its validator words them; [] when valid.
    ``dropped``: fields taken out of the schema (see the module docstring)."""
    schema = medium_schema(dropped)
    if not isinstance(operation, dict):
        return [f"An operation must be an object, got {type(operation).__name__}."]
    query = operation.get("query")
    if not isinstance(query, str) or not query.strip():
        return ["Must provide query string."]
    try:
        document = parse(query)
    except GraphQLError as error:
        return [error.message]
    problems = validate(schema, document)
    if problems:
        return [problem.message for problem in problems]
    name = operation.get("operationName")
    definitions = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [d for d in definitions if name is None or (d.name and d.name.value == name)]
    if not chosen:
        return [f"Unknown operation named '{name}'."]
    if len(chosen) > 1:
        return ["Must provide operation name if query contains multiple operations."]
    variables = operation.get("variables") or {}
    if not isinstance(variables, dict):
        return ["Variables must be provided as an Object where each property is a variable value."]
    definitions_used = chosen[0].variable_definitions or ()
    coerced = get_variable_values(schema, definitions_used, variables)
    if isinstance(coerced, list):
        return [problem.message for problem in coerced]
    return []
