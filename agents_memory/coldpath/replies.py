"""What each Cold Path role answers, as pydantic models: the validator and the JSON schema sent.

Each job passes its reply model to :meth:`~agents_memory.coldpath.base.LLM.complete`; the
backend sends :func:`reply_schema` of it as ``response_format`` and validates the answer with
:func:`parse_reply`, so a job only checks what a schema cannot (names that must exist, ids that
must have been supplied).

The schemas are tight (bounded strings, ``maxItems``, enums) and fit OpenAI's strict mode:
``additionalProperties: false`` and every property listed in ``required``. A few fields keep a
default all the same, so that an answer from a server that does not enforce the schema and
leaves them out is still taken (as before); the schema sent carries no ``default`` keyword,
which strict mode refuses.
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema, core_schema


class Reply(BaseModel):
    """Base of every reply: no extra keys, no type coercion (``"3"`` is not a number)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


ReplyT = TypeVar("ReplyT", bound=Reply)


# --- tagger -----------------------------------------------------------------------------------
class TaggerReply(Reply):
    p_tag: Annotated[str, Field(max_length=80)] | None
    """A candidate's name, ``NEW:<slug>``, or ``None``."""
    d_tag: list[Annotated[str, Field(max_length=50)]] = Field(max_length=5)


@lru_cache(maxsize=16)
def registry_tagger_reply(registry: tuple[str, ...]) -> type[TaggerReply]:
    """:class:`TaggerReply` whose ``p_tag`` must be one of the registry's names (or ``None``)."""
    choice: Any = Literal.__getitem__(registry)
    model: type[TaggerReply] = create_model(
        "TaggerReply", __base__=TaggerReply, p_tag=(choice | None, ...)
    )
    return model


# --- librarian --------------------------------------------------------------------------------
class LibrarianReply(Reply):
    core_profile: Annotated[str, Field(max_length=4000)] | None
    """``None`` keeps the stored core profile."""
    sub_profile: Annotated[str, Field(max_length=4000)] | None


# --- clusterer --------------------------------------------------------------------------------
class ClustererReply(Reply):
    summary: str = Field(min_length=1, max_length=4000)


# --- session summariser (the clusterer's role: it writes summaries) ---------------------------
class SessionSummaryReply(Reply):
    title: str = Field(min_length=1, max_length=120)
    """One line naming the session (what was asked)."""
    summary: str = Field(min_length=1, max_length=1500)


Recommendation = Literal["project", "generic", "unsure"]


class DtagCluster(Reply):
    canonical: str = Field(max_length=200)
    members: list[Annotated[str, Field(max_length=200)]] = Field(max_length=50)
    recommendation: Recommendation
    rationale: str = Field(default="", max_length=300)


class DtagClusters(Reply):
    clusters: list[DtagCluster] = Field(max_length=50)


# --- project alias judge ----------------------------------------------------------------------
AliasRelation = Literal[
    "rename", "alias", "same_project", "different", "misfile_suspected", "insufficient"
]


class AliasJudgement(Reply):
    relation: AliasRelation
    same_project: bool
    source_should_alias_target: bool = True
    """``False`` with ``same_project``: the target should become an alias of the source."""
    confidence: float = Field(ge=0, le=1)
    evidence_memory_ids: list[int] = Field(default_factory=list, max_length=20)
    conflict_memory_ids: list[int] = Field(default_factory=list, max_length=20)
    rationale: str = Field(max_length=600)


# --- schema and validation --------------------------------------------------------------------
class _StrictModeSchema(GenerateJsonSchema):
    """Pydantic's JSON schema, shaped for OpenAI strict mode and llama.cpp grammars: every
    property required, no ``default`` or per-field ``title``, a one-value ``Literal`` as
    ``enum`` (as many values are)."""

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        return True

    def field_title_should_be_set(self, schema: CoreSchema) -> bool:
        return False

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        value = super().literal_schema(schema)
        if "const" in value and "enum" not in value:
            value["enum"] = [value.pop("const")]
        return value


@lru_cache(maxsize=64)
def _schema(model: type[Reply]) -> dict[str, Any]:
    return model.model_json_schema(schema_generator=_StrictModeSchema)


def reply_schema(model: type[Reply]) -> dict[str, Any]:
    """The JSON schema sent for ``model`` (a fresh copy the caller may keep)."""
    return copy.deepcopy(_schema(model))


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_reply(text: str | None, model: type[ReplyT]) -> tuple[ReplyT | None, str]:
    """The reply as a valid ``model``, or ``(None, why not)``. A Markdown code fence around
    the JSON is tolerated; nothing else is repaired."""
    if not text or not text.strip():
        return None, "empty answer"
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        return model.model_validate_json(stripped), ""
    except ValidationError as exc:
        return None, describe_errors(exc)


def describe_errors(exc: ValidationError, limit: int = 3) -> str:
    """The first ``limit`` problems, ``"$.path: message"``, joined on one line."""
    parts = []
    for error in exc.errors()[:limit]:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        parts.append(f"${path}: {error['msg']}")
    return "; ".join(parts)
