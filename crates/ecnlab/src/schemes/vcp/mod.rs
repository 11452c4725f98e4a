//! VCP (in progress).
