//! yamba measurement core.
