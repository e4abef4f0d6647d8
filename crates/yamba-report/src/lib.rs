//! Reading yamba results.
pub mod blocks;
pub mod compare;
pub mod export;
pub mod lmbench;
pub mod ministat;
pub mod plot;
pub mod select;
pub mod stone;
pub mod table;
