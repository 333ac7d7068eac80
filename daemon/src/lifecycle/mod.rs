//! The daemon's hold on its socket: the lock that makes it the only `synapsed` for a socket
//! ([`lock`]), binding with stale-socket recovery and private permissions ([`socket`]), the peer
//! uid check on every request ([`peer`]) and the signals that stop it ([`signals`]).

pub mod lock;
pub mod peer;
pub mod signals;
pub mod socket;
