//! The pure part of top-k: no Redis, no clock reads (time is passed in).

pub mod heavy_keeper;
pub mod redisbloom;
