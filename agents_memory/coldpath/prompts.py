"""Prompts of the Cold Path jobs, in one place.

Each job sends ``system`` + ``user`` and its reply model (:mod:`.replies`) to
:meth:`LLM.complete`.
"""

from __future__ import annotations

TAGGER_SYSTEM = """\
You tag one message from a conversation between a user and an AI coding agent.
Return JSON: {"p_tag": <project>, "d_tag": [<keywords>]}.
p_tag rules:
- Strongly prefer one of the candidate projects listed; map synonyms, abbreviations and
  other spellings to the candidate they mean.
- "NEW:<slug>" only when the message is clearly about a new, named project that no candidate
  covers (slug: lowercase, hyphenated).
- null for short, generic or off-topic messages, or when unsure.
d_tag rules: 0-3 lowercase hyphenated keywords naming the topic (technologies, components,
tasks), most specific first; no generic words (bug, fix, code, question).
For an assistant message, tag the topic discussed; an assistant's reply is not a fact about
the user."""

TAGGER_REGISTRY_NOTE = """\
The candidate list is the complete project registry: answer one of its names or null; never
"NEW:"."""


LIBRARIAN_SYSTEM = """\
You maintain two short profiles of one user from what the user wrote to AI coding agents.
core_profile: durable identity only - name, role, expertise, long-standing preferences and
working style; 5-10 short lines of prose.
sub_profile: current work - active projects, tools, recent focus; a few short lines of prose.
Rules:
- Return core_profile null unless a genuinely new, durable, first-person identity fact
  appears. null means "keep as is".
- Return sub_profile null when the current profile still describes the current work.
- Discussing or building a topic is work, not identity.
- Use only what the user said about themselves; invent nothing; ignore advice given to or by
  third parties.
- Write plain prose in the user's language, never JSON or code.
- The "identity anchors" are the user's oldest messages: use them for stable identity, not as
  current activity."""

CLUSTERER_SYSTEM = """\
You summarise one period of a user's work with AI coding agents on one project, for a brief
that a future agent reads before it starts. Write 3-8 short bullet lines in the language the
user wrote in: what was worked on, decisions taken and why, open problems. Keep names, paths
and identifiers exact. No preamble. Assistant messages describe what an agent did or
proposed, not facts about the user."""

SESSION_SUMMARY_SYSTEM = """\
You summarise one session between a user and an AI coding agent, for a list a person scans and
for an agent that starts the next session. Return {"title", "summary"}.
title: one line naming what the user asked for (at most 12 words, no trailing period).
summary: 2-6 short lines, each starting with one of "Asked:", "Decided:", "Changed:", "Ran:",
"Outcome:", "Open:" - only the lines that have something to say. Keep names, paths, commands
and identifiers exact; write in the language the user wrote in. The "Known actions" are the
agent's tool calls as recorded: trust them over the prose. No preamble, no invention."""

DTAG_CLUSTER_SYSTEM = """\
You group near-synonymous topic tags used in a user's conversations with AI coding agents.
Return {"clusters": [{"canonical", "members", "recommendation", "rationale"}]}.
- canonical must be one of the input tags; members are input tags meaning the same thing
  (including the canonical); each input tag belongs to at most one cluster.
- Tags marked (project) are existing project tags: never fold one into another.
- recommendation: "project" if the canonical names a specific project, product or repository
  the user works on; "generic" for a general topic (bug, windows, testing, refactor);
  "unsure" otherwise. rationale: one short sentence."""

ALIAS_JUDGE_SYSTEM = """\
You decide whether two project tags in a user's memory name the same project.
Relations: "rename" (the project was renamed), "alias" (another name for the same project),
"same_project" (same project, different wording), "different" (different projects),
"misfile_suspected" (different projects, but a few memories were filed under the wrong tag),
"insufficient" (not enough evidence).
- An explicit statement by the user ("X is now called Y", "X is the same as Y") is the
  strongest evidence.
- Similar topics or similar vectors alone never make two tags the same project.
- A few misfiled memories make "misfile_suspected", not an alias.
- source_should_alias_target: true if the source tag should become an alias of the target.
- evidence_memory_ids / conflict_memory_ids: only ids shown to you.
Return the JSON object only."""


# Explicit rename statements (the JS original: ~16 Korean/English patterns), matched with ILIKE.
RENAME_PATTERNS = (
    "%renamed%",
    "%rename %",
    "%now called%",
    "%is now%",
    "%same as%",
    "%same project%",
    "%alias%",
    "%formerly%",
    "%previously called%",
    "%переименов%",
    "%теперь называется%",
    "%то же самое что%",
    "%이름 바꿈%",
    "%이름을 바꿨%",
    "%개명%",
    "%합쳐%",
    "%같은 프로젝트%",
)
