//! The daemon's hold on its socket: the lock that makes it the only `synapsed` for a socket
//! ([`lock`]), binding with stale-socket recovery and private permissions ([`socket`]), the peer
//! uid check on every request ([`peer`]), the signals that stop it ([`signals`]), the clean-up
//! of processes ([`orphans`]) and files ([`debris`]) a killed predecessor left, the owner of
//! every task it spawns ([`tasks`]), and memory given back after something large went away
//! ([`memory`]).

pub mod debris;
pub mod lock;
pub mod memory;
pub mod orphans;
pub mod peer;
pub mod signals;
pub mod socket;
