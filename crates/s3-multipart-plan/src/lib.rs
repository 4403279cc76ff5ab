//! Part planning and the transfer scheduler state machine, sans-IO.
//!
//! Decides how an upload or download is cut into parts and in what order they
//! run; a driver performs the actions it polls and reports results back. It does
//! no I/O, reads no clock and spawns nothing.
//!
//! **Dependency rule:** `std` only.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
