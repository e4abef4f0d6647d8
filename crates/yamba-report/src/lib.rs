//! Reading yamba results.
pub mod between;
pub mod blocks;
pub mod compare;
pub mod export;
pub mod headline;
pub mod html;
pub mod lmbench;
pub mod machine;
pub mod plotting;
pub mod predict;
pub mod select;
pub mod table;
pub mod timings;
