"""How a wire shape is declared, written and read: one msgspec `Struct` per request or
response body (docs/architecture.md, "A wire shape").

    class ProdPointed(WireModel):              # fields in snake_case,
        deployment_id: str                     # on the wire in camelCase
    encode(model)                              # -> the JSON-ready dict the platform sends
    decode(data, ProdPointed, what="…")        # -> the model the client returns
    schema_components([ProdPointed, …])        # -> the OpenAPI document's schemas

The platform builds the model and answers it (its JSON writer encodes a `WireModel`); the
client decodes the envelope's `data` into the same model, so a shape is written once and
the served document says what both sides hold to. Decoding ignores members it does not
know, so a newer platform's additions do not break an older client.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from basedb.core.errors import BadResponse

SCHEMA_REF = "#/components/schemas/{name}"

__all__ = ["SCHEMA_REF", "UNSET", "Model", "UnsetType", "WireModel", "decode", "encode",
           "schema_components"]

Model = TypeVar("Model", bound="WireModel")


class WireModel(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A body on the wire: immutable, camelCase on the wire. A subclass says
    `frozen=True, kw_only=True` again (msgspec does not inherit kw_only, and type checkers
    need frozen), so that members with defaults can sit where the wire puts them. A member
    written on the wire even when null is typed `X | None`; one an older platform may
    leave out defaults to `msgspec.UNSET` (and is then not written either)."""


def encode(model: WireModel) -> dict[str, Any]:
    """The model as JSON-ready builtins, its members in declaration order."""
    data = msgspec.to_builtins(model)
    assert isinstance(data, dict)
    return data


def decode(data: Any, model: type[Model], *, what: str) -> Model:
    """`data` read as `model`; BadResponse naming `what` and the member when it is not one
    (the platform answered, but not with the shape this client knows)."""
    try:
        return msgspec.convert(data, model)
    except msgspec.ValidationError as error:
        raise BadResponse(f"{what} answered a body this client cannot read: {error}.",
                          code="RESPONSE_INVALID",
                          hint="Check that the profile points at a basedb platform of a "
                               "matching version (`basedb doctor`).",
                          detail={"shape": model.__name__}) from None


def schema_components(models: Iterable[type[WireModel]]
                      ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each model's JSON Schema as a `$ref` into the OpenAPI components, and the
    components (every model and the models they hold, by class name)."""
    refs, components = msgspec.json.schema_components(tuple(models), ref_template=SCHEMA_REF)
    return list(refs), components
