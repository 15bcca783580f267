// The topics of the live stream (the contract's LiveTopic), named once for
// the dashboard: a module that follows or tells apart a topic imports its
// name from here. They are the Hub's topic table (hub/topics.go), in its
// order; a Go test of package web reads this file and fails when the two
// differ, or when another module spells a topic name itself.

export const DOCUMENT = 'document';
export const INVENTORY = 'inventory';
export const CONVERSATION = 'conversation';
export const ACTIVITY = 'activity';
export const WORKTREES = 'worktrees';

/** Every topic, in the table's order. */
export const TOPICS = Object.freeze([DOCUMENT, INVENTORY, CONVERSATION, ACTIVITY, WORKTREES]);
