-- 0013: which turns a new-tag suggestion came from, so forgetting them takes the name too.
--
-- The tagger proposes a new project name from one turn at a time; `source_ids` collects the
-- ids of the turns it proposed the name for. NULL means "unknown" (written before this
-- version, imported, or opened by the promoter from counts): a forget leaves those alone.
ALTER TABLE project_tag_new_suggestions ADD COLUMN IF NOT EXISTS source_ids BIGINT[];
