"""What capture keeps beside the rows: per-file cursors, pauses and tombstones."""

MINE = "IS NOT DISTINCT FROM (SELECT am_me())"
"""The condition on a capture row's ``user_id`` that makes it the connection's person's
(migration 0023): a team member's own, or the schema owner's (``NULL``) for the owner, whom
row-level security does not filter."""
