-- Each assignment's use policy (hub.UsePolicy): when a use of the
-- credential by the workspace's sessions needs its owner's approval.
-- Assignments made before it allowed every use, which 'always' keeps.
-- Like the types and capabilities in 0004, the adapter checks the values.
ALTER TABLE credential_assignments ADD COLUMN use_policy TEXT NOT NULL DEFAULT 'always';
