//! The pure part of count-min sketches: no Redis, no clock reads (time is
//! passed in).

pub mod redisbloom;
pub mod sketch;
