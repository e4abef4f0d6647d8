//! Reading yamba results.
pub mod ministat;
pub mod table;
pub mod compare;
pub mod export;
pub mod plot;
pub mod select;
pub mod blocks;
pub mod stone;
